//! The client's address behind reverse proxies: the one function ([`client_addr`]) that every
//! per-address limit and every log line's `client` field goes through.
//!
//! A forwarding header is believed only from a configured proxy (`--trusted-proxies`): anyone
//! else can write `X-Forwarded-For: 1.2.3.4` to spend someone else's rate limits, so from an
//! untrusted peer both headers are ignored and the TCP peer is the client. From a trusted proxy
//! the chain is read from the right (the hop nearest the server, which the proxy itself
//! appended) to the first address that is not a trusted proxy: entries to its left were written
//! by the client and prove nothing. A malformed chain from a trusted proxy leaves the peer's
//! address: a bad header never fails the request.

use axum::http::HeaderMap;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// The forwarding headers read, in the order tried: RFC 7239's `Forwarded` first, then the
/// de facto `X-Forwarded-For`.
pub const HEADERS: [&str; 2] = ["forwarded", "x-forwarded-for"];

/// Hops read at most from one chain; a longer chain is treated as malformed (it costs a
/// parse per hop, and no real deployment nests proxies this deep).
const MAX_HOPS: usize = 32;

/// A request's client address, as [`client_addr`] found it: the HTTP layer puts it on every
/// request (`axum::Extension<Client>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client(pub IpAddr);

/// A trusted proxy: one address or a CIDR range (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyRange {
    net: IpAddr,
    prefix: u8,
}

impl ProxyRange {
    /// `addr` or `addr/prefix`; the address's bits beyond the prefix must be zero (a range
    /// written `10.1.2.3/8` is more likely a typo than meant).
    pub fn parse(s: &str) -> Result<ProxyRange, String> {
        let s = s.trim();
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let net = IpAddr::from_str(addr)
            .map_err(|_| format!("`{s}`: a trusted proxy is an IP address or a CIDR range"))?
            .to_canonical();
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{s}`: the prefix length is 0 to {max}"))?,
        };
        if mask(net, prefix) != bits(net) {
            return Err(format!(
                "`{s}`: the address has bits set beyond the /{prefix} prefix"
            ));
        }
        Ok(ProxyRange { net, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        ip.is_ipv4() == self.net.is_ipv4() && mask(ip, self.prefix) == bits(self.net)
    }
}

fn bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// The address's first `prefix` bits (the rest zero).
fn mask(ip: IpAddr, prefix: u8) -> u128 {
    let width = if ip.is_ipv4() { 32 } else { 128 };
    let drop = u32::from(width - prefix.min(width));
    bits(ip)
        .checked_shr(drop)
        .and_then(|b| b.checked_shl(drop))
        .unwrap_or(0)
}

impl fmt::Display for ProxyRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.net, self.prefix)
    }
}

/// The client's address: the TCP `peer`, or, when the peer is one of `trusted`, the nearest
/// untrusted hop of the forwarding headers (see the module's doc). IPv4-mapped IPv6 addresses
/// are read as IPv4, so that one client has one key whichever way the socket was bound.
pub fn client_addr(peer: IpAddr, headers: &HeaderMap, trusted: &[ProxyRange]) -> IpAddr {
    let peer = peer.to_canonical();
    let is_trusted = |ip: IpAddr| trusted.iter().any(|r| r.contains(ip));
    if !is_trusted(peer) {
        return peer;
    }
    let chain = if headers.contains_key(HEADERS[0]) {
        forwarded_chain(headers)
    } else if headers.contains_key(HEADERS[1]) {
        x_forwarded_for_chain(headers)
    } else {
        return peer;
    };
    let Some(chain) = chain.filter(|c| !c.is_empty() && c.len() <= MAX_HOPS) else {
        return peer;
    };
    // Every hop trusted: the left-most is the client (a request from inside the proxies' net).
    chain
        .iter()
        .rev()
        .copied()
        .find(|ip| !is_trusted(*ip))
        .unwrap_or(chain[0])
}

/// Every value of a header, in order, as one comma-separated list (RFC 9110 §5.3); `None` if
/// one is not text.
fn joined(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut out = String::new();
    for v in headers.get_all(name) {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(v.to_str().ok()?);
    }
    Some(out)
}

/// `X-Forwarded-For: client, proxy1, proxy2`: every entry an address (a port allowed).
fn x_forwarded_for_chain(headers: &HeaderMap) -> Option<Vec<IpAddr>> {
    joined(headers, HEADERS[1])?
        .split(',')
        .map(|hop| node(hop.trim()))
        .collect()
}

/// `Forwarded: for=192.0.2.60;proto=https, for="[2001:db8::17]:4711"` (RFC 7239): every element
/// must name its `for` as an address; `unknown` or an obfuscated name (`_hidden`) says the
/// proxy does not know it, so the chain cannot be read.
fn forwarded_chain(headers: &HeaderMap) -> Option<Vec<IpAddr>> {
    let text = joined(headers, HEADERS[0])?;
    split_outside_quotes(&text, ',')
        .into_iter()
        .map(|element| {
            let value = split_outside_quotes(element, ';')
                .into_iter()
                .filter_map(|pair| pair.trim().split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("for"))
                .map(|(_, v)| v.trim())?;
            let value = match value.strip_prefix('"') {
                Some(quoted) => quoted.strip_suffix('"')?,
                None => value,
            };
            node(value)
        })
        .collect()
}

/// Splits at `sep` except inside a quoted string (a quoted `for` holds colons and may, in
/// principle, hold the separators).
fn split_outside_quotes(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A hop: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]` or `[2001:db8::1]:5678`.
fn node(s: &str) -> Option<IpAddr> {
    if let Some(rest) = s.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(is_port)) {
            return None;
        }
        return addr.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6);
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    let (addr, port) = s.rsplit_once(':')?;
    let ip = addr.parse::<std::net::Ipv4Addr>().ok()?;
    is_port(port).then_some(IpAddr::V4(ip))
}

fn is_port(s: &str) -> bool {
    s.parse::<u16>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ranges(list: &[&str]) -> Vec<ProxyRange> {
        list.iter()
            .map(|s| ProxyRange::parse(s).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn headers(list: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in list {
            h.append(*k, HeaderValue::from_str(v).expect("header value"));
        }
        h
    }

    #[test]
    fn ranges_parse_and_contain() {
        let r = ranges(&["10.0.0.0/8", "192.168.1.7", "fd00::/8", "0.0.0.0/0"]);
        assert!(r[0].contains(ip("10.255.0.1")) && !r[0].contains(ip("11.0.0.1")));
        assert!(r[1].contains(ip("192.168.1.7")) && !r[1].contains(ip("192.168.1.8")));
        assert!(r[1].contains(ip("::ffff:192.168.1.7")));
        assert!(r[2].contains(ip("fd12::1")) && !r[2].contains(ip("fe80::1")));
        assert!(r[3].contains(ip("203.0.113.9")) && !r[3].contains(ip("::1")));
        for bad in [
            "",
            "10.0.0.0/33",
            "10.1.2.3/8",
            "example.com",
            "::1/129",
            "1.2.3.4/x",
        ] {
            assert!(ProxyRange::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn headers_from_an_untrusted_peer_are_ignored() {
        let trusted = ranges(&["10.0.0.1"]);
        let h = headers(&[("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=1.2.3.4")]);
        assert_eq!(
            client_addr(ip("203.0.113.9"), &h, &trusted),
            ip("203.0.113.9")
        );
        assert_eq!(client_addr(ip("203.0.113.9"), &h, &[]), ip("203.0.113.9"));
    }

    #[test]
    fn the_right_most_untrusted_hop_is_the_client() {
        let trusted = ranges(&["10.0.0.0/8"]);
        let peer = ip("10.0.0.1");
        let at = |list: &[(&'static str, &str)]| client_addr(peer, &headers(list), &trusted);
        // The client wrote a fake first hop; the proxy appended the real one.
        assert_eq!(
            at(&[("x-forwarded-for", "6.6.6.6, 198.51.100.7, 10.0.0.2")]),
            ip("198.51.100.7")
        );
        // Two header lines are one list.
        assert_eq!(
            at(&[
                ("x-forwarded-for", "6.6.6.6"),
                ("x-forwarded-for", "198.51.100.7:4711")
            ]),
            ip("198.51.100.7")
        );
        assert_eq!(
            at(&[("x-forwarded-for", "10.0.0.9, 10.0.0.3")]),
            ip("10.0.0.9")
        );
        assert_eq!(
            at(&[(
                "forwarded",
                "for=6.6.6.6, For=\"[2001:db8::17]:4711\";proto=https"
            )]),
            ip("2001:db8::17")
        );
        assert_eq!(
            at(&[("forwarded", "for=198.51.100.7:80;by=10.0.0.1")]),
            ip("198.51.100.7")
        );
        // `Forwarded` wins over `X-Forwarded-For`.
        assert_eq!(
            at(&[
                ("forwarded", "for=198.51.100.7"),
                ("x-forwarded-for", "6.6.6.6")
            ]),
            ip("198.51.100.7")
        );
        assert_eq!(
            at(&[("x-forwarded-for", "::ffff:198.51.100.7")]),
            ip("198.51.100.7")
        );
        assert_eq!(at(&[]), peer);
    }

    #[test]
    fn a_malformed_chain_from_a_trusted_proxy_leaves_the_peer() {
        let trusted = ranges(&["10.0.0.1"]);
        let peer = ip("10.0.0.1");
        for list in [
            [("x-forwarded-for", "not-an-address")],
            [("x-forwarded-for", "1.2.3.4,,5.6.7.8")],
            [("x-forwarded-for", "")],
            [("x-forwarded-for", "1.2.3.4:99999")],
            [("forwarded", "for=unknown")],
            [("forwarded", "for=_hidden, for=1.2.3.4")],
            [("forwarded", "proto=https")],
            [("forwarded", "for=\"[2001:db8::17]")],
            [("forwarded", "for=[2001:db8::17]x")],
        ] {
            assert_eq!(
                client_addr(peer, &headers(&list), &trusted),
                peer,
                "{list:?}"
            );
        }
        let long = vec!["1.2.3.4"; MAX_HOPS + 1].join(",");
        let h = headers(&[("x-forwarded-for", &long)]);
        assert_eq!(client_addr(peer, &h, &trusted), peer);
    }

    #[test]
    fn quoted_separators_do_not_split() {
        assert_eq!(
            split_outside_quotes(r#"for="a,b";x=1, for=c"#, ','),
            vec![r#"for="a,b";x=1"#, " for=c"]
        );
    }
}
