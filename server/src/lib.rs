//! The connection layer between untrusted clients and toolmark's router: how a client is
//! identified ([`client_key`]); accepting connections under caps, timeouts and a request-body
//! budget, and shutting down with a deadline; those limits as an operator sets them
//! ([`HttpOptions`], the `[http]` configuration section, and [`HttpFlags`], its flags).
//!
//! What it never does: know a route, read the data directory, or parse a request body.

#![deny(missing_docs)]

pub mod conn;
pub mod limits;
pub mod options;
pub mod serve;

use std::net::{IpAddr, Ipv6Addr};

pub use limits::{FileLimit, Limits, connection_cap, raise_file_limit};
pub use options::{BadHttpOptions, HttpFlags, HttpOptions};
pub use serve::{ServeError, Stats, bind, serve, serve_process};

/// The `error` code of a status in toolmark's JSON errors: its reason phrase in lowercase,
/// words joined by `-` (`bad-request`, `payload-too-large`, `service-unavailable`…).
pub fn error_code(status: axum::http::StatusCode) -> String {
    status
        .canonical_reason()
        .unwrap_or("error")
        .to_ascii_lowercase()
        .replace(' ', "-")
}

/// toolmark's JSON error response, the one shape every refusal has (the connection layer's and
/// the API's): `status` and `{"error": error_code(status), "detail": detail}`.
pub fn json_error(status: axum::http::StatusCode, detail: &str) -> axum::response::Response {
    use axum::response::IntoResponse;
    let body = serde_json::json!({ "error": error_code(status), "detail": detail });
    (status, axum::Json(body)).into_response()
}

/// The unit one client is counted as, for connection caps and rate limits: an IPv4 address
/// itself; an IPv6 address by its /64 (one subscriber's prefix: anyone given a /64 can use
/// 2^64 addresses, so a per-/128 key would give them unlimited buckets). IPv4-mapped IPv6
/// addresses (`::ffff:a.b.c.d`, what a dual-stack socket reports) count as their IPv4 address.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_addresses_are_their_own_key() {
        let a: IpAddr = "203.0.113.7".parse().unwrap();
        assert_eq!(client_key(a), a);
        assert_ne!(client_key("203.0.113.8".parse().unwrap()), a);
    }

    #[test]
    fn ipv6_addresses_share_their_slash_64() {
        let a = client_key("2001:db8:1:2:aaaa::1".parse().unwrap());
        let b = client_key("2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap());
        assert_eq!(a, b);
        assert_eq!(a, "2001:db8:1:2::".parse::<IpAddr>().unwrap());
        assert_ne!(a, client_key("2001:db8:1:3::1".parse().unwrap()));
    }

    #[test]
    fn ipv4_mapped_ipv6_counts_as_ipv4() {
        let mapped: IpAddr = "::ffff:198.51.100.4".parse().unwrap();
        assert_eq!(
            client_key(mapped),
            "198.51.100.4".parse::<IpAddr>().unwrap()
        );
    }
}
