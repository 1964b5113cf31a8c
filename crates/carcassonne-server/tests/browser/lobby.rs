//! The lobby pages: guests and a registered account meet, pick colours, get ready and play their
//! seats; a private lobby needs its invite code; a revoked session signs the room out.

use crate::admin::admin_page;
use crate::cdp::{Browser, Page};
use crate::clicks::*;
use crate::harness::*;
use rules::Command;
use serde_json::json;
use std::path::Path;

/// Enters the lobby page as a guest called `name` (the session cookie lands in the page's own
/// browser context) and waits for the lobby list.
pub(crate) async fn guest_page(
    b: &Browser,
    server: &Server,
    name: &str,
    width: u32,
    height: u32,
) -> Page {
    let p = b.page(width, height).await;
    if width < 600 {
        p.viewport(width, height, true).await;
    }
    p.goto(&format!("{}/", server.http())).await;
    p.click("#guest-name").await;
    p.screenshot("lobby-entry").await;
    p.eval(&format!(
        "document.getElementById('guest-name').value = {}",
        json!(name)
    ))
    .await;
    p.click("#guest-form button").await;
    p.wait(
        &format!("document.body.dataset.account === {}", json!(name)),
        "signed in",
    )
    .await;
    p.wait(
        "document.getElementById('browse').dataset.loaded === 'true'",
        "the lobby list",
    )
    .await;
    p
}

/// Fills the create form and creates a lobby; returns its id once the page shows the room.
async fn create_lobby(p: &Page, name: &str, private: bool) -> String {
    p.eval(&format!(
        "document.getElementById('new-name').value = {}",
        json!(name)
    ))
    .await;
    p.click("#new-tollkeepers").await;
    p.eval("document.getElementById('new-clock').value = '300000+20000'")
        .await;
    if private {
        p.click("#new-private").await;
    }
    p.click("#create-lobby").await;
    p.wait(
        &format!(
            "document.getElementById('room-name').textContent === {} && document.querySelectorAll('#seats tr').length === 2",
            json!(name)
        ),
        "the new lobby's room",
    )
    .await;
    text_of(
        p,
        "new URLSearchParams(location.hash.slice(1)).get('lobby')",
    )
    .await
}

/// Both seats ready, the host starts, both pages land in the match on their own seat.
async fn ready_and_start(host: &Page, guest: &Page) {
    for p in [host, guest] {
        p.click("#ready").await;
        p.wait(
            "document.getElementById('ready').textContent === 'Not ready'",
            "marked ready",
        )
        .await;
    }
    host.wait("!document.getElementById('start').disabled", "all ready")
        .await;
    host.click("#start").await;
    for (seat, p) in [host, guest].into_iter().enumerate() {
        p.wait(
            &format!("window.carcassonne && window.carcassonne.view && window.carcassonne.seat === {seat}"),
            "the match, seated",
        )
        .await;
    }
}

/// The player to move places the first legal placement by clicking, then passes the meeple.
pub(crate) async fn click_first_legal(p: &Page) {
    let d = p
        .eval("window.carcassonne.view.decisions.find(d => d.type === 'place_tile')")
        .await;
    let placement = &d["placements"][0];
    let cmd: Command = serde_json::from_value(json!({
        "type": "place_tile",
        "pos": placement["pos"],
        "rotation": placement["rotations"][0],
    }))
    .expect("a place_tile command");
    let seq = page_seq(p).await.expect("seq");
    click_command(p, &cmd).await;
    wait_seq(p, seq + 1).await;
    p.wait(
        "window.carcassonne.view.decisions.some(d => d.type === 'place_follower') || window.carcassonne.view.turn > 1",
        "the follower decision",
    )
    .await;
    if p.eval("window.carcassonne.view.decisions.some(d => d.type === 'place_follower')")
        .await
        == json!(true)
    {
        click_command(p, &Command::Pass {}).await;
        // A floor, not an exact seq: a bot may answer at once after the pass.
        p.wait(
            &format!("window.carcassonne.seq >= {}", seq + 2),
            "the pass applied",
        )
        .await;
    }
}

/// The host puts a bot of `level` on `seat` and waits until the lobby shows it.
pub(crate) async fn seat_bot(p: &Page, seat: usize, level: &str) {
    p.eval(&format!(
        "document.getElementById('bot-level-{seat}').value = '{level}'"
    ))
    .await;
    p.click(&format!("#bot-{seat}")).await;
    p.wait(
        &format!(
            "document.querySelector('#seats tr[data-seat=\"{seat}\"]').textContent.includes('Bot ({level}')"
        ),
        "the bot seated",
    )
    .await;
}

/// The host, alone with bots, gets ready, starts, and waits until the page plays seat 0.
pub(crate) async fn start_with_bots(p: &Page) {
    p.click("#ready").await;
    p.wait("!document.getElementById('start').disabled", "all ready")
        .await;
    p.click("#start").await;
    p.wait(
        "window.carcassonne && window.carcassonne.view && window.carcassonne.seat === 0",
        "the match, seated",
    )
    .await;
}

/// Two guests in separate browser contexts (separate cookie jars) meet in a lobby from the list, get ready, the host starts, and both pages play their
/// seat (taken with the session cookie) by clicking; a spectator then watches the running public
/// match from the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_guests_meet_start_and_play_and_a_spectator_watches() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    let lobby = create_lobby(&ann, "Friday game", false).await;
    // The host puts a bot on the free seat and takes it off again.
    ann.click("#bot-1").await;
    let seat1 = "document.querySelector('#seats tr[data-seat=\"1\"]').textContent";
    ann.wait(&format!("{seat1}.includes('Bot')"), "the bot seated")
        .await;
    ann.click("#kick-1").await;
    ann.wait(&format!("{seat1}.includes('free')"), "the bot removed")
        .await;
    // Bob, on a phone, finds the lobby in the list (filtered by module and free seats) and joins.
    let bob = guest_page(&b, &server, "Bob", 390, 844).await;
    bob.eval("document.getElementById('filter-module').value = 'tollkeepers'; document.getElementById('filter-module').dispatchEvent(new Event('change'))").await;
    bob.wait(
        &format!("document.querySelector('button[data-lobby=\"{lobby}\"]')"),
        "the lobby listed",
    )
    .await;
    bob.screenshot("lobby-list-phone").await;
    bob.click(&format!("button[data-lobby=\"{lobby}\"]")).await;
    for p in [&ann, &bob] {
        p.wait(
            "(rows => rows.length === 2 && rows.every(r => !r.textContent.includes('free')))([...document.querySelectorAll('#seats tr')])",
            "both seats taken",
        )
        .await;
    }
    assert!(
        text_of(&bob, "document.getElementById('seats').textContent")
            .await
            .contains("Ann (host)")
    );
    // Bob picks pink; Ann's page shows it (pushed over her WebSocket).
    bob.eval("(s => { s.value = 'pink'; s.dispatchEvent(new Event('change')); })(document.getElementById('my-colour'))").await;
    ann.wait(
        "document.querySelector('#seats tr[data-seat=\"1\"] .swatch').title === 'Pink'",
        "Bob's colour pushed",
    )
    .await;
    ann.screenshot("lobby-room").await;
    ready_and_start(&ann, &bob).await;
    assert_eq!(
        bob.eval("window.carcassonne.view.players[1].colour").await,
        json!("pink")
    );
    assert_eq!(
        ann.eval("window.carcassonne.view.modules.tollkeepers")
            .await,
        json!(true)
    );
    // One move each, by clicking.
    click_first_legal(&ann).await;
    let seq = page_seq(&ann).await.expect("seq");
    wait_seq(&bob, seq).await;
    click_first_legal(&bob).await;
    let seq = page_seq(&bob).await.expect("seq");
    wait_seq(&ann, seq).await;
    assert_eq!(page_view(&ann).await, page_view(&bob).await);
    bob.screenshot("lobby-match-phone").await;

    // A spectator (another guest) sees the running match in the list and watches it.
    let eve = guest_page(&b, &server, "Eve", 1280, 720).await;
    eve.wait(
        "document.querySelector('#running a')",
        "the running match listed",
    )
    .await;
    eve.screenshot("lobby-list").await;
    eve.click("#running a").await;
    eve.wait(
        "window.carcassonne && window.carcassonne.view",
        "the watched match",
    )
    .await;
    wait_seq(&eve, seq).await;
    assert_eq!(eve.eval("window.carcassonne.seat").await, json!(null));
    assert_eq!(page_view(&eve).await, page_view(&ann).await);
    eve.screenshot("lobby-spectator").await;
    // The table names the seats by their accounts, for players and the spectator alike; the
    // names come with the view, so a reload keeps them.
    assert_eq!(
        ann.eval("window.carcassonne.view.names").await,
        json!([{"name": "Ann"}, {"name": "Bob"}])
    );
    for p in [&ann, &eve] {
        let names = p
            .eval("[...document.querySelectorAll('#players .name')].map((n) => n.textContent)")
            .await;
        assert_eq!(
            names,
            json!(["Ann (Red)", "Bob (Pink)"]),
            "the table's names"
        );
        let turn = text_of(p, "document.getElementById('turn').textContent").await;
        let active = p.eval("window.carcassonne.view.active").await;
        let who = if active == json!(0) { "Ann" } else { "Bob" };
        assert!(turn.contains(who), "the turn line names {who}: {turn}");
    }

    // Bob logs out everywhere (as from another tab): the server closes his table's connection
    // (4002), and the page says so instead of reconnecting to a seat it no longer holds.
    assert_eq!(
        bob.eval("document.body.dataset.status").await,
        json!("live")
    );
    bob.eval("fetch('/api/sessions', { method: 'DELETE' }).then((r) => r.status)")
        .await;
    bob.wait(
        "document.body.dataset.status === 'signed_out'",
        "the page signed out",
    )
    .await;
    assert!(
        text_of(&bob, "document.getElementById('status').textContent")
            .await
            .contains("signed out")
    );
    // Ann's table goes on.
    click_first_legal(&ann).await;
    let next = page_seq(&ann).await.expect("seq");
    assert!(next > seq);
    wait_seq(&eve, next).await;

    // The admin console names the accounts that hold the seats, in the list and the match.
    let match_id = ann.eval("window.carcassonne.matchId").await;
    let match_id = match_id.as_str().expect("the match id");
    let admin = admin_page(&b, &server, ADMIN_TOKEN, "").await;
    let row = format!("document.querySelector('#matches tr[data-match=\"{match_id}\"]')");
    admin.wait(&row, "the match listed").await;
    let listed = text_of(&admin, &format!("{row}.textContent")).await;
    assert!(listed.contains("Ann") && listed.contains("Bob"), "{listed}");
    admin
        .goto(&format!("{}/admin#match={match_id}", server.http()))
        .await;
    admin
        .wait(
            "document.querySelectorAll('#seats li').length === 2",
            "the seats",
        )
        .await;
    assert_eq!(
        admin.eval("[...document.querySelectorAll('#seats li')].map((li) => li.textContent.split(')')[1].split('away')[0].split('present')[0].trim())").await,
        json!([": Ann", ": Bob"])
    );
}

/// The host seats a bot at a chosen level: the lobby shows it, the match names it, and it plays its
/// seat (a search bot: it reads the public history and thinks off the server's async tasks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_bot_at_a_chosen_level_plays_its_seat() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    create_lobby(&ann, "Against the machine", false).await;
    seat_bot(&ann, 1, "medium").await;
    start_with_bots(&ann).await;
    assert_eq!(
        ann.eval("window.carcassonne.view.names").await,
        json!([{"name": "Ann"}, {"name": "Bot (medium)", "bot": true}])
    );
    // Ann's turn by clicking; then the bot's whole turn comes without anyone clicking.
    click_first_legal(&ann).await;
    ann.wait(
        "window.carcassonne.view.active === 0 && window.carcassonne.view.turn >= 3",
        "the bot's turn played",
    )
    .await;
    let (_, view) = server_view(
        &server,
        serde_json::from_value(ann.eval("window.carcassonne.matchId").await).expect("match id"),
    )
    .await;
    let bot_tiles = view["board"].as_object().expect("board").len();
    // The start tile, Ann's and the bot's.
    assert!(bot_tiles >= 3, "{view}");
    ann.screenshot("lobby-bot-medium").await;
}

/// Every level at once: the host seats a `random`, an `easy`, a `medium` and a `hard` bot in a
/// five-seat lobby; the match names each, and each plays its whole turn after the host's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bot_level_plays_its_seat() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    ann.eval("document.getElementById('new-name').value = 'Four machines'")
        .await;
    ann.eval("document.getElementById('new-seats').value = '5'")
        .await;
    ann.click("#create-lobby").await;
    ann.wait(
        "document.querySelectorAll('#seats tr').length === 5",
        "the five-seat room",
    )
    .await;
    for (i, level) in ["random", "easy", "medium", "hard"].iter().enumerate() {
        seat_bot(&ann, i + 1, level).await;
    }
    start_with_bots(&ann).await;
    let names = ann
        .eval("window.carcassonne.view.names.map((n) => n.name)")
        .await;
    assert_eq!(
        names,
        json!([
            "Ann",
            "Bot (random)",
            "Bot (easy)",
            "Bot (medium)",
            "Bot (hard)"
        ])
    );
    click_first_legal(&ann).await;
    // Four bots' turns (the hard one thinks about a second a decision), then Ann's again.
    ann.wait(
        "window.carcassonne.view.active === 0 && window.carcassonne.view.turn >= 6",
        "every bot's turn played",
    )
    .await;
    let (_, view) = server_view(
        &server,
        serde_json::from_value(ann.eval("window.carcassonne.matchId").await).expect("match id"),
    )
    .await;
    let tiles = view["board"].as_object().expect("board").len();
    assert!(tiles >= 6, "the start tile, Ann's and four bots': {view}");
}

/// A session revoked while its lobby room is open (logged out in another tab): the server closes
/// the room's connection (4002) and the page starts again at the entry form, signed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_room_signs_out_when_its_session_is_revoked() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    create_lobby(&ann, "Short night", false).await;
    assert!(ann.eval("document.getElementById('entry').hidden").await == json!(true));
    ann.eval("fetch('/api/sessions', { method: 'DELETE' }).then((r) => r.status)")
        .await;
    ann.wait(
        "document.getElementById('entry') && !document.getElementById('entry').hidden",
        "the entry form again",
    )
    .await;
    assert_eq!(
        ann.eval("document.body.dataset.account").await,
        json!(""),
        "signed out"
    );
}

/// A private lobby is not listed; its invite link seats a guest; a wrong code is refused in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_private_needs_its_invite_code() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    let lobby = create_lobby(&ann, "Club night", true).await;
    let link = text_of(&ann, "document.getElementById('room-link').value").await;
    assert!(link.contains(&format!("#lobby={lobby}&code=")), "{link}");
    let shot = ann.screenshot("lobby").await;
    if std::env::var("UPDATE_DOCS_SCREENSHOTS").is_ok() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/lobby.png");
        std::fs::copy(&shot, docs).expect("copy the screenshot to docs/");
    }

    let bob = registered_page(&b, &server, "Bob", "a long enough secret").await;
    assert_eq!(
        bob.eval(&format!(
            "!!document.querySelector('[data-lobby=\"{lobby}\"]')"
        ))
        .await,
        json!(false),
        "a private lobby is not listed"
    );
    // A wrong code: refused, in words.
    bob.goto(&format!("{}/#lobby={lobby}&code=WRONG", server.http()))
        .await;
    bob.wait(
        "!document.getElementById('lobby-error').hidden",
        "the refusal",
    )
    .await;
    let refused = text_of(&bob, "document.getElementById('lobby-error').textContent").await;
    assert!(refused.contains("invite code"), "{refused}");
    // The invite link, pasted in the list's form, opens the room; Bob sits down.
    bob.goto(&format!("{}/", server.http())).await;
    bob.wait(
        "document.getElementById('browse').dataset.loaded === 'true'",
        "the list",
    )
    .await;
    bob.eval(&format!(
        "document.getElementById('invite-link').value = {}",
        json!(link)
    ))
    .await;
    bob.click("#invite-form button").await;
    bob.click("#sit-1").await;
    ann.wait(
        "document.querySelector('#seats tr[data-seat=\"1\"]').textContent.includes('Bob')",
        "Bob seated, pushed to Ann",
    )
    .await;
    // The host kicks Bob: his page says so and shows the seat free; he sits down again.
    ann.click("#kick-1").await;
    bob.wait(
        "document.getElementById('lobby-error').textContent.includes('removed you') && document.querySelector('#seats tr[data-seat=\"1\"]').textContent.includes('free')",
        "Bob told he was removed",
    )
    .await;
    bob.click("#sit-1").await;
    ann.wait(
        "document.querySelector('#seats tr[data-seat=\"1\"]').textContent.includes('Bob')",
        "Bob seated again",
    )
    .await;
    bob.wait("document.getElementById('ready')", "Bob's controls back")
        .await;
    ready_and_start(&ann, &bob).await;
    bob.screenshot("lobby-private-match").await;

    // Its match is watched only with the code.
    let id = text_of(&ann, "window.carcassonne.matchId").await;
    let code = link.rsplit("code=").next().unwrap_or_default().to_string();
    let eve = b.page(1280, 720).await;
    eve.goto(&format!("{}/watch/{id}", server.http())).await;
    eve.wait("!document.getElementById('error').hidden", "the refusal")
        .await;
    let refused = text_of(&eve, "document.getElementById('error').textContent").await;
    assert!(refused.contains("invite"), "{refused}");
    assert_eq!(eve.eval("window.carcassonne.view").await, json!(null));
    eve.goto(&format!("{}/watch/{id}#code={code}", server.http()))
        .await;
    eve.wait(
        "window.carcassonne && window.carcassonne.view",
        "the watched match",
    )
    .await;
    assert_eq!(page_view(&eve).await, page_view(&ann).await);
}

/// Registers `name` on the lobby page, logs out and logs in again with the password.
async fn registered_page(b: &Browser, server: &Server, name: &str, password: &str) -> Page {
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/", server.http())).await;
    let fill = format!(
        "document.getElementById('login-name').value = {}; document.getElementById('login-password').value = {}",
        json!(name),
        json!(password)
    );
    p.click("#login-name").await;
    p.eval(&fill).await;
    p.click("#register").await;
    let signed_in = format!("document.body.dataset.account === {}", json!(name));
    p.wait(&signed_in, "registered").await;
    p.click("#logout").await;
    p.wait("!document.getElementById('entry').hidden", "logged out")
        .await;
    p.eval(&fill).await;
    p.click("#login-form button").await;
    p.wait(&signed_in, "logged in again").await;
    p.wait(
        "document.getElementById('browse').dataset.loaded === 'true'",
        "the lobby list",
    )
    .await;
    p
}
