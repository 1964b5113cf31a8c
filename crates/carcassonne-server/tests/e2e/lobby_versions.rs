//! A lobby's row is written only over the version before it, on both stores: a writer whose
//! copy is behind the stored lobby finds out, and writes nothing.

use crate::common::*;
use server::store::{LobbyRow, Store, StoreError};
use uuid::Uuid;

fn row(id: Uuid, version: u64) -> LobbyRow {
    LobbyRow {
        id,
        version,
        started: false,
        public: true,
        invite_code: None,
        match_id: None,
        state: serde_json::json!({ "id": id, "version": version }).to_string(),
    }
}

async fn a_lobby_is_written_only_over_the_version_before(db: &TestDb) {
    let config = db.config();
    let store = Store::open(config.store.url(), &config.store.data_dir)
        .await
        .expect("open");
    let id = Uuid::new_v4();
    let stale = |r: Result<(), StoreError>| matches!(r, Err(StoreError::StaleLobby(i)) if i == id);
    store
        .save_lobby(&row(id, 1), None)
        .await
        .expect("the first save");
    store
        .save_lobby(&row(id, 2), None)
        .await
        .expect("over version 1");
    // Two nodes that both read version 2: the first write wins, the second is stale.
    store
        .save_lobby(&row(id, 3), None)
        .await
        .expect("over version 2");
    assert!(
        stale(store.save_lobby(&row(id, 3), None).await),
        "written twice over version 2"
    );
    assert!(
        stale(store.save_lobby(&row(id, 5), None).await),
        "a version skipped"
    );
    assert!(
        stale(store.delete_lobby(id, 2, None).await),
        "deleted from an old copy"
    );
    let live = store.live_lobbies().await.expect("lobbies");
    let kept = live.iter().find(|r| r.id == id).expect("the lobby");
    assert_eq!(kept.version, 3);
    let one = store.lobby(id).await.expect("one lobby");
    assert_eq!(one.map(|r| r.version), Some(3));
    store
        .delete_lobby(id, 3, None)
        .await
        .expect("deleted from the current copy");
    assert!(
        !store
            .live_lobbies()
            .await
            .expect("lobbies")
            .iter()
            .any(|r| r.id == id)
    );
    store.close().await;
}

on_both_stores!(a_lobby_is_written_only_over_the_version_before);
