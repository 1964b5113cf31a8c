//! `server backup --to FILE`: an online copy of the SQLite store. `VACUUM INTO` reads the
//! database in one read transaction, so the copy is the state at one commit (no match half
//! written), while a running server goes on writing through the WAL: a reader never blocks the
//! writer nor waits for it. Postgres is backed up with `pg_dump` (docs/operations.md).

use sqlx::ConnectOptions as _;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a backup was not made.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{0} exists: a backup never overwrites a file, choose another name")]
    TargetExists(PathBuf),
    #[error("the folder of {0} does not exist")]
    NoFolder(PathBuf),
    #[error("no database at {0} (check --data-dir)")]
    NoDatabase(PathBuf),
    #[error(
        "the store is Postgres (DATABASE_URL is set): back it up with pg_dump, such as \
         `pg_dump --format=custom --file=carcassonne.dump \"$DATABASE_URL\"` (docs/operations.md)"
    )]
    Postgres,
    #[error("the copy failed: {0}")]
    Db(#[from] sqlx::Error),
    #[error("cannot sync the copy to disk: {0}")]
    Io(#[from] std::io::Error),
}

/// Copies the SQLite database `db` to `to`, which must not exist; the copy is synced to disk
/// before this returns.
pub async fn sqlite_backup(db: &Path, to: &Path) -> Result<(), BackupError> {
    if !db.is_file() {
        return Err(BackupError::NoDatabase(db.to_path_buf()));
    }
    if to.exists() {
        return Err(BackupError::TargetExists(to.to_path_buf()));
    }
    if let Some(dir) = to.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(BackupError::NoFolder(to.to_path_buf()));
    }
    // The server's own settings (WAL, a busy wait): opening the file must not change its
    // journal mode, and a checkpoint in progress only delays the start of the read.
    let mut conn = SqliteConnectOptions::new()
        .filename(db)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(30))
        .connect()
        .await?;
    sqlx::query("VACUUM INTO ?1")
        .bind(to.to_string_lossy().into_owned())
        .execute(&mut conn)
        .await?;
    sqlx::Connection::close(conn).await?;
    std::fs::File::open(to)?.sync_all()?;
    Ok(())
}
