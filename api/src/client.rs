//! The address a request comes from, for the per-address rate limits and the logs. It is the
//! peer's, unless the peer is one of the proxies `DRIVE_TRUSTED_PROXIES` names: then it is read
//! from the forwarded chain the proxies wrote (`X-Forwarded-For`, RFC 7239 `Forwarded`), from
//! the right, as the first hop that is not a trusted proxy. Everything left of that hop was
//! written by the client and could say anything; everything right of it was written by a proxy
//! the operator vouched for.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRef, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use drive_core::ConfigError;
use drive_core::config;

use crate::error::ApiError;

/// The address of a request's client ([`client_address`]), IPv4-mapped IPv6 addresses as the
/// IPv4 address they carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

/// From any state that holds the trusted proxies (the API's `AppState`).
impl<S> FromRequestParts<S> for ClientAddress
where
    S: Send + Sync,
    TrustedProxies: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        // Present whenever the router is served as `main` serves it.
        let ConnectInfo(peer) = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .ok_or_else(|| ApiError::Machine("the connection's peer address is unknown".into()))?;
        let trusted = TrustedProxies::from_ref(state);
        Ok(ClientAddress(client_address(peer.ip(), &parts.headers, &trusted)))
    }
}

/// The proxies whose forwarded headers are believed (`DRIVE_TRUSTED_PROXIES`).
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<Network>);

impl TrustedProxies {
    /// Reads `DRIVE_TRUSTED_PROXIES`: addresses and CIDR ranges separated by commas, none by
    /// default (no forwarded header is believed). An entry that is neither refuses the whole
    /// setting, naming the entry: a typo must not quietly trust no one, or everyone.
    pub fn from_environment() -> Result<TrustedProxies, ConfigError> {
        let name = "DRIVE_TRUSTED_PROXIES";
        TrustedProxies::parse(&config::or(name, "")).map_err(|why| config::invalid(name, why))
    }

    fn parse(list: &str) -> Result<TrustedProxies, String> {
        let entries = list.split(',').map(str::trim).filter(|entry| !entry.is_empty());
        entries
            .map(|entry| Network::parse(entry).map_err(|why| format!("{entry:?} {why}")))
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }

    fn contains(&self, address: IpAddr) -> bool {
        self.0.iter().any(|network| network.contains(address))
    }
}

/// An address range: its first address and how many leading bits every address in it shares
/// with that one.
#[derive(Debug, Clone, Copy)]
struct Network {
    first: IpAddr,
    prefix: u32,
}

impl Network {
    /// `192.0.2.1`, `10.0.0.0/8`, `2001:db8::/32`.
    fn parse(entry: &str) -> Result<Network, String> {
        let (address, prefix) = match entry.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (entry, None),
        };
        let first: IpAddr = address
            .parse()
            .map_err(|_| "is not an IP address or a CIDR range (address/prefix)".to_string())?;
        let first = first.to_canonical();
        let width = if first.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => width,
            Some(bits) => bits
                .parse()
                .ok()
                .filter(|&bits| bits <= width)
                .ok_or_else(|| format!("has a prefix that is not a number from 0 to {width}"))?,
        };
        // `10.0.0.1/8` is most likely a mistake for one address or for `10.0.0.0/8`.
        if masked(first, prefix) != first {
            return Err(format!("has bits set past its /{prefix}"));
        }
        Ok(Network { first, prefix })
    }

    fn contains(&self, address: IpAddr) -> bool {
        address.is_ipv4() == self.first.is_ipv4() && masked(address, self.prefix) == self.first
    }
}

/// `address` with every bit past its first `prefix` cleared.
pub fn masked(address: IpAddr, prefix: u32) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let kept = u32::MAX.checked_shl(32 - prefix.min(32)).unwrap_or(0);
            IpAddr::V4((v4.to_bits() & kept).into())
        }
        IpAddr::V6(v6) => {
            let kept = u128::MAX.checked_shl(128 - prefix.min(128)).unwrap_or(0);
            IpAddr::V6((v6.to_bits() & kept).into())
        }
    }
}

/// The client's address: `peer` unless it is a trusted proxy; then the first untrusted hop of
/// the forwarded chain, read from the right. When both `X-Forwarded-For` and `Forwarded` are
/// present they must name the same client: a proxy that writes one passes the other through
/// as the client sent it, so two answers mean one of them is made up. A header that cannot be
/// read where it matters (a hop that is not an address, `unknown`, an obfuscated name), or
/// disagreeing headers, leave the peer's address: such requests share the proxy's count, and
/// no header makes a request count as someone else's.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let peer = peer.to_canonical();
    if !trusted.contains(peer) {
        return peer;
    }
    let from = |hops: Option<Vec<Option<IpAddr>>>| hops.map(|hops| first_untrusted(&hops, trusted));
    let forwarded_for = from(hops(headers, "x-forwarded-for", x_forwarded_for_hop));
    let forwarded = from(hops(headers, "forwarded", forwarded_hop));
    match (forwarded_for, forwarded) {
        (Some(Some(one)), None) | (None, Some(Some(one))) => one,
        (Some(Some(one)), Some(Some(other))) if one == other => one,
        _ => peer,
    }
}

/// The first address from the right that is not a trusted proxy; the leftmost when every hop
/// is one; none when a hop on the way cannot be read, or there is none.
fn first_untrusted(hops: &[Option<IpAddr>], trusted: &TrustedProxies) -> Option<IpAddr> {
    let mut farthest = None;
    for hop in hops.iter().rev() {
        let address = (*hop)?;
        if !trusted.contains(address) {
            return Some(address);
        }
        farthest = Some(address);
    }
    farthest
}

/// The hops of every `name` header in order (repeated headers are one list, RFC 9110 §5.3),
/// each read by `hop`; none without the header. A value that is not text is an unreadable hop.
fn hops(headers: &HeaderMap, name: &str, hop: fn(&str) -> Option<IpAddr>) -> Option<Vec<Option<IpAddr>>> {
    let values: Vec<_> = headers.get_all(name).iter().collect();
    if values.is_empty() {
        return None;
    }
    let hops = values.into_iter().flat_map(|value| match value.to_str() {
        Ok(text) => text.split(',').map(hop).collect(),
        Err(_) => vec![None],
    });
    Some(hops.collect())
}

/// One entry of `X-Forwarded-For`: an address, some proxies add a port.
fn x_forwarded_for_hop(entry: &str) -> Option<IpAddr> {
    node(entry.trim())
}

/// One element of `Forwarded` (`for=192.0.2.60;proto=https;by=…`): its `for` node, which may
/// be quoted (`for="[2001:db8::17]:4711"`).
fn forwarded_hop(element: &str) -> Option<IpAddr> {
    let (_, value) = element
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("for"))?;
    let value = value.trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    node(value)
}

/// `192.0.2.1`, `192.0.2.1:80`, `2001:db8::1`, `[2001:db8::1]`, `[2001:db8::1]:80`; anything
/// else (`unknown`, `_hidden`) is no address.
fn node(text: &str) -> Option<IpAddr> {
    let address = text
        .parse::<IpAddr>()
        .or_else(|_| text.parse::<SocketAddr>().map(|socket| socket.ip()))
        .or_else(|_| {
            let bracketed = text.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
            bracketed.unwrap_or_default().parse::<IpAddr>()
        })
        .ok()?;
    Some(address.to_canonical())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn trusted(list: &str) -> TrustedProxies {
        TrustedProxies::parse(list).unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    const PROXY: &str = "10.0.0.2";

    /// The client address of a request from the proxy at 10.0.0.2 carrying `pairs`.
    fn via_proxy(pairs: &[(&'static str, &str)]) -> IpAddr {
        client_address(
            ip(PROXY),
            &headers(pairs),
            &trusted("10.0.0.0/24, 2001:db8:ffff::1"),
        )
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client() {
        let forwarded = headers(&[("x-forwarded-for", "192.0.2.7"), ("forwarded", "for=192.0.2.7")]);
        let none = TrustedProxies::default();
        assert_eq!(client_address(ip(PROXY), &forwarded, &none), ip(PROXY));
        let other = trusted("10.9.0.0/16");
        assert_eq!(client_address(ip(PROXY), &forwarded, &other), ip(PROXY));
    }

    #[test]
    fn the_first_untrusted_hop_from_the_right_is_the_client() {
        // What the client wrote itself (198.51.100.1) is left of its real address.
        assert_eq!(
            via_proxy(&[("x-forwarded-for", "198.51.100.1, 192.0.2.7, 10.0.0.9")]),
            ip("192.0.2.7")
        );
        assert_eq!(via_proxy(&[("x-forwarded-for", "192.0.2.7")]), ip("192.0.2.7"));
        // Repeated headers are one list.
        let repeated = [
            ("x-forwarded-for", "198.51.100.1"),
            ("x-forwarded-for", "192.0.2.7, 10.0.0.9"),
        ];
        assert_eq!(via_proxy(&repeated), ip("192.0.2.7"));
        // Every hop trusted: the farthest one.
        assert_eq!(
            via_proxy(&[("x-forwarded-for", "10.0.0.5, 10.0.0.9")]),
            ip("10.0.0.5")
        );
        // Ports and brackets, as some proxies write them.
        assert_eq!(
            via_proxy(&[("x-forwarded-for", "192.0.2.7:5123")]),
            ip("192.0.2.7")
        );
        assert_eq!(
            via_proxy(&[("x-forwarded-for", "[2001:db8::7]:443")]),
            ip("2001:db8::7")
        );
        // No header: the proxy's own request.
        assert_eq!(via_proxy(&[]), ip(PROXY));
    }

    #[test]
    fn forwarded_names_the_client_by_its_for_parameter() {
        let chain =
            r#"for=198.51.100.1, For="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.9;by=10.0.0.2"#;
        assert_eq!(via_proxy(&[("forwarded", chain)]), ip("2001:db8:cafe::17"));
        assert_eq!(
            via_proxy(&[("forwarded", "proto=https;for=192.0.2.7")]),
            ip("192.0.2.7")
        );
        // Both headers, agreeing.
        let both = [("forwarded", "for=192.0.2.7"), ("x-forwarded-for", "192.0.2.7")];
        assert_eq!(via_proxy(&both), ip("192.0.2.7"));
    }

    #[test]
    fn an_unreadable_or_contradicted_chain_leaves_the_peer() {
        for unreadable in [
            ("x-forwarded-for", "192.0.2.7, nonsense"),
            ("x-forwarded-for", ""),
            ("x-forwarded-for", "192.0.2.7,,10.0.0.9"),
            ("x-forwarded-for", "2001:db8::7]"),
            ("forwarded", "for=unknown"),
            ("forwarded", "for=_hidden, for=10.0.0.9"),
            ("forwarded", "proto=https"),
            ("forwarded", "for=\"192.0.2.7"),
            ("forwarded", "=;=,;"),
        ] {
            assert_eq!(via_proxy(&[unreadable]), ip(PROXY), "{unreadable:?}");
        }
        // Bytes that are not text.
        let mut binary = HeaderMap::new();
        binary.insert(
            "x-forwarded-for",
            HeaderValue::from_bytes(b"192.0.2.\xff").unwrap(),
        );
        let proxies = trusted(PROXY);
        assert_eq!(client_address(ip(PROXY), &binary, &proxies), ip(PROXY));
        // A client adding the header its proxy does not write: which one is true is unknown.
        let contradicting = [
            ("x-forwarded-for", "192.0.2.7"),
            ("forwarded", "for=198.51.100.1"),
        ];
        assert_eq!(via_proxy(&contradicting), ip(PROXY));
        // Garbage left of the client's address is never read.
        assert_eq!(
            via_proxy(&[("x-forwarded-for", "nonsense, 192.0.2.7")]),
            ip("192.0.2.7")
        );
    }

    #[test]
    fn ipv4_mapped_addresses_are_ipv4() {
        let proxies = trusted("10.0.0.2");
        let mapped = ip("::ffff:10.0.0.2");
        let forwarded = headers(&[("x-forwarded-for", "::ffff:192.0.2.7")]);
        assert_eq!(client_address(mapped, &forwarded, &proxies), ip("192.0.2.7"));
        assert_eq!(
            client_address(mapped, &HeaderMap::new(), &proxies),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn trusted_proxies_are_addresses_and_ranges() {
        let proxies = trusted(" 127.0.0.1 ,10.0.0.0/8,, 2001:db8::/32,::1,");
        for inside in [
            "127.0.0.1",
            "10.200.3.4",
            "2001:db8:1::9",
            "::1",
            "::ffff:10.1.1.1",
        ] {
            assert!(proxies.contains(ip(inside).to_canonical()), "{inside}");
        }
        for outside in ["127.0.0.2", "11.0.0.1", "2001:db9::1", "::2"] {
            assert!(!proxies.contains(ip(outside)), "{outside}");
        }
        assert!(trusted("0.0.0.0/0").contains(ip("203.0.113.1")));
        assert!(!trusted("0.0.0.0/0").contains(ip("2001:db8::1")));
        assert!(trusted("::/0").contains(ip("2001:db8::1")));
        assert!(!TrustedProxies::default().contains(ip("127.0.0.1")));
    }

    #[test]
    fn a_bad_entry_is_refused_by_name() {
        for (list, entry) in [
            ("127.0.0.1, localhost", "\"localhost\""),
            ("10.0.0.0/33", "\"10.0.0.0/33\""),
            ("2001:db8::/129", "\"2001:db8::/129\""),
            ("10.0.0.0/", "\"10.0.0.0/\""),
            ("10.0.0.1/8", "\"10.0.0.1/8\""),
            ("10.0.0.0/-1", "\"10.0.0.0/-1\""),
        ] {
            let why = TrustedProxies::parse(list).unwrap_err();
            assert!(why.starts_with(entry), "{list}: {why}");
        }
    }

    #[test]
    fn masking_keeps_the_prefix() {
        assert_eq!(masked(ip("2001:db8:1:2:3:4:5:6"), 64), ip("2001:db8:1:2::"));
        assert_eq!(masked(ip("192.0.2.77"), 24), ip("192.0.2.0"));
        assert_eq!(masked(ip("192.0.2.77"), 0), ip("0.0.0.0"));
        assert_eq!(masked(ip("192.0.2.77"), 32), ip("192.0.2.77"));
    }
}
