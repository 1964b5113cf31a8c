//! `server`: runs the Carcassonne server until SIGTERM or ctrl-c; `server backup --to FILE`
//! copies its SQLite store.

use server::config::Command;
use server::store::backup::{BackupError, sqlite_backup};
use server::{Config, init_tracing, run};
use std::process::ExitCode;
use tokio::net::TcpListener;
use tracing::error;

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::from_env();
    if let Err(e) = config.validate() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    init_tracing(config.log_format);
    if let Some(Command::Backup { to }) = &config.command {
        return backup(&config, to).await;
    }
    // The web files' compressed bodies, made before the first page is asked for.
    std::thread::spawn(server::web::warm);
    let listener = match TcpListener::bind(config.bind).await {
        Ok(l) => l,
        Err(e) => {
            error!(bind = %config.bind, error = %e, "cannot listen");
            return ExitCode::FAILURE;
        }
    };
    match run(listener, config, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!(error = %e, "server failed");
            ExitCode::FAILURE
        }
    }
}

/// `server backup`: the SQLite store copied to `to`; Postgres is refused with the pg_dump line.
async fn backup(config: &Config, to: &std::path::Path) -> ExitCode {
    let db = config.store.data_dir.join("server.db");
    let done = match config.store.url() {
        Some(url) if !url.trim().is_empty() => Err(BackupError::Postgres),
        _ => sqlite_backup(&db, to).await,
    };
    match done {
        Ok(()) => {
            tracing::info!(from = %db.display(), to = %to.display(), "backup written");
            ExitCode::SUCCESS
        }
        Err(e) => {
            error!(error = %e, "no backup");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on ctrl-c or, on Unix, SIGTERM (what `docker stop` and systemd send).
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
