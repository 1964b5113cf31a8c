//! Ownership leases with fencing (cluster mode, Postgres only), on a real Postgres: a lease is
//! taken, refused to another node while held, taken over after its expiry under the next epoch,
//! released for a hand-over; an append under a stale epoch writes nothing; and a takeover and an
//! append under way never both write under different epochs.

use crate::common::*;
use server::store::leases::{Lease, acquire_on};
use server::store::{
    Append, CommandRow, Fence, LeaseError, LeaseKey, Leases, MatchStatus, Store, StoreError,
};
use sqlx::Connection as _;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Longest wait for something the test waits for (an expiry, a blocked statement).
const PATIENCE: Duration = Duration::from_secs(30);

/// A fresh Postgres database, the store on it (migrated) and its leases; `None` without a
/// Postgres to test on.
async fn postgres() -> Option<(TestDb, Store, Leases)> {
    let db = TestDb::postgres().await?;
    let config = db.config();
    let store = Store::open(config.store.url(), &config.store.data_dir)
        .await
        .expect("open");
    let leases = store.leases().expect("Postgres has leases");
    Some((db, store, leases))
}

/// The test database's URL.
fn url(db: &TestDb) -> String {
    db.config().store.url().expect("a Postgres URL").to_string()
}

fn record(seq: u64) -> CommandRow {
    CommandRow {
        seq,
        seat: (seq % 2) as u8,
        command_id: format!("c{seq}"),
        command: format!(r#"{{"type":"pass","n":{seq}}}"#),
        events: format!(r#"[{{"type":"passed","seq":{seq}}}]"#),
        patch: None,
        created_at: chrono::Utc::now(),
    }
}

/// Command `seq` of match `id` under `fence`, finishing the match and setting its wake time (so
/// a refused append must leave the match's row as it was, too).
async fn append(store: &Store, id: Uuid, seq: u64, fence: &Fence) -> Result<(), StoreError> {
    let append = Append {
        records: vec![record(seq)],
        status: Some(MatchStatus::Finished),
        wake: Some(Some(1_000 + seq as i64)),
        fence: Some(std::sync::Arc::new(fence.clone())),
    };
    store.write(id, append).await
}

/// What is stored of match `id`: its commands' count, its status and its wake time.
async fn stored(store: &Store, id: Uuid) -> (usize, MatchStatus, Option<i64>) {
    let commands = store.commands(id, 0).await.expect("commands").len();
    let m = store.load_match(id).await.expect("load").expect("match");
    (commands, m.status, m.wake_at)
}

fn assert_fenced(result: Result<(), StoreError>, id: Uuid, fence: &Fence) {
    match result {
        Err(StoreError::Fenced {
            id: at,
            node,
            epoch,
        }) => {
            assert_eq!((at, node.as_str(), epoch), (id, &*fence.node, fence.epoch));
        }
        other => panic!("expected Fenced, got {other:?}"),
    }
}

fn assert_held_by(result: Result<Lease, LeaseError>, holder: &str) {
    match result {
        Err(LeaseError::Held { node, .. }) => assert_eq!(node, holder),
        other => panic!("expected Held by {holder}, got {other:?}"),
    }
}

/// Waits until nobody holds the lease (its expiry passed by the database's clock).
async fn wait_expired(leases: &Leases, key: LeaseKey) {
    let started = Instant::now();
    while leases.owner(key).await.expect("owner").is_some() {
        assert!(started.elapsed() < PATIENCE, "the lease never expired");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `n` statements of this database whose text contains `text` wait for a lock.
async fn wait_blocked(conn: &mut sqlx::PgConnection, text: &str, n: i64) {
    let started = Instant::now();
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' \
             AND strpos(query, $1) > 0",
        )
        .bind(text)
        .fetch_one(&mut *conn)
        .await
        .expect("pg_stat_activity");
        if waiting >= n {
            return;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "not {n} statement(s) with {text:?} wait for a lock"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A node holds its lease and renews it; another is refused while it holds; after its expiry
/// the other takes it over under the next epoch; the first one's renewal no longer returns it,
/// and its append under the old epoch is refused with nothing written, while the new owner's
/// is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_expires_and_is_taken_over_under_the_next_epoch_which_fences_the_old_owner() {
    let Some((_db, store, leases)) = postgres().await else {
        return;
    };
    let id = stored_match(&store).await;
    let key = LeaseKey::of_match(id);
    let ttl = Duration::from_millis(300);

    let a = leases.acquire(key, "a", ttl).await.expect("a takes it");
    assert_eq!((a.node.as_str(), a.epoch), ("a", 1));
    assert_eq!(leases.owner(key).await.expect("owner"), Some(a.clone()));
    let again = leases.acquire(key, "a", ttl).await.expect("a renews it");
    assert_eq!(again.epoch, 1, "the holder keeps its epoch");
    assert!(again.expires_at >= a.expires_at);
    assert_held_by(leases.acquire(key, "b", ttl).await, "a");
    append(&store, id, 1, &a.fence()).await.expect("a writes");
    assert_eq!(
        leases.renew_all("a", ttl, &[key]).await.expect("renew"),
        [key].into()
    );

    wait_expired(&leases, key).await;
    let b = leases.acquire(key, "b", ttl).await.expect("b takes over");
    assert_eq!((b.node.as_str(), b.epoch), ("b", 2));
    assert!(
        leases
            .renew_all("a", ttl, &[key])
            .await
            .expect("renew")
            .is_empty(),
        "a's lease is lost"
    );
    assert_eq!(
        leases.renew_all("b", ttl, &[key]).await.expect("renew"),
        [key].into()
    );

    let before = stored(&store, id).await;
    assert_eq!(before, (1, MatchStatus::Finished, Some(1_001)));
    assert_fenced(append(&store, id, 2, &a.fence()).await, id, &a.fence());
    assert_eq!(stored(&store, id).await, before, "nothing of a's append");
    append(&store, id, 2, &b.fence()).await.expect("b writes");
    assert_eq!(stored(&store, id).await.0, 2);
    // A fence for another node under the right epoch is stale too.
    let forged = Fence {
        node: "c".into(),
        epoch: b.epoch,
    };
    assert_fenced(append(&store, id, 3, &forged).await, id, &forged);
    store.close().await;
}

/// A released lease is free at once: another node takes it under the next epoch without
/// waiting for its expiry, and the releasing node's appends under its epoch are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_lease_is_taken_at_once_under_the_next_epoch() {
    let Some((_db, store, leases)) = postgres().await else {
        return;
    };
    let id = stored_match(&store).await;
    let key = LeaseKey::of_match(id);
    let long = Duration::from_secs(600);
    let a = leases.acquire(key, "a", long).await.expect("a takes it");
    assert_held_by(leases.acquire(key, "b", long).await, "a");
    assert!(
        !leases.release(key, "b", a.epoch).await.expect("release"),
        "only the holder releases"
    );
    assert!(
        !leases
            .release(key, "a", a.epoch + 1)
            .await
            .expect("release"),
        "under its epoch"
    );
    assert!(leases.release(key, "a", a.epoch).await.expect("release"));
    assert!(
        !leases.release(key, "a", a.epoch).await.expect("release"),
        "once"
    );
    assert_eq!(leases.owner(key).await.expect("owner"), None);
    assert!(
        leases
            .renew_all("a", long, &[key])
            .await
            .expect("renew")
            .is_empty()
    );

    let b = leases
        .acquire(key, "b", long)
        .await
        .expect("b takes it at once");
    assert_eq!(b.epoch, a.epoch + 1);
    assert_eq!(leases.owner(key).await.expect("owner"), Some(b.clone()));
    assert_fenced(append(&store, id, 1, &a.fence()).await, id, &a.fence());
    append(&store, id, 1, &b.fence()).await.expect("b writes");
    assert_held_by(leases.acquire(key, "a", long).await, "b");
    // The releasing node taking its own lease again gets a new epoch, too.
    assert!(leases.release(key, "b", b.epoch).await.expect("release"));
    let b2 = leases.acquire(key, "b", long).await.expect("b again");
    assert_eq!(b2.epoch, b.epoch + 1);
    assert_fenced(append(&store, id, 2, &b.fence()).await, id, &b.fence());
    // Lobby leases are apart from match leases of the same id.
    let lobby = leases
        .acquire(LeaseKey::of_lobby(id), "a", long)
        .await
        .expect("a lobby lease");
    assert_eq!(lobby.epoch, 1);
    let both = leases
        .renew_all("a", long, &[LeaseKey::of_lobby(id), key])
        .await
        .expect("renew");
    assert_eq!(both, [LeaseKey::of_lobby(id)].into());
    store.close().await;
}

/// A stored lobby's version, and whether it started.
async fn lobby_version(store: &Store, id: Uuid) -> Option<(u64, bool)> {
    let row = store.lobby(id).await.expect("read");
    row.map(|r| (r.version, r.started))
}

/// A lobby's writes under its owner's fence: the owner's are stored; once another node took
/// the lease over, the old owner's save, delete and start are refused with nothing written
/// (the lobby's row and the match it would start alike), while the new owner's are stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_write_under_a_stale_fence_writes_nothing() {
    use server::store::LobbyRow;
    let Some((_db, store, leases)) = postgres().await else {
        return;
    };
    let id = Uuid::new_v4();
    let key = LeaseKey::of_lobby(id);
    let row = |version: u64, started: bool, match_id: Option<Uuid>| LobbyRow {
        id,
        version,
        started,
        public: true,
        invite_code: None,
        match_id,
        state: serde_json::json!({ "id": id, "version": version }).to_string(),
    };
    let a = leases
        .acquire(key, "a", Duration::from_millis(300))
        .await
        .expect("a takes it");
    let fenced = |r: Result<(), StoreError>, f: &Fence| match r {
        Err(StoreError::Fenced {
            id: at,
            node,
            epoch,
        }) => {
            assert_eq!((at, node.as_str(), epoch), (id, &*f.node, f.epoch));
        }
        other => panic!("expected Fenced, got {other:?}"),
    };
    store
        .save_lobby(&row(1, false, None), Some(&a.fence()))
        .await
        .expect("a creates the lobby");
    store
        .save_lobby(&row(2, false, None), Some(&a.fence()))
        .await
        .expect("a changes it");

    wait_expired(&leases, key).await;
    let b = leases
        .acquire(key, "b", Duration::from_secs(600))
        .await
        .expect("b takes over");
    assert_eq!(b.epoch, a.epoch + 1);
    // The old owner's copy is the stored one: only the fence stops its writes.
    fenced(
        store
            .save_lobby(&row(3, false, None), Some(&a.fence()))
            .await,
        &a.fence(),
    );
    fenced(
        store.delete_lobby(id, 2, Some(&a.fence())).await,
        &a.fence(),
    );
    let match_row = |match_id: Uuid| match_rows(match_id).0;
    let seats = |match_id: Uuid| match_rows(match_id).1;
    let lost_match = Uuid::new_v4();
    fenced(
        store
            .start_lobby_match(
                &match_row(lost_match),
                &seats(lost_match),
                &[],
                &row(3, true, Some(lost_match)),
                Some(&a.fence()),
            )
            .await,
        &a.fence(),
    );
    assert!(
        store.load_match(lost_match).await.expect("read").is_none(),
        "a fenced start stored its match"
    );
    assert_eq!(lobby_version(&store, id).await, Some((2, false)));

    let started = Uuid::new_v4();
    store
        .start_lobby_match(
            &match_row(started),
            &seats(started),
            &[],
            &row(3, true, Some(started)),
            Some(&b.fence()),
        )
        .await
        .expect("b starts it");
    assert_eq!(lobby_version(&store, id).await, Some((3, true)));
    assert!(store.load_match(started).await.expect("read").is_some());
    store.close().await;
}

/// Eight nodes asking at once for a free lease, then for the same lease once it expired:
/// exactly one wins each time (epoch 1, then 2), and the others are told who holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_eight_concurrent_acquires_exactly_one_wins() {
    let Some((_db, store, leases)) = postgres().await else {
        return;
    };
    let key = LeaseKey::of_match(stored_match(&store).await);
    for epoch in [1, 2] {
        let tasks: Vec<_> = (0..8)
            .map(|n| {
                let leases = leases.clone();
                tokio::spawn(async move {
                    leases
                        .acquire(key, &format!("n{n}"), Duration::from_millis(500))
                        .await
                })
            })
            .collect();
        let mut won = Vec::new();
        let mut held_by = Vec::new();
        for t in tasks {
            match t.await.expect("task") {
                Ok(lease) => won.push(lease),
                Err(LeaseError::Held { node, .. }) => held_by.push(node),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(won.len(), 1, "one winner: {won:?}");
        assert_eq!(won[0].epoch, epoch);
        assert_eq!(held_by.len(), 7);
        assert!(held_by.iter().all(|n| *n == won[0].node), "{held_by:?}");
        wait_expired(&leases, key).await;
    }
    store.close().await;
}

/// A store uncommitted on its own connection: a row of `commands` that an append of the same
/// match and seq waits for, until `rollback`.
async fn command_in_the_way(tx: &mut sqlx::PgConnection, id: Uuid, seq: i64) {
    sqlx::query(
        "INSERT INTO commands (match_id, seq, seat, command_id, command, events, created_at) \
         VALUES ($1, $2, 0, 'y', '{}', '[]', now())",
    )
    .bind(id)
    .bind(seq)
    .execute(tx)
    .await
    .expect("the insert in the way");
}

/// Appends of eight matches in one group, one of them under a lease taken over: that one fails
/// alone, with nothing written, the seven others are stored. The group is made by keeping both
/// writers busy (each on an insert that waits for another connection's uncommitted row) while
/// the eight are queued; then twice more as they come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_fence_in_a_group_fails_alone() {
    let Some((db, store, leases)) = postgres().await else {
        return;
    };
    let long = Duration::from_secs(600);
    let mut matches = Vec::new();
    for _ in 0..8 {
        let id = stored_match(&store).await;
        let lease = leases
            .acquire(LeaseKey::of_match(id), "a", long)
            .await
            .expect("a takes it");
        matches.push((id, lease.fence()));
    }
    let (lost, lost_fence) = matches[3].clone();
    assert!(
        leases
            .release(LeaseKey::of_match(lost), "a", lost_fence.epoch)
            .await
            .expect("release")
    );
    leases
        .acquire(LeaseKey::of_match(lost), "b", long)
        .await
        .expect("b takes it");
    let url = url(&db);
    let mut watch = sqlx::PgConnection::connect(&url).await.expect("connect");
    let mut y = sqlx::PgConnection::connect(&url).await.expect("connect");
    let mut y_tx = y.begin().await.expect("begin");
    let mut blockers = Vec::new();
    for n in 1..=2 {
        let id = stored_match(&store).await;
        command_in_the_way(&mut y_tx, id, 1).await;
        let store = store.clone();
        blockers.push(tokio::spawn(async move {
            store.append(id, &[record(1)], None).await
        }));
        wait_blocked(&mut watch, "INSERT INTO commands", n).await;
    }
    let mut in_the_way = Some(y_tx);
    for round in 1..=3u64 {
        let tasks: Vec<_> = matches
            .iter()
            .map(|(id, fence)| {
                let (store, id, fence) = (store.clone(), *id, fence.clone());
                tokio::spawn(async move { (id, append(&store, id, round, &fence).await) })
            })
            .collect();
        if let Some(tx) = in_the_way.take() {
            // Time for the eight to queue behind the busy writers (a wait, not an assertion).
            tokio::time::sleep(Duration::from_millis(300)).await;
            tx.rollback().await.expect("rollback");
            for b in blockers.drain(..) {
                b.await.expect("task").expect("the blockers' appends");
            }
        }
        for t in tasks {
            let (id, result) = t.await.expect("task");
            if id == lost {
                assert_fenced(result, id, &lost_fence);
            } else {
                result.expect("a fresh fence writes");
            }
        }
    }
    for (id, _) in &matches {
        let expected = if *id == lost { 0 } else { 3 };
        assert_eq!(stored(&store, *id).await.0, expected, "{id}");
    }
    assert_eq!(
        stored(&store, lost).await,
        (0, MatchStatus::Active, None),
        "the lost match's row is untouched"
    );
    store.close().await;
}

/// The race, one order: A's append is under way (its statement has checked and locked the
/// lease, and waits on another transaction's row), the lease expires and B asks for it. B's
/// takeover waits until A's append committed; then B holds it under the next epoch and A's
/// next append is refused. Made deterministic with a third connection holding the row A's
/// insert waits for, and `pg_stat_activity` telling who waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_waits_for_an_append_under_way() {
    let Some((db, store, leases)) = postgres().await else {
        return;
    };
    let id = stored_match(&store).await;
    let key = LeaseKey::of_match(id);
    let url = url(&db);
    let mut watch = sqlx::PgConnection::connect(&url).await.expect("connect");
    // Y: an uncommitted insert of the command A's append writes, which A's insert waits for.
    let mut y = sqlx::PgConnection::connect(&url).await.expect("connect");
    let mut y_tx = y.begin().await.expect("begin");
    command_in_the_way(&mut y_tx, id, 1).await;

    let a = leases
        .acquire(key, "a", Duration::from_secs(2))
        .await
        .expect("a takes it");
    let a_append = tokio::spawn({
        let (store, fence) = (store.clone(), a.fence());
        async move { append(&store, id, 1, &fence).await }
    });
    wait_blocked(&mut watch, "FROM leases l", 1).await;
    assert!(!a_append.is_finished());

    wait_expired(&leases, key).await;
    let b_acquire = tokio::spawn({
        let leases = leases.clone();
        async move { leases.acquire(key, "b", Duration::from_secs(600)).await }
    });
    wait_blocked(&mut watch, "INSERT INTO leases", 1).await;
    assert!(
        !b_acquire.is_finished(),
        "B's takeover waits for A's append"
    );

    y_tx.rollback().await.expect("rollback");
    let written = tokio::time::timeout(PATIENCE, a_append).await;
    assert!(
        matches!(written, Ok(Ok(Ok(())))),
        "A's append, begun under its lease, commits: {written:?}"
    );
    let b = tokio::time::timeout(PATIENCE, b_acquire)
        .await
        .expect("B's takeover ends")
        .expect("task")
        .expect("B takes over");
    assert_eq!(b.epoch, 2);
    assert_eq!(stored(&store, id).await.0, 1);
    assert_fenced(append(&store, id, 2, &a.fence()).await, id, &a.fence());
    append(&store, id, 2, &b.fence()).await.expect("b writes");
    assert_eq!(stored(&store, id).await.0, 2);
    store.close().await;
}

/// The race, other order: B's takeover is under way (taken in an open transaction) when A's
/// append comes: A's append is refused with nothing written, whether B then commits or not;
/// once B commits, B's appends are stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_is_fenced_by_a_takeover_under_way() {
    let Some((db, store, leases)) = postgres().await else {
        return;
    };
    let id = stored_match(&store).await;
    let key = LeaseKey::of_match(id);
    let a = leases
        .acquire(key, "a", Duration::from_millis(300))
        .await
        .expect("a takes it");
    append(&store, id, 1, &a.fence()).await.expect("a writes");
    wait_expired(&leases, key).await;

    let mut x = sqlx::PgConnection::connect(&url(&db))
        .await
        .expect("connect");
    let mut x_tx = x.begin().await.expect("begin");
    let b = acquire_on(&mut x_tx, key, "b", Duration::from_secs(600))
        .await
        .expect("b takes over, uncommitted");
    assert_eq!(b.epoch, 2);
    let refused = tokio::time::timeout(PATIENCE, append(&store, id, 2, &a.fence()))
        .await
        .expect("A's append ends");
    assert_fenced(refused, id, &a.fence());
    x_tx.commit().await.expect("commit");
    assert_fenced(append(&store, id, 2, &a.fence()).await, id, &a.fence());
    assert_eq!(stored(&store, id).await.0, 1, "nothing of A's appends");
    append(&store, id, 2, &b.fence()).await.expect("b writes");
    assert_eq!(stored(&store, id).await.0, 2);
    store.close().await;
}

/// SQLite has no leases (one server per file): none to take, and a fenced append is refused
/// with nothing written. An unfenced one is stored as ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_has_no_leases_and_refuses_fenced_appends() {
    let db = TestDb::sqlite();
    let config = db.config();
    let store = Store::open(None, &config.store.data_dir)
        .await
        .expect("open");
    assert!(store.leases().is_none());
    let id = stored_match(&store).await;
    let fence = Fence {
        node: "a".into(),
        epoch: 1,
    };
    let refused = append(&store, id, 1, &fence).await;
    assert!(
        matches!(refused, Err(StoreError::PostgresOnly(_))),
        "{refused:?}"
    );
    assert_eq!(stored(&store, id).await, (0, MatchStatus::Active, None));
    store
        .append(id, &[record(1)], None)
        .await
        .expect("an unfenced append");
    assert_eq!(stored(&store, id).await.0, 1);
    store.close().await;
}
