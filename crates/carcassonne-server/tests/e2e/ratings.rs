//! Ratings and replays over real sockets, on both stores: rated lobbies (registered accounts
//! only, public, no bots) played to their end change their players' ratings, unrated ones do
//! not; the leaderboard pages, a profile's history holds each rated match's final scores, the
//! numbers are those of the rating arithmetic replayed over the results, and an admin's
//! recompute changes nothing. A finished match steps through seq by seq for whoever may read
//! it (a private one for its players only, nothing before the end), with the same public view
//! the admin API replays and no secret.

use crate::common::*;
use crate::lobby::{call, guest, lobby_of, private_lobby, ready, ws_as};
use client::Follower;
use client::bot::Rng;
use protocol::{Family, Leaderboard, MatchReplay, PlayerProfile, RecomputeReport, SessionCreated};
use rules::Event;
use serde_json::{Value, json};
use server::ratings::compute::{Outcome, Seat, replay};
use std::time::{Duration, Instant};
use uuid::Uuid;

on_both_stores!(
    rated_matches_rate_their_players_and_a_recompute_gives_the_same_numbers,
    a_finished_match_replays_for_those_who_may_read_it,
);

/// A registered account: its id and session token.
pub(crate) async fn registered(server: &TestServer, name: &str) -> (Uuid, String) {
    let (status, v) = call(
        server,
        "POST",
        "/api/accounts",
        None,
        Some(json!({"name": name, "password": "a long enough password"})),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let s: SessionCreated = serde_json::from_value(v).expect("session");
    (s.account.id, s.token)
}

#[track_caller]
fn refused(got: (u16, Value), status: u16, code: &str) {
    assert_eq!(
        (got.0, got.1["code"].as_str()),
        (status, Some(code)),
        "{}",
        got.1
    );
}

/// A lobby of `players` (session tokens; the first hosts) started and played to its end with
/// random moves; the match id and its final scores.
pub(crate) async fn play_lobby(
    server: &TestServer,
    players: &[&str],
    rated: bool,
    seed: u64,
) -> (Uuid, Vec<u32>) {
    let (s, v) = call(
        server,
        "POST",
        "/api/lobbies",
        Some(players[0]),
        Some(json!({"name": "Rated", "seats": players.len(), "rated": rated})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let id = lobby_of(v).id;
    for p in &players[1..] {
        let (s, v) = call(
            server,
            "POST",
            &format!("/api/lobbies/{id}/join"),
            Some(p),
            Some(json!({})),
        )
        .await;
        assert_eq!(s, 200, "{v}");
    }
    for p in players {
        ready(server, id, p).await;
    }
    let (s, v) = call(
        server,
        "POST",
        &format!("/api/lobbies/{id}/start"),
        Some(players[0]),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let match_id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");
    let mut seats = Vec::new();
    for p in players {
        let mut conn = ws_as(server, p).await;
        let seat = conn.take_seat(match_id).await.expect("take seat");
        conn.subscribe(match_id, None).await.expect("subscribe");
        seats.push((
            seat.seat,
            Follower::from_conn(conn, match_id, Some(seat.seat)),
        ));
    }
    seats.sort_by_key(|(s, _)| *s);
    let mut seats: Vec<Follower> = seats.into_iter().map(|(_, f)| f).collect();
    client::bot::play(&mut seats, &mut [], &mut Rng::new(seed), 5_000)
        .await
        .expect("play to the end");
    let view = seats[0].view().expect("view");
    assert!(view.finished);
    (match_id, view.players.iter().map(|p| p.score).collect())
}

async fn board(server: &TestServer, query: &str) -> Leaderboard {
    let (s, v) = call(server, "GET", &format!("/api/ratings{query}"), None, None).await;
    assert_eq!(s, 200, "{v}");
    serde_json::from_value(v).expect("a leaderboard")
}

async fn profile(server: &TestServer, name: &str) -> PlayerProfile {
    let (s, v) = call(server, "GET", &format!("/api/players/{name}"), None, None).await;
    assert_eq!(s, 200, "{v}");
    serde_json::from_value(v).expect("a profile")
}

/// Waits until the rating task has rated `n` matches of the family (the sum of the board's
/// games is the seats of its rated matches).
async fn wait_rated(server: &TestServer, family: &str, seats: u32) -> Leaderboard {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let b = board(server, &format!("?family={family}")).await;
        if b.entries.iter().map(|e| e.rating.games).sum::<u32>() >= seats {
            return b;
        }
        assert!(Instant::now() < deadline, "not rated in time: {b:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn rated_matches_rate_their_players_and_a_recompute_gives_the_same_numbers(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann_id, ann) = registered(&server, "Ann").await;
    let (bo_id, bo) = registered(&server, "Bo").await;
    let (cy_id, cy) = registered(&server, "Cy").await;
    let (_, gus) = guest(&server, "Gus").await;

    // Who may play rated: registered accounts only, in a public lobby without bots.
    let rated = |public: bool| json!({"name": "R", "seats": 2, "rated": true, "public": public});
    refused(
        call(
            &server,
            "POST",
            "/api/lobbies",
            Some(&gus),
            Some(rated(true)),
        )
        .await,
        400,
        "bad_option",
    );
    refused(
        call(
            &server,
            "POST",
            "/api/lobbies",
            Some(&ann),
            Some(rated(false)),
        )
        .await,
        400,
        "bad_option",
    );
    let (s, v) = call(
        &server,
        "POST",
        "/api/lobbies",
        Some(&ann),
        Some(rated(true)),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let lobby = lobby_of(v);
    assert!(lobby.rated);
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{}/join", lobby.id),
            Some(&gus),
            Some(json!({})),
        )
        .await,
        400,
        "bad_option",
    );
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{}/bot", lobby.id),
            Some(&ann),
            Some(json!({"seat": 1})),
        )
        .await,
        400,
        "bad_option",
    );
    let (s, _) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{}/leave", lobby.id),
        Some(&ann),
        None,
    )
    .await;
    assert!(s == 200 || s == 204, "{s}");

    // Two rated duels, one rated table of three, and an unrated duel that changes nothing.
    let (m1, s1) = play_lobby(&server, &[&ann, &bo], true, 1).await;
    let (m2, s2) = play_lobby(&server, &[&bo, &cy], true, 2).await;
    let (m3, s3) = play_lobby(&server, &[&cy, &ann, &bo], true, 3).await;
    let (m4, _) = play_lobby(&server, &[&ann, &bo], false, 4).await;
    let duel = wait_rated(&server, "duel", 4).await;
    let multi = wait_rated(&server, "multi", 3).await;
    assert_eq!(duel.family, Family::Duel);
    let games = |b: &Leaderboard, name: &str| {
        b.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.rating.games)
    };
    assert_eq!(
        (games(&duel, "Ann"), games(&duel, "Bo"), games(&duel, "Cy")),
        (Some(1), Some(2), Some(1)),
        "the unrated duel is not counted: {duel:?}"
    );
    assert_eq!(multi.entries.len(), 3);
    for b in [&duel, &multi] {
        assert!(
            b.entries
                .windows(2)
                .all(|w| w[0].rating.rating >= w[1].rating.rating)
        );
        assert!(b.entries.iter().all(|e| e.rating.provisional));
        let ranks: Vec<u32> = b.entries.iter().map(|e| e.rank).collect();
        assert_eq!(ranks, (1..=b.entries.len() as u32).collect::<Vec<_>>());
    }
    // Paging.
    let first = board(&server, "?family=duel&limit=2").await;
    assert_eq!(first.next_offset, Some(2));
    assert_eq!(first.entries, duel.entries[..2]);
    let second = board(&server, "?family=duel&offset=2&limit=2").await;
    assert_eq!(second.next_offset, None);
    assert_eq!(second.entries, duel.entries[2..]);
    refused(
        call(&server, "GET", "/api/ratings?limit=0", None, None).await,
        400,
        "malformed",
    );
    refused(
        call(&server, "GET", "/api/ratings?family=solo", None, None).await,
        400,
        "malformed",
    );

    // Profiles: every rated match with its final scores, newest first; not the unrated one.
    let p = profile(&server, "ann").await;
    assert_eq!(p.name, "Ann");
    let ids: Vec<Uuid> = p.history.iter().map(|c| c.match_id).collect();
    assert_eq!(ids, vec![m3, m1], "newest first, the unrated {m4} left out");
    let scores = |c: &protocol::RatingChange| c.seats.iter().map(|s| s.score).collect::<Vec<_>>();
    assert_eq!(scores(&p.history[0]), s3);
    assert_eq!(scores(&p.history[1]), s1);
    let fresh = server::ratings::compute::Rating::default().conservative();
    assert!(
        (p.history[1].before - fresh).abs() < 1e-9,
        "a first match starts fresh"
    );
    assert_eq!(
        p.ratings.iter().map(|r| r.family).collect::<Vec<_>>(),
        vec![Family::Duel, Family::Multi]
    );
    refused(
        call(&server, "GET", "/api/players/nobody", None, None).await,
        404,
        "bad_name",
    );
    refused(
        call(&server, "GET", "/api/players/Gus", None, None).await,
        404,
        "bad_name",
    );

    // The numbers are the arithmetic's over the results in rating order.
    let bo_p = profile(&server, "Bo").await;
    let cy_p = profile(&server, "Cy").await;
    assert_eq!(
        bo_p.history.iter().map(|c| c.match_id).collect::<Vec<_>>(),
        vec![m3, m2, m1]
    );
    let id_of = |name: &str| match name {
        "Ann" => ann_id,
        "Bo" => bo_id,
        _ => cy_id,
    };
    let results: Vec<Outcome> = [
        (&s1, vec!["Ann", "Bo"]),
        (&s2, vec!["Bo", "Cy"]),
        (&s3, vec!["Cy", "Ann", "Bo"]),
    ]
    .iter()
    .map(|(scores, names)| Outcome {
        family: Family::of(names.len()),
        seats: names
            .iter()
            .zip(scores.iter())
            .map(|(n, s)| Seat {
                account: id_of(n),
                score: *s,
            })
            .collect(),
    })
    .collect();
    let (expected, _) = replay(&results);
    for (name, prof) in [("Ann", &p), ("Bo", &bo_p), ("Cy", &cy_p)] {
        for r in &prof.ratings {
            // JSON's decimal text may move a number by its last bit; the recompute below
            // compares the stored bits themselves.
            let e = expected[&(id_of(name), r.family)];
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
            assert!(
                close(r.mu, e.mu) && close(r.sigma, e.sigma) && r.games == e.games,
                "{name}: {r:?}, expected {e:?}"
            );
        }
    }

    // A recompute needs an admin, is audited, and finds the store consistent.
    refused(
        call(
            &server,
            "POST",
            "/api/admin/ratings/recompute",
            Some(&ann),
            None,
        )
        .await,
        401,
        "bad_token",
    );
    let (s, v) = admin_http(&server, "POST", "/api/admin/ratings/recompute", "").await;
    assert_eq!(s, 200, "{v}");
    let report: RecomputeReport = serde_json::from_str(&v).expect("a report");
    assert_eq!(
        report,
        RecomputeReport {
            matches: 3,
            ratings: 6,
            changed: 0
        }
    );
    assert_eq!(board(&server, "?family=duel").await, duel);
    assert_eq!(board(&server, "?family=multi").await, multi);
    assert_eq!(profile(&server, "Ann").await, p);
    let trail = admin_json(&server, "/api/admin/actions").await;
    assert!(
        trail["actions"]
            .as_array()
            .expect("actions")
            .iter()
            .any(|a| a["action"] == "recompute_ratings"),
        "{trail}"
    );
    // A restart rates nothing twice (the catch-up finds every rated match recorded).
    server.stop().await;
    let server = TestServer::start(db.config());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(board(&server, "?family=duel").await, duel);
    server.stop().await;
    // Ends the rating task never saw (the records gone): the next start rates the finished
    // rated matches, in the order they ended, to the same numbers; the unrated one stays out.
    for table in ["rated_matches", "rating_history", "ratings"] {
        db.execute(&format!("DELETE FROM {table}")).await;
    }
    let server = TestServer::start(db.config());
    assert_eq!(wait_rated(&server, "duel", 4).await, duel);
    assert_eq!(wait_rated(&server, "multi", 3).await, multi);
    assert_eq!(profile(&server, "Ann").await, p);
    server.stop().await;
}

async fn replay_of(
    server: &TestServer,
    id: Uuid,
    query: &str,
    token: Option<&str>,
) -> (u16, Value) {
    call(
        server,
        "GET",
        &format!("/api/matches/{id}/replay{query}"),
        token,
        None,
    )
    .await
}

async fn a_finished_match_replays_for_those_who_may_read_it(db: &TestDb) {
    let server = TestServer::start(db.config());
    // A private lobby's match: its players replay it once it is over, no one else ever.
    let lobby = private_lobby(&server, 2).await;
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{}/join", lobby.id),
        Some(&lobby.friend),
        Some(json!({"invite_code": lobby.code})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    ready(&server, lobby.id, &lobby.host).await;
    ready(&server, lobby.id, &lobby.friend).await;
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{}/start", lobby.id),
        Some(&lobby.host),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");
    refused(
        replay_of(&server, id, "", Some(&lobby.host)).await,
        409,
        "not_finished",
    );
    refused(
        replay_of(&server, id, "", None).await,
        403,
        "invite_required",
    );
    let mut seats = Vec::new();
    for p in [&lobby.host, &lobby.friend] {
        let mut conn = ws_as(&server, p).await;
        let seat = conn.take_seat(id).await.expect("seat");
        conn.subscribe(id, None).await.expect("subscribe");
        seats.push(Follower::from_conn(conn, id, Some(seat.seat)));
    }
    client::bot::play(&mut seats, &mut [], &mut Rng::new(7), 5_000)
        .await
        .expect("play to the end");
    let last = seats[0].seq().expect("seq");
    let finals: Vec<u32> = seats[0]
        .view()
        .expect("view")
        .players
        .iter()
        .map(|p| p.score)
        .collect();
    refused(
        replay_of(&server, id, "", None).await,
        403,
        "invite_required",
    );
    refused(
        replay_of(&server, id, "", Some(&lobby.stranger)).await,
        403,
        "invite_required",
    );
    let with_code = [("X-Invite-Code", lobby.code.as_str())];
    let (s, _) = http(
        &server,
        "GET",
        &format!("/api/matches/{id}/replay"),
        &with_code,
        "",
    )
    .await;
    assert_eq!(s, 403, "an invite code lets a friend watch, not replay");
    let (s, v) = replay_of(&server, id, "", Some(&lobby.friend)).await;
    assert_eq!(s, 200, "{v}");
    assert_no_stack(&v, "a replay");
    for secret in ["seed", "pile_order", "draw_order", "stack", "secrets"] {
        assert!(
            !v.to_string().contains(&format!("\"{secret}\"")),
            "{secret} in {v}"
        );
    }
    let end: MatchReplay = serde_json::from_value(v).expect("a replay");
    assert_eq!(end.last_seq, last);
    assert_eq!(end.step.seq, last);
    assert!(end.view.view.finished);
    assert_eq!(end.scores.len() as u64, last + 1);
    assert_eq!(end.scores.last(), Some(&finals));
    assert!(
        end.step
            .events
            .iter()
            .any(|e| matches!(e, Event::GameEnded { scores } if *scores == finals))
    );
    assert_eq!(end.view.names.len(), 2, "the seats' names");

    // Every step is the admin's replay of that seq; the opening is seq 0.
    let (s, v) = replay_of(&server, id, "?seq=0", Some(&lobby.host)).await;
    assert_eq!(s, 200, "{v}");
    let opening: MatchReplay = serde_json::from_value(v).expect("a replay");
    assert_eq!((opening.step.seq, opening.step.seat), (0, None));
    assert!(matches!(
        opening.step.events.first(),
        Some(Event::GameStarted { .. })
    ));
    for seq in [1, last / 2, last] {
        let (_, v) = replay_of(&server, id, &format!("?seq={seq}"), Some(&lobby.host)).await;
        let r: MatchReplay = serde_json::from_value(v).expect("a replay");
        let admin = admin_json(&server, &format!("/api/admin/matches/{id}/state?seq={seq}")).await;
        assert_eq!(
            serde_json::to_value(&r.view.view).expect("json"),
            admin["view"],
            "seq {seq}"
        );
        assert_eq!(r.step.seq, seq);
        assert!(r.step.seat.is_some());
        let summed: Vec<u32> = r.view.view.players.iter().map(|p| p.score).collect();
        assert_eq!(
            r.scores[seq as usize], summed,
            "the chart's scores at {seq} are the view's"
        );
    }
    refused(
        replay_of(
            &server,
            id,
            &format!("?seq={}", last + 1),
            Some(&lobby.host),
        )
        .await,
        400,
        "malformed",
    );
    refused(
        replay_of(&server, id, "?seq=-1", Some(&lobby.host)).await,
        400,
        "malformed",
    );
    refused(
        replay_of(&server, Uuid::new_v4(), "", Some(&lobby.host)).await,
        404,
        "unknown_match",
    );

    // A public match (no lobby) replays for anyone once over, and not before.
    let created = create(&server, 2).await;
    let (s, _) = replay_of(&server, created.match_id, "", None).await;
    assert_eq!(s, 409);
    server.stop().await;
}
