//! The SSRF guard: decide whether a URL may be dialled, and pin the connection to the address
//! that was checked.
//!
//! A registry entry (or a webhook subscription, a witness) may name any URL, including one whose
//! host resolves to toolmark's own network (loopback, a private range, the cloud metadata
//! service at 169.254.169.254). The guard
//!
//! 1. parses the URL (IDNA is applied to the host by the `url` crate) and refuses userinfo, an
//!    empty host and any scheme but `https` (and `http` when private targets are allowed);
//! 2. resolves the host **once** (or takes a literal IP as is), refusing more than
//!    [`MAX_ADDRESSES`] answers; a fixed table ([`StaticResolver`], the crawl's `--resolve`
//!    pins) may also name the port a host's default port is reached at (`NAME=IP:PORT`, as
//!    the demo reaches its stand-ins for real registry URLs); a port written in the URL always
//!    wins, as it does in reqwest's connector;
//! 3. requires **every** address to be global ([`blocked_reason`]; IPv4-mapped, IPv4-compatible,
//!    NAT64 and 6to4 IPv6 addresses are checked by the IPv4 address they carry) — one bad answer
//!    refuses the target, so a round-robin of one public and one private address cannot win;
//! 4. returns a [`Pinned`] target: the caller builds its HTTP client with these addresses as the
//!    only resolution of the host (reqwest `resolve_to_addrs`) and a resolver that refuses every
//!    other name, so there is no second lookup and DNS rebinding has nothing to rebind. The URL
//!    keeps the name, so `Host` and TLS SNI carry the name and the certificate is checked
//!    against it.
//!
//! With [`Policy::allow_private`] (tests and demos only) `http` and loopback/private/unique-local
//! addresses are allowed; link-local (the metadata service lives there), multicast, broadcast
//! and unspecified addresses stay blocked even then.
//!
//! It does not follow redirects (the client never does) and does not look at the path or query.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

pub use crate::limits::MAX_ADDRESSES;

/// What the guard allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Allow `http` and loopback/private addresses (tests and demos, never production).
    pub allow_private: bool,
}

/// Why a URL may not be dialled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// Not an absolute URL with a host, or a port we cannot use.
    #[error("bad url: {0}")]
    BadUrl(String),
    /// `http` (or another scheme) where only `https` is allowed.
    #[error("scheme {0:?} is not allowed (https only)")]
    Scheme(String),
    /// The URL carries a user name or password.
    #[error("url carries userinfo")]
    Userinfo,
    /// The name did not resolve, or resolved to nothing.
    #[error("dns: {0}")]
    Dns(String),
    /// The host is, or resolves to, an address we do not dial.
    #[error("{addr} is {why}")]
    Blocked {
        /// The offending address.
        addr: IpAddr,
        /// Which range it is in.
        why: &'static str,
    },
}

/// A URL that passed the guard, with the addresses its host was checked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The parsed URL (host name kept, so Host and SNI carry it).
    pub url: url::Url,
    /// The host as it appears in the URL (a domain, or an IP literal).
    pub host: String,
    /// The checked addresses, IPv4 first, each with the port dialled: the URL's, or a pinned
    /// one for a URL without a port of its own.
    pub addrs: Vec<SocketAddr>,
}

/// Boxed future returned by [`Resolve::lookup`].
pub type Lookup<'a> = Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + 'a>>;

/// Name resolution, injectable so tests can make a name resolve to any address.
pub trait Resolve: Send + Sync {
    /// All addresses of `host`. Port 0 (what DNS answers) means the URL's port; another port
    /// is where a URL without a port of its own is dialled (a pin, `NAME=IP:PORT`).
    fn lookup<'a>(&'a self, host: &'a str) -> Lookup<'a>;
}

/// The system resolver (`getaddrinfo` through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn lookup<'a>(&'a self, host: &'a str) -> Lookup<'a> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, 0)).await?.collect()) })
    }
}

/// A fixed table of names (lower case), for tests, `--resolve` pins and the offline demo;
/// unknown names fail to resolve. An address with a port other than 0 is where the name's URLs
/// without a port of their own are dialled.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver(pub HashMap<String, Vec<SocketAddr>>);

impl Resolve for StaticResolver {
    fn lookup<'a>(&'a self, host: &'a str) -> Lookup<'a> {
        let found = self.0.get(&host.to_ascii_lowercase()).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "unknown name"))
        })
    }
}

/// A fixed table consulted first, then the system resolver for every other name.
#[derive(Debug, Clone, Default)]
pub struct FixedFirst(pub StaticResolver);

impl Resolve for FixedFirst {
    fn lookup<'a>(&'a self, host: &'a str) -> Lookup<'a> {
        match self.0.0.get(&host.to_ascii_lowercase()) {
            Some(found) => {
                let found = found.clone();
                Box::pin(async move { Ok(found) })
            }
            None => SystemResolver.lookup(host),
        }
    }
}

/// Check `raw` under `policy`, resolving its host once with `resolver`.
pub async fn check(
    raw: &str,
    policy: Policy,
    resolver: &dyn Resolve,
) -> Result<Pinned, GuardError> {
    let mut url = url::Url::parse(raw).map_err(|e| GuardError::BadUrl(e.to_string()))?;
    strip_root_dot(&mut url)?;
    match url.scheme() {
        "https" => {}
        "http" if policy.allow_private => {}
        other => return Err(GuardError::Scheme(other.to_owned())),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(GuardError::Userinfo);
    }
    let port = url
        .port_or_known_default()
        .ok_or_else(|| GuardError::BadUrl("no port".into()))?;
    if port == 0 {
        return Err(GuardError::BadUrl("port 0".into()));
    }
    let (host, found) = match url.host() {
        None => return Err(GuardError::BadUrl("no host".into())),
        Some(url::Host::Ipv4(ip)) => (ip.to_string(), vec![SocketAddr::new(IpAddr::V4(ip), 0)]),
        Some(url::Host::Ipv6(ip)) => (format!("[{ip}]"), vec![SocketAddr::new(IpAddr::V6(ip), 0)]),
        Some(url::Host::Domain(name)) => {
            let found = resolver
                .lookup(name)
                .await
                .map_err(|e| GuardError::Dns(format!("{name}: {e}")))?;
            (name.to_owned(), found)
        }
    };
    if found.is_empty() {
        return Err(GuardError::Dns(format!("{host}: no addresses")));
    }
    if found.len() > MAX_ADDRESSES {
        return Err(GuardError::Dns(format!(
            "{host}: {} addresses, more than {MAX_ADDRESSES}",
            found.len()
        )));
    }
    for a in &found {
        if let Some(why) = blocked_reason(a.ip(), policy) {
            return Err(GuardError::Blocked { addr: a.ip(), why });
        }
    }
    // The port reqwest's connector dials: the URL's own, else a pinned one, else the default.
    let explicit = url.port().is_some();
    let mut addrs: Vec<SocketAddr> = found
        .into_iter()
        .map(|a| match a.port() {
            p if p != 0 && !explicit => a,
            _ => SocketAddr::new(a.ip(), port),
        })
        .collect();
    addrs.sort_by_key(|a| a.is_ipv6());
    addrs.dedup();
    Ok(Pinned { url, host, addrs })
}

/// Drop the root label's dot from a domain host (`name.example.` → `name.example`), so a fully
/// qualified name is observed exactly like the same name without the dot: one lookup of the
/// name as the resolver tables know it, and the pinned client (whose only resolution is for the
/// pinned host) asks for that same name. `Host` and TLS SNI then carry the name without the
/// dot, as RFC 6066 requires for SNI.
pub fn strip_root_dot(url: &mut url::Url) -> Result<(), GuardError> {
    let Some(url::Host::Domain(name)) = url.host() else {
        return Ok(());
    };
    if !name.ends_with('.') {
        return Ok(());
    }
    let bare = name.trim_end_matches('.').to_owned();
    if bare.is_empty() {
        return Err(GuardError::BadUrl("empty host".into()));
    }
    url.set_host(Some(&bare))
        .map_err(|e| GuardError::BadUrl(e.to_string()))
}

/// Why `ip` may not be dialled under `policy`, or `None` when it may.
pub fn blocked_reason(ip: IpAddr, policy: Policy) -> Option<&'static str> {
    let why = match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }?;
    let private_ok = matches!(
        why,
        "loopback" | "private" | "shared address space" | "unique local"
    );
    if policy.allow_private && private_ok {
        None
    } else {
        Some(why)
    }
}

fn in4(ip: Ipv4Addr, net: [u8; 4], bits: u32) -> bool {
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

/// The special-purpose IPv4 ranges (IANA registry, RFC 6890 and successors) that are not
/// globally reachable.
fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    const RANGES: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "unspecified (\"this network\")"),
        ([10, 0, 0, 0], 8, "private"),
        ([100, 64, 0, 0], 10, "shared address space"),
        ([127, 0, 0, 0], 8, "loopback"),
        ([169, 254, 0, 0], 16, "link-local"),
        ([172, 16, 0, 0], 12, "private"),
        ([192, 0, 0, 0], 24, "IETF protocol assignments"),
        ([192, 0, 2, 0], 24, "documentation"),
        ([192, 88, 99, 0], 24, "6to4 relay anycast"),
        ([192, 168, 0, 0], 16, "private"),
        ([198, 18, 0, 0], 15, "benchmarking"),
        ([198, 51, 100, 0], 24, "documentation"),
        ([203, 0, 113, 0], 24, "documentation"),
        ([224, 0, 0, 0], 4, "multicast"),
        ([240, 0, 0, 0], 4, "reserved"),
    ];
    RANGES
        .iter()
        .find(|(net, bits, _)| in4(ip, *net, *bits))
        .map(|(_, _, why)| *why)
}

fn in6(ip: Ipv6Addr, net: [u16; 8], bits: u32) -> bool {
    let mask = if bits == 0 {
        0
    } else {
        u128::MAX << (128 - bits)
    };
    u128::from(ip) & mask == u128::from(Ipv6Addr::from(net)) & mask
}

/// The special-purpose IPv6 ranges that are not globally reachable; addresses that carry an
/// IPv4 address are judged by it.
fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(ip);
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (deprecated compatible form) carry an IPv4 address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    if bits >> 32 == 0 {
        return v4_reason(Ipv4Addr::from(bits as u32)).or(Some("IPv4-compatible"));
    }
    // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
    if in6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        return v4_reason(Ipv4Addr::from(bits as u32));
    }
    // 6to4 2002:a.b.c.d::/48 routes to the embedded IPv4 address.
    if in6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return v4_reason(Ipv4Addr::from((bits >> 80) as u32));
    }
    const RANGES: &[([u16; 8], u32, &str)] = &[
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, "NAT64 local use"),
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "discard-only"),
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "Teredo"),
        ([0x2001, 0x2, 0, 0, 0, 0, 0, 0], 48, "benchmarking"),
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "documentation"),
        ([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28, "ORCHID"),
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "documentation"),
        ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, "segment routing SIDs"),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "unique local"),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local"),
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "site-local"),
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast"),
    ];
    RANGES
        .iter()
        .find(|(net, bits, _)| in6(ip, *net, *bits))
        .map(|(_, _, why)| *why)
}

/// A resolver for reqwest that refuses every name: the client is built with the pinned
/// addresses of the one host it may reach, so any other lookup is a bug or an attack.
#[derive(Debug, Clone, Copy, Default)]
pub struct RefuseAll;

impl reqwest::dns::Resolve for RefuseAll {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let name = name.as_str().to_owned();
        Box::pin(async move { Err(format!("{name}: no lookups outside the SSRF guard").into()) })
    }
}

/// The default resolver as a shared handle.
pub fn system() -> Arc<dyn Resolve> {
    Arc::new(SystemResolver)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    const STRICT: Policy = Policy {
        allow_private: false,
    };
    const LAX: Policy = Policy {
        allow_private: true,
    };

    #[test]
    fn global_addresses_pass() {
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(blocked_reason(ip(a), STRICT), None, "{a}");
        }
    }

    #[test]
    fn special_addresses_blocked() {
        for (a, why) in [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.31.255.255", "private"),
            ("192.168.0.1", "private"),
            ("169.254.169.254", "link-local"),
            ("100.100.100.200", "shared address space"),
            ("0.0.0.0", "unspecified (\"this network\")"),
            ("255.255.255.255", "reserved"),
            ("224.0.0.251", "multicast"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("2002:7f00:1::", "loopback"),
            ("fd00::1", "unique local"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("2001:0:4136:e378::1", "Teredo"),
        ] {
            assert_eq!(blocked_reason(ip(a), STRICT), Some(why), "{a}");
        }
    }

    #[test]
    fn allow_private_keeps_metadata_and_multicast_blocked() {
        assert_eq!(blocked_reason(ip("127.0.0.1"), LAX), None);
        assert_eq!(blocked_reason(ip("10.0.0.1"), LAX), None);
        assert_eq!(blocked_reason(ip("fd12::1"), LAX), None);
        assert_eq!(
            blocked_reason(ip("169.254.169.254"), LAX),
            Some("link-local")
        );
        assert_eq!(blocked_reason(ip("fe80::1"), LAX), Some("link-local"));
        assert!(blocked_reason(ip("0.0.0.0"), LAX).is_some());
        assert_eq!(blocked_reason(ip("ff02::1"), LAX), Some("multicast"));
    }

    fn table(entries: &[(&str, &[&str])]) -> StaticResolver {
        StaticResolver(
            entries
                .iter()
                .map(|(n, a)| {
                    let addrs = a.iter().map(|s| SocketAddr::new(ip(s), 0)).collect();
                    (n.to_string(), addrs)
                })
                .collect(),
        )
    }

    #[tokio::test]
    async fn checks_urls() {
        let r = table(&[
            ("public.example", &["93.184.216.34", "2606:2800:220:1::1"]),
            ("private.example", &["10.0.0.7"]),
            ("mixed.example", &["93.184.216.34", "127.0.0.1"]),
            ("xn--bcher-kva.example", &["93.184.216.34"]),
        ]);
        let ok = check("https://public.example/mcp", STRICT, &r)
            .await
            .unwrap();
        assert_eq!(ok.host, "public.example");
        assert_eq!(ok.addrs[0], "93.184.216.34:443".parse().unwrap());
        assert!(ok.addrs[1].is_ipv6());
        // IDNA: the name is looked up in its ASCII form.
        let idn = check("https://bücher.example/", STRICT, &r).await.unwrap();
        assert_eq!(idn.host, "xn--bcher-kva.example");
        // A fully qualified name (root dot) is the same host: looked up and pinned without the
        // dot, and the URL the client dials carries the name the pin is for.
        let fqdn = check("https://public.example./mcp", STRICT, &r)
            .await
            .unwrap();
        assert_eq!(fqdn.host, "public.example");
        assert_eq!(fqdn.url.as_str(), "https://public.example/mcp");
        assert_eq!(fqdn.addrs, ok.addrs);

        let err = |u: &'static str, p: Policy| {
            let r = &r;
            async move { check(u, p, r).await.unwrap_err() }
        };
        assert!(matches!(
            err("https://private.example/", STRICT).await,
            GuardError::Blocked { why: "private", .. }
        ));
        assert!(matches!(
            err("https://mixed.example/", STRICT).await,
            GuardError::Blocked {
                why: "loopback",
                ..
            }
        ));
        assert!(matches!(
            err("http://public.example/", STRICT).await,
            GuardError::Scheme(_)
        ));
        assert!(matches!(
            err("ftp://public.example/", LAX).await,
            GuardError::Scheme(_)
        ));
        assert!(matches!(
            err("https://u:p@public.example/", STRICT).await,
            GuardError::Userinfo
        ));
        assert!(matches!(
            err("https://nowhere.example/", STRICT).await,
            GuardError::Dns(_)
        ));
        assert!(matches!(
            err("https://127.0.0.1/", STRICT).await,
            GuardError::Blocked { .. }
        ));
        assert!(matches!(
            err("https://[::ffff:a9fe:a9fe]/", LAX).await,
            GuardError::Blocked {
                why: "link-local",
                ..
            }
        ));
        assert!(matches!(
            err("not a url", STRICT).await,
            GuardError::BadUrl(_)
        ));
        let lax = check("http://private.example:8080/x", LAX, &r)
            .await
            .unwrap();
        assert_eq!(lax.addrs, vec!["10.0.0.7:8080".parse().unwrap()]);
    }

    #[tokio::test]
    async fn a_pinned_port_is_dialled_for_a_url_without_one() {
        let pinned: SocketAddr = "127.1.1.1:8443".parse().unwrap();
        let r = StaticResolver(HashMap::from([("mcp.example".to_owned(), vec![pinned])]));
        let at = check("https://mcp.example/mcp", LAX, &r).await.unwrap();
        assert_eq!(at.addrs, vec![pinned]);
        // The URL keeps its name and its (default) port: Host and SNI are the real ones.
        assert_eq!(at.url.as_str(), "https://mcp.example/mcp");
    }

    #[tokio::test]
    async fn a_port_written_in_the_url_wins_over_a_pinned_one() {
        let pinned: SocketAddr = "127.1.1.1:8443".parse().unwrap();
        let r = StaticResolver(HashMap::from([("mcp.example".to_owned(), vec![pinned])]));
        let at = check("https://mcp.example:9000/mcp", LAX, &r)
            .await
            .unwrap();
        assert_eq!(at.addrs, vec!["127.1.1.1:9000".parse().unwrap()]);
    }

    #[tokio::test]
    async fn a_pinned_address_is_checked_like_any_other() {
        let pinned: SocketAddr = "127.1.1.1:8443".parse().unwrap();
        let r = StaticResolver(HashMap::from([("mcp.example".to_owned(), vec![pinned])]));
        assert!(matches!(
            check("https://mcp.example/mcp", STRICT, &r).await,
            Err(GuardError::Blocked {
                why: "loopback",
                ..
            })
        ));
    }
}
