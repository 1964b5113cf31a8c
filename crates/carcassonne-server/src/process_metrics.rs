//! The standard `process_*` series of Prometheus clients, and the build-info series, written as
//! text at each scrape (appended to the recorder's exposition by [`crate::meters`]).
//!
//! The process series are read from `/proc/self` on Linux and absent elsewhere; a file that
//! cannot be read leaves its series out rather than failing the scrape. They are written here
//! rather than registered on the recorder because `process_cpu_seconds_total` is a counter of
//! fractional seconds, which the recorder's integer counters cannot hold.

use std::fmt::Write;

/// The `process_*` series written on Linux (a scrape's test checks each one).
pub const SERIES: [&str; 7] = [
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_open_fds",
    "process_max_fds",
    "process_start_time_seconds",
    "process_threads",
];

/// The build-info series: `carcassonne_build_info{version="…"} 1`. Only the package version is
/// known at build time without a build script.
pub fn write_build_info(out: &mut String) {
    write_family(
        out,
        "carcassonne_build_info",
        "gauge",
        "Always 1; the labels name the server's build (the package version).",
        &format!("{{version=\"{}\"}} 1", env!("CARGO_PKG_VERSION")),
    );
}

/// The `process_*` series of this process (Linux only).
pub fn write_process(out: &mut String) {
    #[cfg(target_os = "linux")]
    linux::write(out);
    #[cfg(not(target_os = "linux"))]
    let _ = out;
}

/// One family: its HELP and TYPE lines and one sample; `rest` is what follows the name
/// (labels, if any, and the value).
fn write_family(out: &mut String, name: &str, kind: &str, help: &str, rest: &str) {
    let _ = write!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{rest}\n\n"
    );
}

#[cfg(target_os = "linux")]
mod linux {
    use super::write_family;

    /// Clock ticks per second in `/proc/self/stat` (`USER_HZ`, 100 on every Linux ABI this
    /// server builds for; reading `sysconf` would take `unsafe` or a libc binding).
    const TICKS: f64 = 100.0;

    /// Writes every series whose source could be read.
    pub fn write(out: &mut String) {
        let mut family = |name: &str, kind: &str, help: &str, value: Option<f64>| {
            if let Some(v) = value {
                write_family(out, name, kind, help, &format!(" {v}"));
            }
        };
        let stat = std::fs::read_to_string("/proc/self/stat").ok();
        let stat = stat.as_deref().and_then(Stat::parse);
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        family(
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            stat.map(|s| (s.utime + s.stime) as f64 / TICKS),
        );
        family(
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            kib(&status, "VmRSS:").map(|k| k * 1024.0),
        );
        family(
            "process_virtual_memory_bytes",
            "gauge",
            "Virtual memory size in bytes.",
            stat.map(|s| s.vsize as f64),
        );
        family(
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            std::fs::read_dir("/proc/self/fd")
                .ok()
                .map(|d| d.count() as f64),
        );
        family(
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors (the soft limit).",
            std::fs::read_to_string("/proc/self/limits")
                .ok()
                .and_then(|l| max_fds(&l)),
        );
        let boot = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| boot_time(&s));
        family(
            "process_start_time_seconds",
            "gauge",
            "Start time of the process since unix epoch in seconds.",
            stat.zip(boot)
                .map(|(s, boot)| boot + s.starttime as f64 / TICKS),
        );
        family(
            "process_threads",
            "gauge",
            "Number of OS threads in the process.",
            stat.map(|s| s.threads as f64),
        );
    }

    /// The fields of `/proc/self/stat` the series need.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Stat {
        pub utime: u64,
        pub stime: u64,
        pub threads: u64,
        pub starttime: u64,
        pub vsize: u64,
    }

    impl Stat {
        /// Fields are counted after the command name, which is in parentheses and may itself
        /// hold spaces and parentheses: the text after the last `)` starts at field 3 (state).
        pub(super) fn parse(text: &str) -> Option<Stat> {
            let (_, rest) = text.rsplit_once(')')?;
            let f: Vec<&str> = rest.split_whitespace().collect();
            // Field n of proc(5) is f[n - 3].
            let field = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
            Some(Stat {
                utime: field(14)?,
                stime: field(15)?,
                threads: field(20)?,
                starttime: field(22)?,
                vsize: field(23)?,
            })
        }
    }

    /// A `Name:   123 kB` line of `/proc/self/status`, in KiB.
    pub(super) fn kib(status: &str, name: &str) -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().next()?.parse().ok()
    }

    /// The soft limit of `Max open files` in `/proc/self/limits` (absent when `unlimited`).
    pub(super) fn max_fds(limits: &str) -> Option<f64> {
        let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
        let rest = &line["Max open files".len()..];
        rest.split_whitespace().next()?.parse().ok()
    }

    /// `btime` of `/proc/stat`: the boot time in seconds since the epoch.
    pub(super) fn boot_time(stat: &str) -> Option<f64> {
        let line = stat.lines().find(|l| l.starts_with("btime "))?;
        line["btime ".len()..].trim().parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_files_parse() {
        let stat = "1234 (tokio (rt) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 \
                    7 0 4242 123456789 900 18446744073709551615";
        let s = linux::Stat::parse(stat).expect("a stat line");
        assert_eq!(
            (s.utime, s.stime, s.threads, s.starttime, s.vsize),
            (250, 50, 7, 4242, 123_456_789)
        );
        assert_eq!(
            linux::kib("Name:\tserver\nVmRSS:\t   2048 kB\n", "VmRSS:"),
            Some(2048.0)
        );
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n";
        assert_eq!(linux::max_fds(limits), Some(1024.0));
        assert_eq!(
            linux::max_fds("Max open files            unlimited            unlimited  files"),
            None
        );
        assert_eq!(linux::boot_time("cpu 1 2\nbtime 1700000000\n"), Some(1.7e9));
    }

    /// On Linux every series is there, each with its HELP and TYPE, and the figures are sane.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_every_series() {
        let mut out = String::new();
        write_process(&mut out);
        write_build_info(&mut out);
        for name in SERIES {
            assert!(out.contains(&format!("# HELP {name} ")), "{name} in\n{out}");
            assert!(out.contains(&format!("# TYPE {name} ")), "{name} in\n{out}");
            let value: f64 = out
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} has a value in\n{out}"));
            assert!(value >= 0.0, "{name} {value}");
        }
        let value = |name: &str| -> f64 {
            out.lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_default()
        };
        assert!(value("process_resident_memory_bytes") > 1e6);
        assert!(value("process_threads") >= 1.0);
        assert!(value("process_open_fds") >= 3.0);
        assert!(value("process_start_time_seconds") > 1.5e9);
        let build = format!(
            "carcassonne_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        );
        assert!(out.contains(&build), "{out}");
    }
}
