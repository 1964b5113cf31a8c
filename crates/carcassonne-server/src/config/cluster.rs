//! The cluster flags: the NATS server the nodes talk through, the node's name in the ownership
//! leases (`store::leases`), how long a lease lasts and how often it is renewed.

use super::{positive_duration, secret};
use clap::Args;
use secrecy::{ExposeSecret, SecretString};
use std::sync::OnceLock;
use std::time::Duration;

/// Longest node name: it is stored in every lease the node holds and shown to operators.
const MAX_NODE_ID: usize = 64;

/// Several server nodes on one Postgres: each match and lobby is run by the node holding its
/// lease, which it renews while it runs it.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Cluster")]
pub struct ClusterConfig {
    /// The NATS server of the cluster (`nats://host:4222`; a user and password may be given in
    /// the URL). With it the server runs as one node of a cluster: it needs Postgres. Without
    /// it, a single node.
    #[arg(long, env = "NATS_URL", value_parser = secret)]
    pub nats_url: Option<SecretString>,

    /// A token for the NATS server, when it asks for one.
    #[arg(long, env = "NATS_TOKEN", value_parser = secret)]
    pub nats_token: Option<SecretString>,

    /// The first token of every NATS subject the nodes use: clusters that share one NATS
    /// server use different prefixes.
    #[arg(long, env = "NATS_PREFIX", default_value = "carcassonne", value_parser = subject_token)]
    pub nats_prefix: String,

    /// How long a node waits for the owner of a match to take a forwarded message before the
    /// client hears `unavailable`.
    #[arg(long, env = "FORWARD_TIMEOUT", default_value = "2s", value_parser = positive_duration)]
    pub forward_timeout: Duration,

    /// This node's name in the leases it holds (letters, digits, `.`, `_`, `-`; at most 64);
    /// without one, the host name and a random suffix, made once per process.
    #[arg(long, env = "NODE_ID", value_parser = node_id)]
    pub node_id: Option<String>,

    /// A lease its node does not renew for this long may be taken over by another node.
    #[arg(long, env = "LEASE_TTL", default_value = "5s", value_parser = positive_duration)]
    pub lease_ttl: Duration,

    /// Time between two renewals of a node's leases; less than `--lease-ttl`.
    #[arg(long, env = "LEASE_RENEW", default_value = "1s", value_parser = positive_duration)]
    pub lease_renew: Duration,
}

impl ClusterConfig {
    /// The NATS URL, exposed: only to connect. `None` (a single node) when absent or empty.
    pub fn nats_url(&self) -> Option<&str> {
        self.nats_url
            .as_ref()
            .map(ExposeSecret::expose_secret)
            .filter(|u| !u.trim().is_empty())
    }

    /// The NATS token, exposed: only to connect.
    pub fn nats_token(&self) -> Option<&str> {
        self.nats_token
            .as_ref()
            .map(ExposeSecret::expose_secret)
            .filter(|t| !t.is_empty())
    }

    /// The node's name: `--node-id`, or the one made for this process (the same at every call).
    pub fn node_id(&self) -> &str {
        static MADE: OnceLock<String> = OnceLock::new();
        match &self.node_id {
            Some(id) => id,
            None => MADE.get_or_init(made_node_id),
        }
    }
}

/// A NATS subject token: letters, digits, `_` and `-`.
fn subject_token(s: &str) -> Result<String, String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-');
    if s.is_empty() || s.len() > MAX_NODE_ID || !s.chars().all(ok) {
        return Err(format!("1 to {MAX_NODE_ID} letters, digits, `_` or `-`"));
    }
    Ok(s.to_string())
}

/// A node name as `--node-id` takes it.
fn node_id(s: &str) -> Result<String, String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if s.is_empty() || s.len() > MAX_NODE_ID || !s.chars().all(ok) {
        return Err(format!(
            "a node id is 1 to {MAX_NODE_ID} letters, digits, `.`, `_` or `-`"
        ));
    }
    Ok(s.to_string())
}

/// The host name (its allowed characters, cut short) and eight random hex digits: two
/// processes on one host get different names.
fn made_node_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let mut host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(MAX_NODE_ID - 9)
        .collect();
    if host.is_empty() {
        host.push_str("node");
    }
    // Without randomness (no entropy source), the process id still tells processes apart.
    let suffix = getrandom::u32().unwrap_or(std::process::id());
    format!("{host}-{suffix:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_made_node_id_is_a_valid_one_and_stays_the_same() {
        let made = made_node_id();
        assert_eq!(node_id(&made), Ok(made.clone()));
        let config = crate::Config::default();
        assert_eq!(config.cluster.node_id(), config.cluster.node_id());
        assert!(node_id(config.cluster.node_id()).is_ok());
    }

    #[test]
    fn node_ids_are_checked() {
        assert!(node_id("eu-1.example_a").is_ok());
        for bad in ["", "node 1", "nöde", &"x".repeat(MAX_NODE_ID + 1)] {
            assert!(node_id(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn leases_default_to_5s_renewed_every_second_and_renew_before_they_expire() {
        let d = crate::Config::default();
        assert_eq!(d.cluster.lease_ttl, Duration::from_secs(5));
        assert_eq!(d.cluster.lease_renew, Duration::from_secs(1));
        assert!(d.cluster.node_id.is_none());
        let check = |args: &[&str]| {
            crate::Config::try_parse_from(std::iter::once("server").chain(args.iter().copied()))
                .map_err(|e| e.to_string())
                .map(|c| c.validate().map_err(|e| e.to_string()))
        };
        assert!(matches!(
            check(&[
                "--lease-ttl",
                "300ms",
                "--lease-renew",
                "100ms",
                "--node-id",
                "a-1"
            ]),
            Ok(Ok(()))
        ));
        let slow = check(&["--lease-ttl", "2s", "--lease-renew", "2s"]);
        assert!(
            matches!(&slow, Ok(Err(m)) if m.contains("less than --lease-ttl")),
            "{slow:?}"
        );
        assert!(check(&["--lease-ttl", "0s"]).is_err());
        assert!(check(&["--node-id", "a b"]).is_err());
    }
}
