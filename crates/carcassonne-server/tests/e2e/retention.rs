//! Retention on both stores, with the clock as a parameter: rows are written with old and
//! recent times, and a pass as of now deletes exactly the old ones of each kind; a deleted
//! guest's match keeps every row.

use crate::common::*;
use chrono::{Duration as Days, Utc};
use server::Store;
use server::store::Cutoffs;
use uuid::Uuid;

on_both_stores!(a_pass_deletes_exactly_what_is_older_than_its_cutoff);

/// Long before any cutoff of the test.
const OLD: &str = "2020-01-01T00:00:00+00:00";

async fn add_guest(db: &TestDb, at: &str) -> (Uuid, String) {
    let id = Uuid::new_v4();
    let token = format!("token-{id}");
    db.execute(&format!(
        "INSERT INTO accounts (id, name, name_key, kind, created_at) \
         VALUES ('{id}', 'g', 'g', 'guest', '{at}')"
    ))
    .await;
    db.execute(&format!(
        "INSERT INTO sessions (id, account_id, token_hash, created_at) \
         VALUES ('{}', '{id}', '{token}', '{at}')",
        Uuid::new_v4()
    ))
    .await;
    (id, token)
}

/// A match with two seats and `moves` commands, in `status`, last changed at `updated`.
async fn add_match(db: &TestDb, status: &str, updated: &str, moves: u64) -> Uuid {
    let id = Uuid::new_v4();
    db.execute(&format!(
        "INSERT INTO matches (id, setup, status, rules_version, created_at, updated_at) \
         VALUES ('{id}', '{{}}', '{status}', 'test', '{OLD}', '{updated}')"
    ))
    .await;
    for seat in 0..2 {
        db.execute(&format!(
            "INSERT INTO seats (match_id, seat, colour, token_hash) \
             VALUES ('{id}', {seat}, 'red', 'seat-{id}-{seat}')"
        ))
        .await;
    }
    for seq in 1..=moves {
        db.execute(&format!(
            "INSERT INTO commands (match_id, seq, seat, command_id, command, events, created_at) \
             VALUES ('{id}', {seq}, 0, 'c{seq}', '{{}}', '[]', '{updated}')"
        ))
        .await;
    }
    id
}

async fn bind(db: &TestDb, m: Uuid, seat: u8, account: Uuid) {
    db.execute(&format!(
        "INSERT INTO seat_accounts (match_id, seat, account_id) VALUES ('{m}', {seat}, '{account}')"
    ))
    .await;
}

async fn chat(db: &TestDb, m: Uuid, account: Uuid, at: &str) {
    db.execute(&format!(
        "INSERT INTO chat (match_id, channel, seat, account_id, name, text, at) \
         VALUES ('{m}', 'table', 0, '{account}', 'g', 'hello', '{at}')"
    ))
    .await;
}

async fn has_account(store: &Store, token: &str) -> bool {
    store
        .session_account(token)
        .await
        .expect("session")
        .is_some()
}

async fn a_pass_deletes_exactly_what_is_older_than_its_cutoff(db: &TestDb) {
    let config = db.config();
    let store = Store::open(config.store.url(), &config.store.data_dir)
        .await
        .expect("open the store");
    let now = Utc::now();
    let recent = (now - Days::days(1)).to_rfc3339();

    // Guests: one idle since 2020 who played a finished match, one idle since 2020 with an
    // unfinished match, one old who chatted yesterday, one created yesterday; and an old
    // registered account, which retention never touches.
    let (idle, idle_token) = add_guest(db, OLD).await;
    let (playing, playing_token) = add_guest(db, OLD).await;
    let (chatty, chatty_token) = add_guest(db, OLD).await;
    let (_, fresh_token) = add_guest(db, &recent).await;
    let registered = Uuid::new_v4();
    db.execute(&format!(
        "INSERT INTO accounts (id, name, name_key, kind, password_hash, created_at) \
         VALUES ('{registered}', 'R', 'r', 'registered', 'x', '{OLD}')"
    ))
    .await;
    db.execute(&format!(
        "INSERT INTO sessions (id, account_id, token_hash, created_at) \
         VALUES ('{}', '{registered}', 'registered-token', '{OLD}')",
        Uuid::new_v4()
    ))
    .await;

    // Matches: finished in 2020 (the idle guest's), finished yesterday, active since 2020,
    // broken in 2020.
    let old_finished = add_match(db, "finished", OLD, 3).await;
    let new_finished = add_match(db, "finished", &recent, 2).await;
    let old_active = add_match(db, "active", OLD, 2).await;
    let old_broken = add_match(db, "broken", OLD, 1).await;
    bind(db, old_finished, 0, idle).await;
    bind(db, old_active, 1, playing).await;
    chat(db, old_finished, idle, OLD).await;
    chat(db, new_finished, chatty, &recent).await;
    chat(db, old_active, playing, OLD).await;

    // Guests, as of now with 30 days: only the idle one goes.
    let deleted = store
        .purge(&Cutoffs::before(now, [Some(30), None, None]))
        .await
        .expect("purge guests");
    assert_eq!(deleted.guests, 1, "{deleted:?}");
    assert!(!has_account(&store, &idle_token).await);
    for token in [
        &playing_token,
        &chatty_token,
        &fresh_token,
        "registered-token",
    ] {
        assert!(has_account(&store, token).await, "{token} was deleted");
    }
    // Its match keeps every row: the seat is unbound, the log and the chat stay.
    assert!(
        store
            .load_match(old_finished)
            .await
            .expect("load")
            .is_some()
    );
    assert_eq!(store.commands(old_finished, 0).await.expect("log").len(), 3);
    let seats = store.seats_of(&[old_finished]).await.expect("seats");
    assert_eq!(seats.len(), 2);
    assert!(seats.iter().all(|s| s.account.is_none()), "{seats:?}");
    assert_eq!(
        store
            .match_chat(old_finished, 0, 10)
            .await
            .expect("chat")
            .len(),
        1
    );
    // The unfinished match's player keeps its binding.
    let seats = store.seats_of(&[old_active]).await.expect("seats");
    assert_eq!(seats[1].account.as_ref().map(|a| a.0), Some(playing));

    // A second pass at the same time deletes nothing more.
    let again = store
        .purge(&Cutoffs::before(now, [Some(30), None, None]))
        .await
        .expect("purge again");
    assert_eq!(again.guests, 0);

    // Chat older than 30 days: the two lines of 2020 go, yesterday's stays.
    let deleted = store
        .purge(&Cutoffs::before(now, [None, Some(30), None]))
        .await
        .expect("purge chat");
    assert_eq!(deleted.chat, 2, "{deleted:?}");
    assert!(
        store
            .match_chat(old_finished, 0, 10)
            .await
            .expect("chat")
            .is_empty()
    );
    assert!(
        store
            .match_chat(old_active, 0, 10)
            .await
            .expect("chat")
            .is_empty()
    );
    assert_eq!(
        store
            .match_chat(new_finished, 0, 10)
            .await
            .expect("chat")
            .len(),
        1
    );

    // Matches that ended more than 30 days ago: only the finished one of 2020, whole.
    let deleted = store
        .purge(&Cutoffs::before(now, [None, None, Some(30)]))
        .await
        .expect("purge matches");
    assert_eq!(deleted.matches, 1, "{deleted:?}");
    assert!(
        store
            .load_match(old_finished)
            .await
            .expect("load")
            .is_none()
    );
    assert!(
        store
            .commands(old_finished, 0)
            .await
            .expect("log")
            .is_empty()
    );
    assert!(
        store
            .seats_of(&[old_finished])
            .await
            .expect("seats")
            .is_empty()
    );
    for kept in [new_finished, old_active, old_broken] {
        assert!(
            store.load_match(kept).await.expect("load").is_some(),
            "{kept}"
        );
    }
    assert_eq!(store.commands(new_finished, 0).await.expect("log").len(), 2);

    // A clock two years ahead: yesterday's finished match and the young guest are old too.
    let later = now + Days::days(730);
    let deleted = store
        .purge(&Cutoffs::before(later, [Some(30), Some(30), Some(30)]))
        .await
        .expect("purge later");
    assert_eq!(deleted.matches, 1, "{deleted:?}");
    assert_eq!(deleted.chat, 1, "{deleted:?}");
    // The chatty guest and the young one; the player of the unfinished match stays.
    assert_eq!(deleted.guests, 2, "{deleted:?}");
    assert!(has_account(&store, &playing_token).await);
    assert!(has_account(&store, "registered-token").await);
    store.close().await;
}
