//! The admin API over real sockets, on SQLite and on Postgres: the match list
//! with its filters and pages, the log, the state at a seq against what a subscribed client had,
//! the secrets (refused while a match runs, the real ones after), the scenario export replayed by
//! the rules crate, abort and away with their audit trail, and every route refused to a
//! non-admin.

use crate::common::*;
use client::CommandOutcome;
use protocol::admin::{
    AdminActionList, AdminMatchList, AdminMatchLog, AdminMatchSecrets, AdminMatchSummary,
    MatchStatus, ModuleName, Origin,
};
use protocol::{CreateMatch, ErrorBody, ErrorCode, ServerMessage};
use rules::scenario::Scenario;
use rules::{Colour, Event, Game, MapSetup, Modules, Setup};
use serde::de::DeserializeOwned;
use serde_json::Value;

on_both_stores!(
    every_admin_route_refuses_a_non_admin,
    list_filters_and_pages,
    log_state_secrets_and_scenario_of_a_whole_match,
    abort_and_away_are_audited_and_abort_survives_a_restart,
    an_admin_account_opens_the_admin_api,
    list_filters_by_player,
);

/// Every route of the admin API, with a body where it takes one.
fn routes(id: uuid::Uuid) -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("GET", "/api/admin/matches".into(), ""),
        ("GET", format!("/api/admin/matches/{id}"), ""),
        ("GET", format!("/api/admin/matches/{id}/log"), ""),
        ("GET", format!("/api/admin/matches/{id}/state?seq=0"), ""),
        ("GET", format!("/api/admin/matches/{id}/secrets"), ""),
        ("GET", format!("/api/admin/matches/{id}/scenario"), ""),
        ("POST", format!("/api/admin/matches/{id}/abort"), ""),
        (
            "POST",
            format!("/api/admin/matches/{id}/away"),
            r#"{"seat":0}"#,
        ),
        ("GET", "/api/admin/actions".into(), ""),
        ("GET", "/api/admin/stats".into(), ""),
        (
            "PUT",
            format!("/api/admin/accounts/{id}/admin"),
            r#"{"admin":true}"#,
        ),
    ]
}

async fn admin(server: &TestServer, method: &str, path: &str, body: &str) -> (u16, String) {
    admin_http(server, method, path, body).await
}

/// An admin request that must succeed, read as `T`.
async fn admin_ok<T: DeserializeOwned>(server: &TestServer, method: &str, path: &str) -> T {
    admin_ok_body(server, method, path, "").await
}

async fn admin_ok_body<T: DeserializeOwned>(
    server: &TestServer,
    method: &str,
    path: &str,
    body: &str,
) -> T {
    let (status, text) = admin(server, method, path, body).await;
    assert_eq!(status, 200, "{method} {path}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: {e}: {text}"))
}

/// An admin request that must be refused with `status` and `code`.
async fn admin_refused(
    server: &TestServer,
    method: &str,
    path: &str,
    status: u16,
    code: ErrorCode,
) {
    let (got, text) = admin(server, method, path, "").await;
    assert_eq!(got, status, "{method} {path}: {text}");
    let body: ErrorBody = serde_json::from_str(&text).expect("an error body");
    assert_eq!(body.code, code, "{method} {path}: {text}");
}

async fn every_admin_route_refuses_a_non_admin(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let seat_token = format!("Bearer {}", created.seats[0].token);
    for (method, path, body) in routes(id) {
        for headers in [
            vec![],
            vec![("Authorization", "Bearer wrong")],
            vec![("Authorization", seat_token.as_str())],
            vec![("Authorization", ADMIN_TOKEN)], // no `Bearer `
        ] {
            let (status, text) = http(&server, method, &path, &headers, body).await;
            assert_eq!(status, 401, "{method} {path} {headers:?}: {text}");
            let e: ErrorBody = serde_json::from_str(&text).expect("an error body");
            assert_eq!(e.code, ErrorCode::BadToken, "{method} {path}");
        }
    }
    // Nothing was done: the match is still active, no seat is away, nothing is audited.
    let s: AdminMatchSummary = admin_ok(&server, "GET", &format!("/api/admin/matches/{id}")).await;
    assert_eq!(s.status, MatchStatus::Active);
    assert!(s.players.iter().all(|p| p.away_since.is_none()));
    let a: AdminActionList = admin_ok(&server, "GET", "/api/admin/actions").await;
    assert!(a.actions.is_empty(), "{:?}", a.actions);
    server.stop().await;

    // Without a configured token the admin API is off on every route, whatever is sent.
    let mut config = db.config();
    config.admin.admin_token = None;
    let server = TestServer::start(config);
    for (method, path, body) in routes(id) {
        let (status, text) = admin_http(&server, method, &path, body).await;
        assert_eq!(status, 404, "{method} {path}: {text}");
    }
    server.stop().await;
}

fn request(players: usize, modules: Modules) -> CreateMatch {
    CreateMatch {
        players: [Colour::Red, Colour::Blue, Colour::Green][..players].to_vec(),
        modules,
        meeples: None,
        draw_order: None,
        clock: None,
    }
}

async fn list(server: &TestServer, query: &str) -> AdminMatchList {
    admin_ok(server, "GET", &format!("/api/admin/matches?{query}")).await
}

async fn list_ids(server: &TestServer, query: &str) -> Vec<uuid::Uuid> {
    list(server, query)
        .await
        .matches
        .iter()
        .map(|m| m.match_id)
        .collect()
}

async fn list_filters_and_pages(db: &TestDb) {
    let server = TestServer::start(db.config());
    let map = Modules {
        map: Some(Box::new(MapSetup {
            map: "france".into(),
            starts: None,
            chips: true,
            chip_layout: None,
            data: None,
        })),
        ..Modules::default()
    };
    let reqs = [
        request(2, Modules::default()),
        request(
            3,
            Modules {
                tollkeepers: true,
                ..Modules::default()
            },
        ),
        request(2, Modules::default()),
        request(
            2,
            Modules {
                messages: true,
                ..Modules::default()
            },
        ),
        request(2, map),
        request(
            2,
            Modules {
                inns_cathedrals: true,
                traders_builders: true,
                ..Modules::default()
            },
        ),
    ];
    let mut ids = Vec::new();
    for r in &reqs {
        ids.push(
            client::create_match(&server.http(), r)
                .await
                .expect("create")
                .match_id,
        );
        // Distinct creation times, so that the order is the creation order.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let newest_first: Vec<uuid::Uuid> = ids.iter().rev().copied().collect();

    // Pages of 4 then 2, newest first, with no repeat and no hole.
    let first = list(&server, "limit=4").await;
    assert_eq!(first.matches.len(), 4);
    let cursor = first.next_cursor.clone().expect("a next page");
    let second = list(&server, &format!("limit=4&cursor={cursor}")).await;
    assert_eq!(second.next_cursor, None, "the last page");
    let paged: Vec<uuid::Uuid> = first
        .matches
        .iter()
        .chain(&second.matches)
        .map(|m| m.match_id)
        .collect();
    assert_eq!(paged, newest_first);
    assert_eq!(list_ids(&server, "").await, newest_first, "default page");

    // The summary of a listed match.
    let toll = &first
        .matches
        .iter()
        .chain(&second.matches)
        .collect::<Vec<_>>()[4];
    assert_eq!(toll.match_id, ids[1]);
    assert_eq!(toll.modules, vec![ModuleName::Tollkeepers]);
    assert_eq!(
        toll.players.iter().map(|p| p.colour).collect::<Vec<_>>(),
        [Colour::Red, Colour::Blue, Colour::Green]
    );
    assert_eq!((toll.seq, toll.status), (0, MatchStatus::Active));
    let one: AdminMatchSummary =
        admin_ok(&server, "GET", &format!("/api/admin/matches/{}", ids[1])).await;
    assert_eq!(&one, *toll);

    // By module, read from the stored setup.
    assert_eq!(list_ids(&server, "module=tollkeepers").await, [ids[1]]);
    assert_eq!(list_ids(&server, "module=messages").await, [ids[3]]);
    assert_eq!(list_ids(&server, "module=map").await, [ids[4]]);
    assert_eq!(list_ids(&server, "module=chips").await, [ids[4]]);
    assert_eq!(list_ids(&server, "module=inns_cathedrals").await, [ids[5]]);
    assert_eq!(list_ids(&server, "module=traders_builders").await, [ids[5]]);
    assert_eq!(
        list(&server, "module=traders_builders").await.matches[0].modules,
        [ModuleName::InnsCathedrals, ModuleName::TradersBuilders]
    );
    let on_map = list(&server, "module=map").await;
    assert_eq!(
        on_map.matches[0].modules,
        [ModuleName::Map, ModuleName::Chips]
    );
    assert_eq!(on_map.matches[0].map_id.as_deref(), Some("france"));

    // By status.
    assert_eq!(list_ids(&server, "status=active").await, newest_first);
    assert!(list_ids(&server, "status=finished").await.is_empty());
    let (status, text) = admin(
        &server,
        "POST",
        &format!("/api/admin/matches/{}/abort", ids[2]),
        "",
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(list_ids(&server, "status=aborted").await, [ids[2]]);
    assert_eq!(list_ids(&server, "status=active").await.len(), 5);

    // By creation time: `from` inclusive, `to` exclusive, together they cover the list.
    let t = one.created_at.clone();
    let from = list_ids(&server, &format!("from={t}")).await;
    let to = list_ids(&server, &format!("to={t}")).await;
    assert_eq!(from, newest_first[..5]);
    assert_eq!(to, [ids[0]]);
    let both = list_ids(
        &server,
        &format!(
            "from={t}&to={}",
            list(&server, "").await.matches[1].created_at
        ),
    )
    .await;
    assert_eq!(both, [ids[3], ids[2], ids[1]]);

    // Bad parameters are refused with the JSON error body.
    for q in [
        "limit=101",
        "limit=0",
        "status=nope",
        "module=dragons",
        "cursor=junk",
        "from=yesterday",
        "colour=red",
    ] {
        admin_refused(
            &server,
            "GET",
            &format!("/api/admin/matches?{q}"),
            400,
            ErrorCode::Malformed,
        )
        .await;
    }
    admin_refused(
        &server,
        "GET",
        &format!("/api/admin/matches/{}", uuid::Uuid::new_v4()),
        404,
        ErrorCode::UnknownMatch,
    )
    .await;
    server.stop().await;
}

/// The tiles drawn after the opening, in order, from the events clients saw.
fn drawn(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TileDrawn { tile, .. } => Some(tile.clone()),
            _ => None,
        })
        .collect()
}

async fn scenario_of(server: &TestServer, id: uuid::Uuid) -> Scenario {
    admin_ok(server, "GET", &format!("/api/admin/matches/{id}/scenario")).await
}

/// Replays an exported scenario with the rules crate, as the `scenario` binary does: its own
/// expectations hold, and it gives the events clients saw after the opening and the scores.
fn check_replay(s: &Scenario, client_events: &[Event], scores: &[u32]) {
    let out = rules::scenario::run(s).unwrap_or_else(|e| panic!("the export replays: {e}"));
    let opening = Game::start(s.setup.clone()).expect("starts").1.len();
    assert_eq!(&out.events[opening..], client_events);
    assert_eq!(out.scores, scores);
}

async fn log_state_secrets_and_scenario_of_a_whole_match(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut spectator = Follower::join(&server, id, None, None).await;
    for f in seats.iter_mut().chain(std::iter::once(&mut spectator)) {
        f.sync_first().await;
    }
    // The view a subscribed client had at each seq.
    let mut views: Vec<Value> = vec![spectator.mirror.view().cloned().expect("view")];
    let mut rng = Rng::new(0xad_0001);
    let mut checked_running = false;
    loop {
        let view = seats[0].view();
        if view.finished {
            break;
        }
        let (player, cmd) = pick_move(&view, &mut rng).expect("a move");
        let p = &mut seats[usize::from(player)];
        let cid = p.new_id();
        let seq = match p.command(&cid, cmd).await {
            CommandOutcome::Accepted { seq, .. } => seq,
            CommandOutcome::Rejected(e) => panic!("refused: {e:?}"),
        };
        for f in seats.iter_mut().chain(std::iter::once(&mut spectator)) {
            f.sync_to(seq).await;
        }
        views.push(spectator.mirror.view().cloned().expect("view"));
        if seq == 5 {
            checked_running = true;
            // While it runs: no secrets, and the export reveals none yet replays the same.
            admin_refused(
                &server,
                "GET",
                &format!("/api/admin/matches/{id}/secrets"),
                409,
                ErrorCode::NotFinished,
            )
            .await;
            let s = scenario_of(&server, id).await;
            assert_eq!(s.setup.seed, 0, "no seed of a running match");
            assert_eq!(s.steps.len(), 5);
            check_replay(
                &s,
                &spectator.events,
                &seats[0]
                    .view()
                    .players
                    .iter()
                    .map(|p| p.score)
                    .collect::<Vec<_>>(),
            );
        }
    }
    assert!(checked_running);
    let last = spectator.seq().expect("seq");
    let final_scores: Vec<u32> = seats[0].view().players.iter().map(|p| p.score).collect();

    // The summary knows the end.
    let s: AdminMatchSummary = admin_ok(&server, "GET", &format!("/api/admin/matches/{id}")).await;
    assert_eq!(s.status, MatchStatus::Finished);
    assert_eq!(s.seq, last);
    assert_eq!(s.scores.as_deref(), Some(final_scores.as_slice()));

    // The log, in pages of 7: every command once, by the players, with the events clients saw.
    let mut entries = Vec::new();
    let mut after = 0;
    loop {
        let page: AdminMatchLog = admin_ok(
            &server,
            "GET",
            &format!("/api/admin/matches/{id}/log?after={after}&limit=7"),
        )
        .await;
        assert!(page.commands.len() <= 7);
        entries.extend(page.commands);
        match page.next_after {
            Some(a) => after = a,
            None => break,
        }
    }
    assert_eq!(
        entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=last).collect::<Vec<_>>()
    );
    assert!(entries.iter().all(|e| e.origin == Origin::Player));
    let acked: Vec<(u8, String, u64)> = seats
        .iter()
        .flat_map(|f| {
            f.acks
                .iter()
                .map(|(c, q)| (f.seat.expect("seat"), c.clone(), *q))
        })
        .collect();
    for e in &entries {
        assert!(
            acked.contains(&(e.seat, e.command_id.clone(), e.seq)),
            "{} by {} at {}",
            e.command_id,
            e.seat,
            e.seq
        );
    }
    let logged: Vec<Event> = entries.iter().flat_map(|e| e.events.clone()).collect();
    assert_eq!(logged, spectator.events);

    // The state at a seq is the view the client had at that seq.
    for seq in [0, 1, last / 2, last - 1, last] {
        let state: Value = admin_ok(
            &server,
            "GET",
            &format!("/api/admin/matches/{id}/state?seq={seq}"),
        )
        .await;
        assert_eq!(state["seq"], seq);
        assert_eq!(state["view"], views[seq as usize], "view at seq {seq}");
    }
    admin_refused(
        &server,
        "GET",
        &format!("/api/admin/matches/{id}/state?seq={}", last + 1),
        400,
        ErrorCode::Malformed,
    )
    .await;

    // The secrets, now that it is over, are the real ones: the seed starts the same pile, and
    // the pile after the opening is the tiles that were drawn, in order.
    let secrets: AdminMatchSecrets =
        admin_ok(&server, "GET", &format!("/api/admin/matches/{id}/secrets")).await;
    assert_eq!(secrets.seq, last);
    assert_eq!(secrets.start.pile, drawn(&spectator.events));
    assert!(secrets.end.pile.is_empty(), "{:?}", secrets.end.pile);
    let reseeded = Game::start(Setup::new(
        vec![Colour::Red, Colour::Blue],
        secrets.start.seed,
    ))
    .expect("starts")
    .0
    .secrets();
    assert_eq!(reseeded, secrets.start);

    // The export replays to the same events and scores, with the real setup.
    let s = scenario_of(&server, id).await;
    assert_eq!(s.setup.seed, secrets.start.seed);
    assert_eq!(s.expect.finished, Some(true));
    check_replay(&s, &spectator.events, &final_scores);
    // ... and as a file for the `scenario` binary.
    let text = serde_json::to_string_pretty(&s).expect("serializes");
    let reread: Scenario = serde_json::from_str(&text).expect("a scenario file");
    check_replay(&reread, &spectator.events, &final_scores);

    // Reading secrets (refused and given) and exporting are in the audit trail.
    let a: AdminActionList =
        admin_ok(&server, "GET", &format!("/api/admin/actions?match_id={id}")).await;
    let trail: Vec<(&str, &str)> = a
        .actions
        .iter()
        .map(|a| (a.action.as_str(), a.outcome.as_str()))
        .collect();
    assert_eq!(
        trail,
        [
            ("scenario", "ok"),
            ("secrets", "ok"),
            ("scenario", "ok"),
            ("secrets", "not_finished"),
        ]
    );
    assert!(a.actions.iter().all(|a| a.actor == "admin_token"));
    server.stop().await;
}

async fn summary(server: &TestServer, id: uuid::Uuid) -> AdminMatchSummary {
    admin_ok(server, "GET", &format!("/api/admin/matches/{id}")).await
}

async fn abort_and_away_are_audited_and_abort_survives_a_restart(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut spectator = Follower::join(&server, id, None, None).await;
    for f in seats.iter_mut().chain(std::iter::once(&mut spectator)) {
        f.sync_first().await;
    }
    let mut rng = Rng::new(0xad_0002);
    play(&mut seats, &mut [], &mut rng, 2).await;

    // Away: marked with a time, shown in the summary, cleared.
    let away = format!("/api/admin/matches/{id}/away");
    let s: AdminMatchSummary = admin_ok_body(&server, "POST", &away, r#"{"seat":1}"#).await;
    assert!(s.players[1].away_since.is_some());
    assert!(s.players[0].away_since.is_none());
    assert!(summary(&server, id).await.players[1].away_since.is_some());
    let s: AdminMatchSummary =
        admin_ok_body(&server, "POST", &away, r#"{"seat":1,"away":false}"#).await;
    assert!(s.players[1].away_since.is_none());
    let s: AdminMatchSummary = admin_ok_body(&server, "POST", &away, r#"{"seat":0}"#).await;
    assert!(s.players[0].away_since.is_some());
    for (body, code) in [
        (r#"{"seat":7}"#, ErrorCode::Malformed),
        (r#"{"seat":"x"}"#, ErrorCode::Malformed),
        ("", ErrorCode::Malformed),
    ] {
        let (status, text) = admin(&server, "POST", &away, body).await;
        assert_eq!(status, 400, "{body}: {text}");
        let e: ErrorBody = serde_json::from_str(&text).expect("error body");
        assert_eq!(e.code, code);
    }

    // Abort: stored, the followers are told, and commands are refused with `aborted`.
    let s: AdminMatchSummary =
        admin_ok(&server, "POST", &format!("/api/admin/matches/{id}/abort")).await;
    assert_eq!(s.status, MatchStatus::Aborted);
    // The away marks had the server play the marked players' turns (no clock needed).
    assert!(
        s.seq > 2,
        "nothing played for the away players: seq {}",
        s.seq
    );
    let aborted_at = s.seq;
    let is_aborted =
        |m: &ServerMessage| matches!(m, ServerMessage::Error(b) if b.code == ErrorCode::Aborted);
    spectator.conn.wait_for(is_aborted).await.expect("told");
    let view = seats[0].view();
    let (player, cmd) = pick_move(&view, &mut rng).expect("a move");
    let p = &mut seats[usize::from(player)];
    match p.command("after-abort", cmd.clone()).await {
        CommandOutcome::Rejected(e) => assert_eq!(e.code, ErrorCode::Aborted, "{e:?}"),
        out => panic!("accepted after the abort: {out:?}"),
    }
    admin_refused(
        &server,
        "POST",
        &format!("/api/admin/matches/{id}/abort"),
        409,
        ErrorCode::NotActive,
    )
    .await;
    let (status, _) = admin(&server, "POST", &away, r#"{"seat":1}"#).await;
    assert_eq!(status, 409);
    // Over for good: its secrets may be read.
    let _: AdminMatchSecrets =
        admin_ok(&server, "GET", &format!("/api/admin/matches/{id}/secrets")).await;
    server.stop().await;

    // After a restart the match stays aborted: not resumed, commands and followers refused.
    let server = TestServer::start(db.config());
    assert_eq!(summary(&server, id).await.status, MatchStatus::Aborted);
    let mut f = client::Connection::connect(&server.ws())
        .await
        .expect("connect");
    f.set_read_timeout(Some(READ_TIMEOUT));
    f.auth(&created.seats[usize::from(player)].token)
        .await
        .expect("auth");
    match f.command("after-restart", cmd).await.expect("answer") {
        CommandOutcome::Rejected(e) => assert_eq!(e.code, ErrorCode::Aborted, "{e:?}"),
        out => panic!("accepted after the restart: {out:?}"),
    }
    f.subscribe(id, None).await.expect("subscribe");
    f.wait_for(is_aborted).await.expect("refused");
    let stats: Value = admin_ok(&server, "GET", "/api/admin/stats").await;
    assert_eq!(stats["matches_in_memory"], 0, "{stats}");

    // The audit trail, newest first, in pages.
    let a: AdminActionList =
        admin_ok(&server, "GET", &format!("/api/admin/actions?match_id={id}")).await;
    let trail: Vec<(&str, &str)> = a
        .actions
        .iter()
        .map(|a| (a.action.as_str(), a.outcome.as_str()))
        .collect();
    assert_eq!(
        trail,
        [
            ("secrets", "ok"),
            ("away", "not_active"),
            ("abort", "not_active"),
            ("abort", "ok"),
            ("away", "malformed"),
            ("away", "ok"),
            ("away", "ok"),
            ("away", "ok"),
        ]
    );
    assert_eq!(a.actions[3].detail["seq"], aborted_at);
    assert_eq!(
        a.actions[5].detail,
        serde_json::json!({"seat": 0, "away": true})
    );
    let page: AdminActionList = admin_ok(&server, "GET", "/api/admin/actions?limit=3").await;
    assert_eq!(page.actions.len(), 3);
    let before = page.next_before.expect("more");
    let rest: AdminActionList = admin_ok(
        &server,
        "GET",
        &format!("/api/admin/actions?before={before}&limit=100"),
    )
    .await;
    assert_eq!(rest.actions.len(), 5);
    assert_eq!(rest.next_before, None);
    server.stop().await;
}

/// An account, its session token, from `POST path` with `body`.
async fn account(server: &TestServer, path: &str, body: &str) -> (uuid::Uuid, String) {
    let (status, text) = http(
        server,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        body,
    )
    .await;
    assert_eq!(status, 201, "{path}: {text}");
    let v: Value = serde_json::from_str(&text).expect("json");
    let id = serde_json::from_value(v["account"]["id"].clone()).expect("account id");
    (id, v["token"].as_str().expect("token").to_string())
}

/// The admin role on an account. Granted by an admin (here the token), its
/// sessions (bearer or cookie) open every admin route and are named in the audit trail; a
/// guest cannot be made admin; taking the role away closes the API again.
async fn an_admin_account_opens_the_admin_api(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let (ann, ann_token) = account(
        &server,
        "/api/accounts",
        r#"{"name":"Ann","password":"correct horse"}"#,
    )
    .await;
    let (guest, guest_token) = account(&server, "/api/accounts/guest", r#"{"name":"Bo"}"#).await;
    let as_ann = format!("Bearer {ann_token}");
    let cookie = format!("session={ann_token}");
    let matches = "/api/admin/matches";
    let (status, _) = http(&server, "GET", matches, &[("Authorization", &as_ann)], "").await;
    assert_eq!(status, 401, "not an admin yet");

    let role = |who: uuid::Uuid| format!("/api/admin/accounts/{who}/admin");
    let (status, text) = admin(&server, "PUT", &role(guest), r#"{"admin":true}"#).await;
    assert_eq!(status, 404, "a guest cannot be admin: {text}");
    let (status, text) = admin(&server, "PUT", &role(ann), r#"{"admin":true}"#).await;
    assert_eq!(status, 204, "{text}");

    for header in [
        ("Authorization", as_ann.as_str()),
        ("Cookie", cookie.as_str()),
    ] {
        let (status, text) = http(&server, "GET", matches, &[header], "").await;
        assert_eq!(status, 200, "{header:?}: {text}");
        let list: AdminMatchList = serde_json::from_str(&text).expect("a match list");
        assert!(list.matches.iter().any(|m| m.match_id == id));
    }
    let guest_auth = format!("Bearer {guest_token}");
    let (status, _) = http(
        &server,
        "GET",
        matches,
        &[("Authorization", &guest_auth)],
        "",
    )
    .await;
    assert_eq!(status, 401, "a guest's session is no admin's");

    // Ann acts; the audit trail names her account.
    let (status, text) = http(
        &server,
        "POST",
        &format!("/api/admin/matches/{id}/away"),
        &[
            ("Authorization", &as_ann),
            ("Content-Type", "application/json"),
        ],
        r#"{"seat":1}"#,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let a: AdminActionList = admin_ok(&server, "GET", "/api/admin/actions").await;
    let actors: Vec<(&str, &str)> = a
        .actions
        .iter()
        .map(|x| (x.action.as_str(), x.actor.as_str()))
        .collect();
    let ann_actor = format!("account:{ann}");
    assert_eq!(
        actors,
        [
            ("away", ann_actor.as_str()),
            ("role", "admin_token"),
            ("role", "admin_token"),
        ]
    );

    let (status, _) = admin(&server, "PUT", &role(ann), r#"{"admin":false}"#).await;
    assert_eq!(status, 204);
    let (status, _) = http(&server, "GET", matches, &[("Authorization", &as_ann)], "").await;
    assert_eq!(status, 401, "the role taken away");
    server.stop().await;
}

/// A match started from a lobby of `seats` seats: the guests of `tokens` take the first seats
/// (the first is host), bots the rest. Its id.
async fn lobby_match(server: &TestServer, tokens: &[&str], seats: u8) -> uuid::Uuid {
    use crate::lobby::{call, join, lobby_of, ready};
    use serde_json::json;
    let host = tokens[0];
    let (s, v) = call(
        server,
        "POST",
        "/api/lobbies",
        Some(host),
        Some(json!({"name": "Filtered", "seats": seats})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let id = lobby_of(v).id;
    for t in &tokens[1..] {
        let (s, v) = join(server, id, t, json!({})).await;
        assert_eq!(s, 200, "{v}");
    }
    for seat in tokens.len()..usize::from(seats) {
        let (s, v) = call(
            server,
            "POST",
            &format!("/api/lobbies/{id}/bot"),
            Some(host),
            Some(json!({ "seat": seat })),
        )
        .await;
        assert_eq!(s, 200, "{v}");
    }
    for t in tokens {
        ready(server, id, t).await;
    }
    let start = format!("/api/lobbies/{id}/start");
    let (s, v) = call(server, "POST", &start, Some(host), None).await;
    assert_eq!(s, 201, "{v}");
    serde_json::from_value(v["match_id"].clone()).expect("match id")
}

/// `player`: by account id or by name (any case), with keyset pages; other players' matches and
/// matches without accounts are not listed; an unknown player lists nothing; a value that is
/// neither an id nor a name is refused. Each seat of a summary names its account.
async fn list_filters_by_player(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ada, ada_token) = crate::lobby::guest(&server, "Ada").await;
    let (bo, bo_token) = crate::lobby::guest(&server, "Bo").await;
    let anonymous = create(&server, 2).await.match_id;
    let ada_alone = lobby_match(&server, &[&ada_token], 2).await;
    let bo_alone = lobby_match(&server, &[&bo_token], 2).await;
    let both = lobby_match(&server, &[&bo_token, &ada_token], 3).await;

    // Newest first, as the unfiltered list orders them.
    let all = list_ids(&server, "").await;
    let mut of_ada: Vec<_> = all
        .iter()
        .copied()
        .filter(|m| [ada_alone, both].contains(m))
        .collect();
    assert_eq!(of_ada.len(), 2, "{all:?}");
    assert!(all.contains(&anonymous) && all.contains(&bo_alone));
    for player in [
        ada.to_string(),
        "Ada".into(),
        "aDA".into(),
        "%20ada%20".into(),
    ] {
        assert_eq!(
            list_ids(&server, &format!("player={player}")).await,
            of_ada,
            "player={player}"
        );
    }
    let mut of_bo: Vec<_> = all
        .iter()
        .copied()
        .filter(|m| [bo_alone, both].contains(m))
        .collect();
    assert_eq!(list_ids(&server, &format!("player={bo}")).await, of_bo);
    assert_eq!(list_ids(&server, "player=BO").await, of_bo);

    // Pages of one: each filtered match once, in order, then no cursor.
    for (player, want) in [(ada, &mut of_ada), (bo, &mut of_bo)] {
        let mut got = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = list(&server, &format!("player={player}&limit=1{cursor}")).await;
            assert!(page.matches.len() <= 1);
            got.extend(page.matches.iter().map(|m| m.match_id));
            match page.next_cursor {
                Some(c) => cursor = format!("&cursor={c}"),
                None => break,
            }
        }
        assert_eq!(&got, want);
    }
    // With the other filters: Ada's three-seat match is the only one created after Bo's.
    let from = list(&server, "")
        .await
        .matches
        .iter()
        .find(|m| m.match_id == both)
        .map(|m| m.created_at.clone())
        .expect("listed");
    let from = from.replace('+', "%2B");
    assert_eq!(
        list_ids(&server, &format!("player=ada&from={from}")).await,
        vec![both]
    );

    // Each seat names its account: the lobby's players, not its bot nor a seat token's seat.
    let accounts = |m: &AdminMatchSummary| -> Vec<(Option<uuid::Uuid>, Option<String>)> {
        m.players
            .iter()
            .map(|p| (p.account, p.name.clone()))
            .collect()
    };
    let listed = list(&server, "").await.matches;
    let of = |id| listed.iter().find(|m| m.match_id == id).expect("listed");
    assert_eq!(
        accounts(of(both)),
        [
            (Some(bo), Some("Bo".to_string())),
            (Some(ada), Some("Ada".to_string())),
            (None, None)
        ]
    );
    assert_eq!(accounts(of(anonymous)), [(None, None), (None, None)]);
    let one: AdminMatchSummary =
        admin_ok(&server, "GET", &format!("/api/admin/matches/{ada_alone}")).await;
    assert_eq!(
        accounts(&one),
        [(Some(ada), Some("Ada".to_string())), (None, None)]
    );

    // Unknown players: nothing.
    let nobody = uuid::Uuid::new_v4();
    assert!(
        list_ids(&server, &format!("player={nobody}"))
            .await
            .is_empty()
    );
    assert!(list_ids(&server, "player=Nobody").await.is_empty());

    // Neither an account id nor a name.
    let long = "x".repeat(25);
    for bad in ["", "%20%20", "a%01b", long.as_str()] {
        admin_refused(
            &server,
            "GET",
            &format!("/api/admin/matches?player={bad}"),
            400,
            ErrorCode::Malformed,
        )
        .await;
    }
    server.stop().await;
}
