//! The human-pace mode end to end: the load generator, as its own process, plays a few hundred
//! connections at a short think time against a real server on 127.0.0.1 (run in this test's
//! process, on the embedded store), and its JSON summary adds up. No timing is asserted.

use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// A server on an ephemeral port of 127.0.0.1, in a thread and runtime of its own, limits lifted
/// (the whole load comes from a few addresses); stopped when the sender is dropped.
fn start_server(dir: &std::path::Path) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr");
    let mut config = server::Config::default();
    config.store.data_dir = dir.to_path_buf();
    config.limits.relax();
    config.admin.metrics_access = server::config::MetricsAccess::Open;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let shutdown = async move {
                let _ = stopped.await;
            };
            server::run(listener, config, shutdown)
                .await
                .expect("the server runs");
        });
    });
    (addr, stop)
}

#[test]
fn a_human_pace_run_reports_what_it_played() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (addr, stop) = start_server(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_carcassonne-loadgen"))
        .args(["--url", &format!("http://{addr}"), "--pace"])
        .args([
            "--matches",
            "100",
            "--steps",
            "2",
            "--secs",
            "3",
            "--progress",
            "1",
        ])
        .args(["--think", "0.3", "--reconnect-mean", "2", "--sources", "3"])
        .args(["--server-pid", &std::process::id().to_string()])
        .arg("--server-metrics")
        .args(["--drain", "1"])
        .output()
        .expect("the load generator runs");
    drop(stop);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "loadgen failed:\n{stdout}\n{stderr}");
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON summary last:\n{stdout}"));
    // The matches went on for the drain after the last window, then closed.
    assert_eq!(summary["drain_s"].as_f64(), Some(1.0), "{summary}");
    let steps = summary["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2, "{summary}");
    for (i, step) in steps.iter().enumerate() {
        let n = |k: &str| step[k].as_u64().unwrap_or_else(|| panic!("{k} in {step}"));
        // The ramp: half the matches, then all of them, each a table of 2 to 5 players.
        let matches = 50 * (i as u64 + 1);
        assert_eq!(n("live_matches"), matches, "{step}");
        let connections = n("connections");
        assert!(
            connections >= 2 * matches - matches / 2 && connections <= 5 * matches + matches / 10,
            "{connections} connections for {matches} matches: {step}"
        );
        // Every acknowledged move was timed; diffs reached their subscribers.
        assert!(n("moves") > 0, "{step}");
        assert_eq!(step["ack"]["samples"].as_u64(), Some(n("moves")), "{step}");
        assert!(step["fanout"]["samples"].as_u64() > Some(0), "{step}");
        assert!(n("reconnects") > 0, "{step}");
        // Reconnecting with `since` never skipped a diff, and nothing was refused.
        assert_eq!(n("gaps"), 0, "{step}");
        assert_eq!(step["errors"], serde_json::json!({}), "{step}");
        assert!(step["server_rss_bytes"].as_u64() > Some(0), "{step}");
        // The server's own acks over the window were read from its /metrics.
        assert!(step["server_ack"]["samples"].as_u64() > Some(0), "{step}");
        assert!(
            step["server_ack"]["over_100ms_pct"].as_f64().is_some(),
            "{step}"
        );
    }
    assert!(stderr.contains("step 2: 100 matches live"), "{stderr}");
    std::thread::sleep(Duration::from_millis(100));
}
