//! Postgres over TLS: a private throwaway Postgres (initdb and pg_ctl on a free port in a temp
//! dir, `ssl = on` with a certificate from a test CA made by the `openssl` command), so that the
//! shared cluster is never reconfigured. The store opens with `sslmode=require` and with
//! `sslmode=verify-full` and the CA, and `verify-full` with another CA is refused with an error
//! that names the certificate. Skipped with a notice when initdb, pg_ctl or openssl is missing,
//! unless `CI=true`.

use server::Store;
use sqlx::Connection as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Postgres's programs are: `PG_BIN`, or Debian's place for Postgres 15.
fn pg_bin() -> PathBuf {
    std::env::var_os("PG_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
}

/// Runs a command, failing the test with its output if it fails.
fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A command run as the `postgres` user when this test runs as root (initdb refuses root).
fn as_owner(root: bool, program: &Path) -> Command {
    if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// A CA and a certificate it signs for `localhost` and 127.0.0.1, in `dir`: `<name>-ca.pem`,
/// `<name>.pem`, `<name>.key`.
fn certificates(dir: &Path, name: &str) {
    let at = |f: &str| dir.join(f);
    run(Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={name} test CA")])
        .arg("-keyout")
        .arg(at(&format!("{name}-ca.key")))
        .arg("-out")
        .arg(at(&format!("{name}-ca.pem"))));
    run(Command::new("openssl")
        .args([
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
        ])
        .arg("-keyout")
        .arg(at(&format!("{name}.key")))
        .arg("-out")
        .arg(at(&format!("{name}.csr"))));
    std::fs::write(at("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").expect("san.ext");
    run(Command::new("openssl")
        .args(["x509", "-req", "-days", "2", "-CAcreateserial"])
        .arg("-in")
        .arg(at(&format!("{name}.csr")))
        .arg("-CA")
        .arg(at(&format!("{name}-ca.pem")))
        .arg("-CAkey")
        .arg(at(&format!("{name}-ca.key")))
        .arg("-extfile")
        .arg(at("san.ext"))
        .arg("-out")
        .arg(at(&format!("{name}.pem"))));
}

/// The private Postgres: stopped (immediately) on drop.
struct PrivatePg {
    pg_ctl: PathBuf,
    data: PathBuf,
    root: bool,
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = as_owner(self.root, &self.pg_ctl)
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

/// Whether the programs the test needs are here; without them the test is skipped, or fails
/// under `CI=true`.
fn tools_present() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let openssl = Command::new("openssl").arg("version").output().is_ok();
    let pg = pg_bin().join("initdb").is_file() && pg_bin().join("pg_ctl").is_file();
    if openssl && pg {
        return true;
    }
    assert!(
        !ci,
        "CI=true but openssl ({openssl}) or initdb/pg_ctl in {} ({pg}) is missing",
        pg_bin().display()
    );
    eprintln!(
        "NOTICE: openssl or initdb/pg_ctl (in {}, set PG_BIN) missing; skipping the TLS test",
        pg_bin().display()
    );
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_connects_over_tls_and_verifies_the_server_certificate() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    certificates(dir.path(), "server");
    certificates(dir.path(), "other");
    let data = dir.path().join("pgdata");
    if root {
        run(Command::new("chown")
            .args(["-R", "postgres:"])
            .arg(dir.path()));
    }
    run(as_owner(root, &pg_bin().join("initdb"))
        .args(["-U", "postgres", "--auth=trust", "-D"])
        .arg(&data));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let conf = format!(
        "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{dir}'\n\
         ssl = on\nssl_cert_file = '{dir}/server.pem'\nssl_key_file = '{dir}/server.key'\n",
        dir = dir.path().display()
    );
    let conf_path = data.join("postgresql.conf");
    let mut text = std::fs::read_to_string(&conf_path).expect("postgresql.conf");
    text.push_str(&conf);
    std::fs::write(&conf_path, text).expect("postgresql.conf");
    let pg = PrivatePg {
        pg_ctl: pg_bin().join("pg_ctl"),
        data: data.clone(),
        root,
    };
    run(as_owner(root, &pg.pg_ctl)
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(dir.path().join("pg.log"))
        .args(["-w", "start"]));

    let ca = dir.path().join("server-ca.pem");
    let other = dir.path().join("other-ca.pem");
    let require = format!("postgres://postgres@127.0.0.1:{port}/postgres?sslmode=require");
    let verify = format!(
        "postgres://postgres@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={}",
        ca.display()
    );
    for url in [&require, &verify] {
        let store = Store::open(Some(url), dir.path())
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(store.ready().await.is_ok(), "{url}");
        store.close().await;
        // The session is encrypted.
        let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
        let ssl: bool =
            sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .fetch_one(&mut conn)
                .await
                .expect("pg_stat_ssl");
        assert!(ssl, "{url}: not encrypted");
        let _ = conn.close().await;
    }

    // Another CA: refused, and the error says why.
    let wrong = format!(
        "postgres://postgres@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={}",
        other.display()
    );
    let refused = Store::open(Some(&wrong), dir.path()).await;
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.to_lowercase().contains("certificate"),
        "verify-full with another CA: {message:?}"
    );
    drop(pg);
}
