//! A private throwaway Postgres (initdb and pg_ctl on a free port in a temp dir), for tests that
//! reconfigure, stop or restart their database: the shared cluster is never touched. Its
//! programs are `PG_BIN`'s, or Debian's for Postgres 15.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Postgres's programs are: `PG_BIN`, or Debian's place for Postgres 15.
pub fn pg_bin() -> PathBuf {
    std::env::var_os("PG_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
}

/// Runs a command, failing the test with its output if it fails.
pub fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether initdb and pg_ctl (and every program of `also`) are here; without them the test is
/// skipped with a notice, or fails under `CI=true`.
pub fn tools_present(also: &[&str]) -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let pg = pg_bin().join("initdb").is_file() && pg_bin().join("pg_ctl").is_file();
    let missing: Vec<&str> = also
        .iter()
        .copied()
        .filter(|p| Command::new(p).arg("version").output().is_err())
        .collect();
    if pg && missing.is_empty() {
        return true;
    }
    assert!(
        !ci,
        "CI=true but initdb/pg_ctl in {} ({pg}) or {missing:?} is missing",
        pg_bin().display()
    );
    eprintln!(
        "NOTICE: initdb/pg_ctl (in {}, set PG_BIN) or {missing:?} missing; skipping",
        pg_bin().display()
    );
    false
}

/// The private Postgres: made by [`PrivatePg::init`], started by [`PrivatePg::start`], stopped
/// (immediately) on drop.
pub struct PrivatePg {
    dir: tempfile::TempDir,
    data: PathBuf,
    root: bool,
    pub port: u16,
    running: bool,
}

impl PrivatePg {
    /// A new data directory on a free port, listening on 127.0.0.1 only, with trust auth.
    pub fn init() -> PrivatePg {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        let data = dir.path().join("pgdata");
        let pg = PrivatePg {
            dir,
            data,
            root,
            port: std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port(),
            running: false,
        };
        pg.own_files();
        run(pg
            .as_owner(&pg_bin().join("initdb"))
            .args(["-U", "postgres", "--auth=trust", "-D"])
            .arg(&pg.data));
        pg.configure(&format!(
            "port = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n",
            pg.port,
            pg.dir().display()
        ));
        pg
    }

    /// The temp dir (the data directory is in it; so may be a test's certificates).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Gives the temp dir's files to the `postgres` user when the test runs as root.
    pub fn own_files(&self) {
        if self.root {
            run(Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(self.dir.path()));
        }
    }

    /// Appends settings to `postgresql.conf`.
    pub fn configure(&self, settings: &str) {
        let path = self.data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&path).expect("postgresql.conf");
        text.push_str(settings);
        std::fs::write(&path, text).expect("postgresql.conf");
    }

    /// A command run as the `postgres` user when this test runs as root (initdb refuses root).
    fn as_owner(&self, program: &Path) -> Command {
        if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    }

    fn pg_ctl(&self) -> Command {
        let mut c = self.as_owner(&pg_bin().join("pg_ctl"));
        c.arg("-D").arg(&self.data);
        c
    }

    /// Starts the server and waits until it accepts connections.
    pub fn start(&mut self) {
        run(self
            .pg_ctl()
            .arg("-l")
            .arg(self.dir.path().join("pg.log"))
            .args(["-w", "start"]));
        self.running = true;
    }

    /// Stops the server at once (`immediate`: clients are cut, as by a crash).
    pub fn stop(&mut self) {
        run(self.pg_ctl().args(["-m", "immediate", "-w", "stop"]));
        self.running = false;
    }

    /// The URL of database `db` as `postgres` over TCP.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        if self.running {
            let _ = self.pg_ctl().args(["-m", "immediate", "stop"]).output();
        }
    }
}
