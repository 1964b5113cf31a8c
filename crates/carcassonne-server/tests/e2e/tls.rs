//! Postgres over TLS: a private throwaway Postgres (initdb and pg_ctl on a free port in a temp
//! dir, `ssl = on` with a certificate from a test CA made by the `openssl` command), so that the
//! shared cluster is never reconfigured. The store opens with `sslmode=require` and with
//! `sslmode=verify-full` and the CA, and `verify-full` with another CA is refused with an error
//! that names the certificate. Skipped with a notice when initdb, pg_ctl or openssl is missing,
//! unless `CI=true`.

use crate::common::private_pg::{PrivatePg, run, tools_present};
use server::Store;
use sqlx::Connection as _;
use std::path::Path;
use std::process::Command;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_connects_over_tls_and_verifies_the_server_certificate() {
    if !tools_present(&["openssl"]) {
        return;
    }
    let mut pg = PrivatePg::init();
    let certs = pg.dir().to_path_buf();
    certificates(&certs, "server");
    certificates(&certs, "other");
    pg.own_files();
    pg.configure(&format!(
        "ssl = on\nssl_cert_file = '{dir}/server.pem'\nssl_key_file = '{dir}/server.key'\n",
        dir = certs.display()
    ));
    pg.start();
    let port = pg.port;
    let store_dir = tempfile::tempdir().expect("a dir for the store");

    let ca = certs.join("server-ca.pem");
    let other = certs.join("other-ca.pem");
    let require = format!("postgres://postgres@127.0.0.1:{port}/postgres?sslmode=require");
    let verify = format!(
        "postgres://postgres@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={}",
        ca.display()
    );
    for url in [&require, &verify] {
        let store = Store::open(Some(url), store_dir.path())
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
    let refused = Store::open(Some(&wrong), store_dir.path()).await;
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.to_lowercase().contains("certificate"),
        "verify-full with another CA: {message:?}"
    );
    drop(pg);
}
