//! The Server Card of a remote (SEP-2127, draft): a JSON document its origin may publish that
//! describes the server and lists its tools, which clients may read instead of asking the
//! server. A card that lists other tools than the endpoint serves is a signal (`card-mismatch`).
//!
//! After the listing, in the observation's own time and host slot: one `GET` of
//! `<origin>/.well-known/mcp/server-card.json`, and when that location has none (404, 405,
//! 410) one of `<endpoint>/server-card`. Both are on the endpoint's host, so the connection
//! is pinned to the addresses the guard checked for it; no header of the remote's declaration
//! and no cookie is sent, no redirect is followed, each request is bounded by
//! [`CARD_TIMEOUT`] and its body by [`MAX_CARD_BYTES`]. The card's exact text is kept; what
//! it says is read by `toolset::surface`, never here.

use toolmark_toolset::surface::{OK, RawCard};

use crate::body::{Body, BodyError};
use crate::guard::Pinned;
use crate::limits::{CARD_TIMEOUT, MAX_CARD_BYTES};
use crate::mcp::ClientConfig;
use crate::observe::Dialled;
use crate::registry::Declared;

/// A card's status when no location served one.
pub const ABSENT: &str = "absent";

/// The locations asked, in order: the origin's well-known card, then the endpoint's own.
pub fn locations(endpoint: &url::Url) -> [url::Url; 2] {
    let mut origin = endpoint.clone();
    origin.set_path("/.well-known/mcp/server-card.json");
    origin.set_query(None);
    origin.set_fragment(None);
    let mut own = endpoint.clone();
    let path = endpoint.path().trim_end_matches('/');
    own.set_path(&format!("{path}/server-card"));
    own.set_query(None);
    own.set_fragment(None);
    [origin, own]
}

/// Fetch the card of the remote at `pinned` (its URL as dialled), counting requests and bytes
/// in `dialled`.
pub(crate) async fn fetch(
    config: &ClientConfig,
    pinned: &Pinned,
    dialled: &mut Dialled,
) -> RawCard {
    let client = match crate::mcp::build_client(config, pinned, &Declared::default()) {
        Ok(c) => c,
        Err(e) => {
            return RawCard {
                url: String::new(),
                status: "protocol".into(),
                detail: format!("internal: cannot build the HTTP client: {e}"),
                body: None,
            };
        }
    };
    let mut card = RawCard::default();
    for url in locations(&pinned.url) {
        card = match tokio::time::timeout(CARD_TIMEOUT, get(&client, &url, dialled)).await {
            Ok(c) => c,
            Err(_) => RawCard {
                url: url.to_string(),
                status: "timeout".into(),
                detail: format!("no card within {} s", CARD_TIMEOUT.as_secs_f64()),
                body: None,
            },
        };
        if card.status != ABSENT {
            break;
        }
    }
    card
}

async fn get(client: &reqwest::Client, url: &url::Url, dialled: &mut Dialled) -> RawCard {
    let mut card = RawCard {
        url: url.to_string(),
        ..RawCard::default()
    };
    dialled.requests += 1;
    let response = match client
        .get(url.clone())
        .header(
            reqwest::header::ACCEPT,
            "application/mcp-server-card+json, application/json",
        )
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => {
            card.status = if e.is_timeout() { "timeout" } else { "connect" }.into();
            card.detail = crate::error_chain(&e);
            return card;
        }
    };
    let code = response.status().as_u16();
    if matches!(code, 404 | 405 | 410) {
        card.status = ABSENT.into();
        card.detail = format!("HTTP {code}");
        return card;
    }
    if response.status().is_redirection() {
        card.status = "redirect".into();
        card.detail = format!("HTTP {code} (redirects are not followed)");
        return card;
    }
    if !response.status().is_success() {
        card.status = format!("http-{code}");
        card.detail = format!("HTTP {code}");
        return card;
    }
    let body = match Body::new(response, MAX_CARD_BYTES) {
        Ok(b) => b.read_all().await,
        Err(e) => Err(e),
    };
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            card.status = match e {
                BodyError::TooLarge(_) | BodyError::Ratio(..) => "too-large",
                BodyError::Timeout => "timeout",
                _ => "protocol",
            }
            .into();
            card.detail = e.to_string();
            return card;
        }
    };
    dialled.bytes += body.len() as u64;
    let text = match String::from_utf8(body) {
        Ok(t) => t,
        Err(_) => {
            card.status = "not-json".into();
            card.detail = "the card is not UTF-8".into();
            return card;
        }
    };
    if let Err(e) = toolmark_toolset::json::parse(&text) {
        card.status = "not-json".into();
        card.detail = format!("the card is not JSON: {e}");
        return card;
    }
    card.status = OK.into();
    card.body = Some(text);
    card
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_is_asked_at_the_origin_then_beside_the_endpoint() {
        let [origin, own] = locations(&"https://x.example:8443/v1/mcp/?k=1".parse().unwrap());
        assert_eq!(
            origin.as_str(),
            "https://x.example:8443/.well-known/mcp/server-card.json"
        );
        assert_eq!(own.as_str(), "https://x.example:8443/v1/mcp/server-card");
        let [_, root] = locations(&"https://x.example/".parse().unwrap());
        assert_eq!(root.as_str(), "https://x.example/server-card");
    }
}
