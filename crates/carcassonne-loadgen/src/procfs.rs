//! Sampling processes through `/proc`: CPU time, context switches, resident memory and age.

use crate::error::LoadError;
use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat` (USER_HZ, 100 on Linux).
pub(crate) const CLK_TCK: f64 = 100.0;

/// utime + stime of a process, in clock ticks.
pub(crate) fn cpu_ticks(pid: u32) -> Result<u64, LoadError> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat"))?)
}

pub(crate) fn cpu_ticks_self() -> Result<u64, LoadError> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat")?)
}

/// Fields 14 and 15 (utime, stime) of a `stat` line; the command name (field 2) may hold spaces,
/// so fields are counted after its closing parenthesis.
pub(crate) fn parse_stat(stat: &str) -> Result<u64, LoadError> {
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| LoadError::Args("unreadable /proc stat".into()))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): utime is field 14, index 11.
    let num = |i: usize| -> Result<u64, LoadError> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| LoadError::Args("unreadable /proc stat".into()))
    };
    Ok(num(11)? + num(12)?)
}

/// How long a process has been running (`/proc/<pid>/stat`'s start time against
/// `/proc/uptime`, at the kernel's 100 ticks per second).
pub(crate) fn process_age(pid: u32) -> Result<Duration, LoadError> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let uptime = std::fs::read_to_string("/proc/uptime")?;
    let bad = || LoadError::Args(format!("cannot read the start time of pid {pid}"));
    // Fields after the command's closing parenthesis; the start time is field 22 overall.
    let after = stat.rsplit_once(')').ok_or_else(bad)?.1;
    let ticks: f64 = after
        .split_whitespace()
        .nth(19)
        .and_then(|t| t.parse().ok())
        .ok_or_else(bad)?;
    let up: f64 = uptime
        .split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .ok_or_else(bad)?;
    Ok(Duration::from_secs_f64((up - ticks / 100.0).max(0.0)))
}

/// Context switches of a process's threads, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Switches {
    /// The thread blocked (waiting for a lock, a socket, a futex, the disk).
    pub(crate) voluntary: u64,
    /// The scheduler took the core away (another thread's turn).
    pub(crate) involuntary: u64,
}

/// The context switches of every thread of a process now, from each thread's
/// `/proc/<pid>/task/<tid>/status` (the process's own `status` counts its first thread only). A
/// thread that ended during the run takes its count with it: the figure is a floor. Best effort:
/// an unreadable thread counts nothing.
pub(crate) fn context_switches(pid: u32) -> Switches {
    let mut sum = Switches::default();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return sum;
    };
    for task in tasks.flatten() {
        if let Ok(status) = std::fs::read_to_string(task.path().join("status")) {
            let t = parse_switches(&status);
            sum.voluntary += t.voluntary;
            sum.involuntary += t.involuntary;
        }
    }
    sum
}

/// `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` of a `status` text (0 if absent).
pub(crate) fn parse_switches(status: &str) -> Switches {
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim_start_matches(':').trim().parse().ok())
            .unwrap_or(0)
    };
    Switches {
        voluntary: field("voluntary_ctxt_switches"),
        involuntary: field("nonvoluntary_ctxt_switches"),
    }
}

/// Resident set size of a process (`VmRSS` of `/proc/<pid>/status`), in bytes.
pub(crate) fn rss_bytes(pid: u32) -> Result<u64, LoadError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse_rss(&status).ok_or_else(|| LoadError::Args(format!("no VmRSS for pid {pid}")))
}

/// `VmRSS` of a `/proc/<pid>/status` text, in bytes.
pub(crate) fn parse_rss(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_name() -> Result<(), LoadError> {
        let line = "4242 (my server) S 1 2 3 4 5 6 7 8 9 10 250 31 0 0 20 0";
        assert_eq!(parse_stat(line)?, 281);
        Ok(())
    }

    #[test]
    fn resident_memory_is_read_in_bytes() {
        let status = "Name:\tserver\nVmPeak:\t  9000 kB\nVmRSS:\t  1234 kB\nThreads:\t3\n";
        assert_eq!(parse_rss(status), Some(1234 * 1024));
        assert_eq!(parse_rss("Name:\tserver\n"), None);
    }

    #[test]
    fn context_switches_are_read_from_a_thread_status() {
        let status = "Name:\tserver\nThreads:\t3\nvoluntary_ctxt_switches:\t120\n\
                      nonvoluntary_ctxt_switches:\t7\n";
        let want = Switches {
            voluntary: 120,
            involuntary: 7,
        };
        assert_eq!(parse_switches(status), want);
        assert_eq!(parse_switches("Name:\tserver\n"), Switches::default());
        // This test's own process has at least one thread with a status to read.
        let own = context_switches(std::process::id());
        assert!(own.voluntary + own.involuntary > 0, "{own:?}");
    }
}
