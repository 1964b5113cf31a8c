//! A [`MatchStream`](carcassonne_client::MatchStream) whose connection is cut (a TCP proxy
//! between it and a real server drops every connection, and refuses new ones for a while)
//! reconnects with backoff and resumes with `since`: its diffs run on without a gap or a repeat,
//! and the match is played to its end.

mod common;

use carcassonne_client::{Client, ClientError, Reconnect};
use common::{TestServer, consecutive, no_gap_no_repeat, play_random};
use protocol::CreateMatch;
use rules::Colour;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A TCP proxy to `target` that can be cut: [`Proxy::cut`] drops every connection and refuses
/// (accepts and drops) new ones until [`Proxy::restore`].
#[derive(Clone)]
struct Proxy {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    /// Connections dropped at once because the proxy was down.
    refused: Arc<AtomicUsize>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let proxy = Proxy {
            addr: listener.local_addr().expect("addr"),
            up: Arc::new(AtomicBool::new(true)),
            refused: Arc::new(AtomicUsize::new(0)),
            links: Arc::new(Mutex::new(Vec::new())),
        };
        let p = proxy.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !p.up.load(Ordering::SeqCst) {
                    p.refused.fetch_add(1, Ordering::SeqCst);
                    continue; // dropped: the client sees the connection end at once
                }
                let link = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                p.links.lock().expect("links").push(link);
            }
        });
        proxy
    }

    /// Drops every connection (both sockets close) and refuses new ones.
    fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        for link in self.links.lock().expect("links").drain(..) {
            link.abort();
        }
    }

    /// Lets connections through again once `n` have been refused since the start.
    fn restore_after_refusing(&self, n: usize) {
        let p = self.clone();
        tokio::spawn(async move {
            while p.refused.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            p.up.store(true, Ordering::SeqCst);
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_connection_resumes_with_since_without_a_gap_or_a_repeat() -> Result<(), ClientError>
{
    let server = TestServer::start();
    let proxy = Proxy::start(server.addr).await;
    let direct = Client::new(&server.http())?;
    let created = direct
        .create_match(&CreateMatch {
            players: vec![Colour::Red, Colour::Blue],
            modules: Default::default(),
            meeples: None,
            draw_order: None,
            clock: None,
        })
        .await?;
    let patient = Reconnect {
        first_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(200),
        max_attempts: 1000,
    };
    let via_proxy = Client::new(&format!("http://{}", proxy.addr))?.with_reconnect(patient);
    let mut red = via_proxy
        .play_with_token(created.match_id, &created.seats[0].token)
        .await?;
    let mut blue = direct
        .play_with_token(created.match_id, &created.seats[1].token)
        .await?;
    // Two cuts, each lasting until two attempts to reconnect were refused. Both seats play
    // together: the first to fail ends the test.
    let cuts = [10, 41];
    let red_plays = play_random(&mut red, 1, |seq| {
        if let Some(i) = cuts.iter().position(|&c| c == seq) {
            proxy.cut();
            proxy.restore_after_refusing(2 * (i + 1));
        }
    });
    let (red_played, blue_played) = tokio::try_join!(red_plays, play_random(&mut blue, 2, |_| {}))?;

    // Red (seat 0, who moves first) subscribed at seq 0; blue may have subscribed later.
    assert_eq!(
        red_played.snapshots,
        vec![0],
        "red: one snapshot, then diffs only"
    );
    for (seat, played) in [("red", &red_played), ("blue", &blue_played)] {
        assert!(played.finished, "{seat} saw the end: {played:?}");
        let [from] = played.snapshots[..] else {
            panic!("{seat}: one snapshot, then diffs only: {played:?}");
        };
        assert!(consecutive(&played.diffs, from + 1), "{seat}: {played:?}");
        assert!(played.refusals.is_empty(), "{seat}: {:?}", played.refusals);
    }
    assert!(red_played.diffs.ends_with(&blue_played.diffs));
    assert!(red_played.diffs.len() > 41, "the match went past both cuts");
    assert_eq!(red_played.reconnects.len(), cuts.len(), "{red_played:?}");
    for (attempts, close) in &red_played.reconnects {
        assert!(
            *attempts >= 3,
            "two refused attempts, then one through: {attempts}"
        );
        assert_eq!(*close, None, "a cut sends no close frame");
    }
    assert!(blue_played.reconnects.is_empty());
    Ok(())
}

/// With reconnection off, a cut ends the stream with the error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_reconnection_a_cut_is_an_error() -> Result<(), ClientError> {
    let server = TestServer::start();
    let proxy = Proxy::start(server.addr).await;
    let client = Client::new(&format!("http://{}", proxy.addr))?.with_reconnect(Reconnect::never());
    let created = client
        .create_match(&CreateMatch {
            players: vec![Colour::Red, Colour::Blue],
            modules: Default::default(),
            meeples: None,
            draw_order: None,
            clock: None,
        })
        .await?;
    let mut watcher = client.watch(created.match_id).await?;
    assert!(matches!(
        watcher.next().await?,
        Some(carcassonne_client::MatchEvent::Connected { seat: None, .. })
    ));
    assert!(matches!(
        watcher.next().await?,
        Some(carcassonne_client::MatchEvent::Snapshot { seq: 0 })
    ));
    proxy.cut();
    let end = watcher.next().await;
    assert!(end.is_err(), "{end:?}");
    Ok(())
}

/// A graceful restart of the server mid-match (it closes every connection with 1001, "going
/// away") is a reconnection for both seats: the match, recovered from the store, is played to
/// its end, each seat's views following on without a gap or a repeat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_mid_match_is_a_reconnection() -> Result<(), ClientError> {
    let server = TestServer::start();
    let patient = Reconnect {
        first_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(200),
        max_attempts: 1000,
    };
    let client = Client::new(&server.http())?.with_reconnect(patient);
    let created = client
        .create_match(&CreateMatch {
            players: vec![Colour::Red, Colour::Blue],
            modules: Default::default(),
            meeples: None,
            draw_order: None,
            clock: None,
        })
        .await?;
    let mut red = client
        .play_with_token(created.match_id, &created.seats[0].token)
        .await?;
    let mut blue = client
        .play_with_token(created.match_id, &created.seats[1].token)
        .await?;
    let (at_20, restart_now) = tokio::sync::oneshot::channel::<()>();
    let mut at_20 = Some(at_20);
    let red_plays = play_random(&mut red, 1, |seq| {
        if seq == 20
            && let Some(tx) = at_20.take()
        {
            let _ = tx.send(());
        }
    });
    let restarts = async {
        let _ = restart_now.await;
        Ok::<_, ClientError>(server.restart().await)
    };
    let (red_played, blue_played, _server) =
        tokio::try_join!(red_plays, play_random(&mut blue, 2, |_| {}), restarts)?;

    for (seat, played) in [("red", &red_played), ("blue", &blue_played)] {
        assert!(played.finished, "{seat} saw the end: {played:?}");
        assert!(no_gap_no_repeat(played), "{seat}: {:?}", played.views);
        assert!(played.refusals.is_empty(), "{seat}: {:?}", played.refusals);
        assert_eq!(
            played.reconnects.len(),
            1,
            "{seat}: {:?}",
            played.reconnects
        );
        assert_eq!(
            played.reconnects[0].1,
            Some(1001),
            "{seat}: the server went away"
        );
    }
    Ok(())
}
