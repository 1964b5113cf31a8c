//! `https://` and `wss://` through rustls: a TLS terminator (tokio-rustls, with a certificate
//! from a test authority made here) in front of a real server. A client that trusts the
//! authority signs up and plays over TLS; one that trusts only the public roots is refused.

mod common;

use carcassonne_client::{Client, ClientError, MatchEvent, Tls};
use common::TestServer;
use protocol::CreateMatch;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use rules::Colour;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::{TcpListener, TcpStream};

/// A test authority's certificate (PEM) and a server configuration with a certificate for
/// `localhost` that it signed.
fn authority_and_server_config() -> (String, rustls::ServerConfig) {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
    let leaf_key = KeyPair::generate().expect("leaf key");
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .expect("leaf params")
        .signed_by(&leaf_key, &ca, &ca_key)
        .expect("leaf certificate");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    #[allow(deprecated)] // ring, as the client's provider
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::clone(leaf.der())], key)
        .expect("server certificate");
    (ca.pem(), config)
}

/// Terminates TLS on an ephemeral port and forwards the plain bytes to `target`; counts the
/// completed handshakes.
async fn tls_terminator(
    target: SocketAddr,
    config: rustls::ServerConfig,
) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let handshakes = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&handshakes);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let counted = Arc::clone(&counted);
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                if let Ok(mut plain) = TcpStream::connect(target).await {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                }
            });
        }
    });
    (port, handshakes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_trusting_the_authority_plays_over_https_and_wss() -> Result<(), ClientError> {
    let server = TestServer::start();
    let (ca_pem, config) = authority_and_server_config();
    let (port, handshakes) = tls_terminator(server.addr, config).await;
    let base = format!("https://localhost:{port}");

    let mut client = Client::new(&base)?.with_tls(Tls::with_ca_pem(ca_pem.as_bytes())?);
    assert_eq!(client.ws_url(), format!("wss://localhost:{port}/ws"));
    let me = client.guest("tls bot").await?;
    assert_eq!(client.me().await?, me);
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
    assert!(
        matches!(
            red.next().await?,
            Some(MatchEvent::Connected { seat: Some(0), .. })
        ),
        "the seat is taken over wss"
    );
    assert_eq!(red.next().await?, Some(MatchEvent::Snapshot { seq: 0 }));
    assert!(
        !format!("{red:?}").contains(&created.seats[0].token),
        "Debug shows no secret"
    );
    let Some(MatchEvent::YourTurn { decisions }) = red.next().await? else {
        panic!("red opens the match");
    };
    let command = rules::bot::random_command(&decisions[0], || 7).expect("an answer");
    let id = red.send(command).await?;
    let mut acked = false;
    while !(acked && red.seq() == Some(1)) {
        match red.next().await? {
            Some(MatchEvent::Ack { id: got, seq }) => {
                assert_eq!((got.as_str(), seq), (id.as_str(), 1));
                acked = true;
            }
            Some(MatchEvent::Refused(e)) => panic!("refused: {e:?}"),
            Some(_) => {}
            None => panic!("the connection closed"),
        }
    }
    // guest, me, create_match: one TLS connection each; the WebSocket one more.
    assert_eq!(handshakes.load(Ordering::SeqCst), 4);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_trust_the_authority_is_refused() -> Result<(), ClientError> {
    let server = TestServer::start();
    let (_, config) = authority_and_server_config();
    let (port, handshakes) = tls_terminator(server.addr, config).await;
    let mut client = Client::new(&format!("https://localhost:{port}"))?;
    let err = client.guest("nobody").await.err();
    assert!(
        matches!(&err, Some(ClientError::Connect(e)) if e.to_string().contains("certificate")),
        "{err:?}"
    );
    let ws = carcassonne_client::Connection::connect(&client.ws_url())
        .await
        .err();
    assert!(
        ws.as_ref()
            .is_some_and(|e| e.to_string().contains("certificate")),
        "{ws:?}"
    );
    assert_eq!(handshakes.load(Ordering::SeqCst), 0);
    let bad_pem = Tls::with_ca_pem(b"no certificate here");
    assert!(
        matches!(bad_pem, Err(ClientError::TlsSetup(_))),
        "{bad_pem:?}"
    );
    Ok(())
}
