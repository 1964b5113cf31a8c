//! Which pages may open a WebSocket with the player's session cookie. A browser sends the cookie
//! with any site's upgrade to this host, so without this check another site (a sibling subdomain
//! included: cookies do not isolate them) could play a visitor's seats. The check is asked only
//! when the upgrade carries the cookie; a bearer or seat token is not sent by a browser on its
//! own. A browser always sends `Origin` on an upgrade, so an upgrade without one is not a page's.

use std::fmt;

/// An origin as a page has it: scheme, host and port (the scheme's default when not written),
/// compared case-insensitively on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// `host[:port]` (an IPv6 host in brackets), the host lower-cased; `None` when malformed.
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    if authority.is_empty() || authority.contains(['@', '/', '?', '#', ' ']) {
        return None;
    }
    let (host, port) = match authority.rfind(':') {
        // A colon inside brackets belongs to an IPv6 address.
        Some(i) if !authority[i..].contains(']') => {
            let port: u16 = authority[i + 1..].parse().ok()?;
            (&authority[..i], Some(port))
        }
        _ => (authority, None),
    };
    if host.is_empty() {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

impl Origin {
    /// `scheme://host[:port]` with the scheme `http` or `https`, nothing after (a trailing `/` is
    /// allowed, as people paste it).
    pub fn parse(s: &str) -> Result<Origin, String> {
        let s = s.trim();
        let (scheme, rest) = s
            .split_once("://")
            .ok_or_else(|| format!("`{s}`: an origin is scheme://host[:port]"))?;
        let scheme = scheme.to_ascii_lowercase();
        let default =
            default_port(&scheme).ok_or_else(|| format!("`{s}`: the scheme is http or https"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (host, port) = split_authority(rest)
            .ok_or_else(|| format!("`{s}`: an origin is scheme://host[:port], no path"))?;
        Ok(Origin {
            scheme,
            host,
            port: port.unwrap_or(default),
        })
    }

    /// Whether pages of this origin are served over TLS.
    pub fn is_https(&self) -> bool {
        self.scheme == "https"
    }

    /// Whether the request's `Host` names this origin's host and port (a `Host` without a port
    /// means the default port of the scheme the page uses).
    fn is_host(&self, host_header: &str) -> bool {
        let default = default_port(&self.scheme);
        split_authority(host_header.trim())
            .is_some_and(|(host, port)| host == self.host && port.or(default) == Some(self.port))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match default_port(&self.scheme) {
            Some(p) if p == self.port => write!(f, "{}://{}", self.scheme, self.host),
            _ => write!(f, "{}://{}:{}", self.scheme, self.host, self.port),
        }
    }
}

/// Whether a page at `origin` (the upgrade's `Origin` header) may use the session cookie: it is
/// one of `allowed` when the server was given its public origins, else it is the request's own
/// (`host`, the `Host` header). `null` (a sandboxed frame, a file) and anything unparsable are
/// refused.
pub fn allowed(origin: &str, host: Option<&str>, allowed: &[Origin]) -> bool {
    let Ok(origin) = Origin::parse(origin) else {
        return false;
    };
    if allowed.is_empty() {
        host.is_some_and(|h| origin.is_host(h))
    } else {
        allowed.contains(&origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins(list: &[&str]) -> Vec<Origin> {
        list.iter().map(|s| Origin::parse(s).expect(s)).collect()
    }

    #[test]
    fn same_origin_by_default() {
        let none: &[Origin] = &[];
        assert!(allowed(
            "http://127.0.0.1:8080",
            Some("127.0.0.1:8080"),
            none
        ));
        assert!(allowed("https://play.example", Some("PLAY.example"), none));
        assert!(allowed(
            "https://play.example",
            Some("play.example:443"),
            none
        ));
        assert!(allowed("http://[::1]:8080", Some("[::1]:8080"), none));
        for (origin, host) in [
            ("http://127.0.0.1:8081", "127.0.0.1:8080"),
            ("https://evil.example", "play.example"),
            ("https://other.play.example", "play.example"),
            ("https://play.example.evil", "play.example"),
            ("https://play.example:8443", "play.example"),
            ("null", "play.example"),
            ("", "play.example"),
            ("file://", "play.example"),
        ] {
            assert!(!allowed(origin, Some(host), none), "{origin} on {host}");
        }
        assert!(!allowed("https://play.example", None, none));
    }

    #[test]
    fn configured_origins_replace_the_host() {
        let list = origins(&["https://play.example/", "http://localhost:3000"]);
        assert!(allowed(
            "https://play.example",
            Some("10.0.0.5:8080"),
            &list
        ));
        assert!(allowed("https://play.example:443", Some("x"), &list));
        assert!(allowed("http://LOCALHOST:3000", Some("x"), &list));
        assert!(!allowed("http://play.example", Some("play.example"), &list));
        assert!(!allowed(
            "https://a.play.example",
            Some("a.play.example"),
            &list
        ));
        assert!(!allowed(
            "http://10.0.0.5:8080",
            Some("10.0.0.5:8080"),
            &list
        ));
    }

    #[test]
    fn bad_origins_are_refused_when_parsed() {
        for s in [
            "play.example",
            "ftp://play.example",
            "https://play.example/path",
            "https://user@play.example",
            "https://play.example:99999",
            "https://",
        ] {
            assert!(Origin::parse(s).is_err(), "{s} was accepted");
        }
        assert_eq!(
            Origin::parse("HTTPS://Play.Example:443/")
                .map(|o| o.to_string())
                .as_deref(),
            Ok("https://play.example")
        );
    }
}
