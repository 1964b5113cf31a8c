//! Schema upgrades on stored data: a store at an older migration is filled through the store's
//! own API, then migrated to the latest, and must give back every row as it was.

use crate::common::*;
use server::store::{CommandRow, MatchStatus, Store};
use sqlx::Connection as _;
use sqlx::migrate::Migrator;
use std::path::Path;

on_both_stores!(migrations_0010_0011_keep_every_command);

/// Appends commands to a store at 0009. On SQLite through the store; on Postgres by hand, as
/// the store wrote them then (its columns were `jsonb` until 0011, and the store now writes
/// text).
async fn append_at_0009(
    url: Option<&str>,
    store: &Store,
    id: uuid::Uuid,
    records: &[CommandRow],
) -> Result<(), String> {
    let Some(url) = url else {
        return store
            .append(id, records, None)
            .await
            .map_err(|e| e.to_string());
    };
    let mut conn = sqlx::PgConnection::connect(url)
        .await
        .map_err(|e| e.to_string())?;
    let mut tx = conn.begin().await.map_err(|e| e.to_string())?;
    for r in records {
        sqlx::query(
            "INSERT INTO commands \
             (match_id, seq, seat, command_id, command, events, patch, created_at) \
             VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8)",
        )
        .bind(id)
        .bind(r.seq as i64)
        .bind(i16::from(r.seat))
        .bind(&r.command_id)
        .bind(&r.command)
        .bind(&r.events)
        .bind(&r.patch)
        .bind(r.created_at)
        .execute(&mut *tx)
        .await
        .map_err(|e| e.to_string())?;
    }
    tx.commit().await.map_err(|e| e.to_string())
}

/// A match's commands in a store at 0009: on Postgres read by hand, with the `jsonb` columns
/// rendered as text, as the store read them then.
async fn commands_at_0009(url: Option<&str>, store: &Store, id: uuid::Uuid) -> Vec<CommandRow> {
    use sqlx::Row as _;
    let Some(url) = url else {
        return store.commands(id, 0).await.expect("read");
    };
    let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres");
    sqlx::query(
        "SELECT seq, seat, command_id, command::text AS command, events::text AS events, \
         patch::text AS patch, created_at FROM commands WHERE match_id = $1 ORDER BY seq",
    )
    .bind(id)
    .fetch_all(&mut conn)
    .await
    .expect("read")
    .iter()
    .map(|r| CommandRow {
        seq: r.get::<i64, _>("seq") as u64,
        seat: r.get::<i16, _>("seat") as u8,
        command_id: r.get("command_id"),
        command: r.get("command"),
        events: r.get("events"),
        patch: r.get("patch"),
        created_at: r.get("created_at"),
    })
    .collect()
}

/// A migrator of this store's migrations up to `version` only (copied to `dir`).
async fn migrator_upto(kind: &str, version: i64, dir: &Path) -> Migrator {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../migrations")
        .join(kind);
    for entry in std::fs::read_dir(&src).expect("migrations") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("name");
        let v: i64 = name
            .split('_')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("version");
        if v <= version {
            std::fs::copy(&path, dir.join(name)).expect("copy");
        }
    }
    Migrator::new(dir).await.expect("migrator")
}

/// Migrations 0010 (the UNIQUE (match_id, seat, command_id) constraint dropped; on SQLite the
/// `commands` table rebuilt) and 0011 (on Postgres the commands' JSON columns become text): a
/// store with matches and commands at 0009 keeps every row, every column included, and its
/// primary key; a repeated command id is no longer the store's to refuse; a new command is
/// stored byte for byte.
async fn migrations_0010_0011_keep_every_command(db: &TestDb) {
    let config = db.config();
    let old = tempfile::tempdir().expect("temp dir");
    let migrator = migrator_upto(db.kind(), 9, old.path()).await;
    assert_eq!(migrator.iter().count(), 9, "migrations 0001 to 0009");
    match config.store.url() {
        Some(url) => {
            let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres");
            migrator.run(&mut conn).await.expect("migrate to 0009");
            conn.close().await.expect("close");
        }
        None => {
            std::fs::create_dir_all(&config.store.data_dir).expect("data dir");
            let options = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(config.store.data_dir.join("server.db"))
                .create_if_missing(true)
                .foreign_keys(true);
            let mut conn = sqlx::SqliteConnection::connect_with(&options)
                .await
                .expect("sqlite");
            migrator.run(&mut conn).await.expect("migrate to 0009");
            conn.close().await.expect("close");
        }
    }

    // Filled at 0009 through the store (opened without migrating).
    let store = match config.store.url() {
        Some(url) => Store::open_postgres(url).await,
        None => Store::open_sqlite(&config.store.data_dir.join("server.db")).await,
    }
    .expect("open at 0009");
    let rec = |seq: u64, seat: u8, cid: &str| CommandRow {
        seq,
        seat,
        command_id: cid.into(),
        command: format!(r#"{{"type":"pass","n":{seq}}}"#),
        events: format!(r#"[{{"type":"passed","seq":{seq}}}]"#),
        // Rows from before 0002 have no patch: keep one such row.
        patch: (seq != 2).then(|| format!(r#"[{{"op":"replace","path":"/turn","value":{seq}}}]"#)),
        created_at: chrono::DateTime::from_timestamp_micros(1_780_000_000_000_000 + seq as i64)
            .expect("time"),
    };
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id = stored_match(&store).await;
        let records: Vec<CommandRow> = (1..=5u64)
            .map(|seq| rec(seq, (seq % 2) as u8, &format!("c{seq}")))
            .collect();
        append_at_0009(config.store.url(), &store, id, &records)
            .await
            .expect("append");
        ids.push(id);
    }
    let mut before = Vec::new();
    for id in &ids {
        before.push(commands_at_0009(config.store.url(), &store, *id).await);
    }
    assert!(before.iter().all(|rows| rows.len() == 5));
    // The constraint is still there at 0009.
    assert!(
        append_at_0009(config.store.url(), &store, ids[0], &[rec(6, 1, "c1")])
            .await
            .is_err(),
        "0009 refuses a repeated command id"
    );

    store.migrate().await.expect("migrate to the latest");
    for (id, rows) in ids.iter().zip(&before) {
        assert_eq!(&store.commands(*id, 0).await.expect("read"), rows, "{id}");
        let m = store.load_match(*id).await.expect("load").expect("match");
        assert_eq!(m.status, MatchStatus::Active);
    }
    assert!(
        store
            .seat_for_token(&format!("{}-1", ids[1]))
            .await
            .expect("seat")
            .is_some()
    );
    // The primary key (match_id, seq) still holds; the command id's constraint is gone.
    assert!(
        store
            .append(ids[0], &[rec(5, 1, "again")], None)
            .await
            .is_err(),
        "a stored seq is refused"
    );
    store
        .append(ids[0], &[rec(6, 1, "c1")], None)
        .await
        .expect("a repeated command id at a new seq");
    // Stored as written, byte for byte (Postgres's jsonb, before 0011, reordered and respaced).
    assert_eq!(
        store.commands(ids[0], 5).await.expect("read"),
        vec![rec(6, 1, "c1")]
    );
    store.close().await;
    // Opening it again finds nothing left to migrate.
    let again = Store::open(config.store.url(), &config.store.data_dir)
        .await
        .expect("reopen");
    assert_eq!(again.commands(ids[2], 0).await.expect("read"), before[2]);
    again.close().await;
}
