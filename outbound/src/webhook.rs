//! One webhook delivery: a `POST` of a signed event to a subscriber's URL, through the same SSRF
//! guard and client rules as every other request toolmark makes.
//!
//! The URL is checked by [`guard::check`] (https only, every address global unless the policy
//! allows private ones, the connection pinned to the checked addresses), the client never
//! follows a redirect (a 3xx is an [`Outcome::Status`] like any other non-2xx) and sends no
//! credentials beyond the headers it is given, the whole exchange is bounded by a timeout, and
//! at most [`MAX_WEBHOOK_RESPONSE_BYTES`] of the response body are read (and then dropped: only
//! the status matters). What a 2xx means, what is retried and when is the caller's decision
//! (`toolmark-webhooks`); this module reports what happened.

use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::{Outbound, guard};

/// How long one delivery may take, connection to the end of the response.
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Most bytes of a receiver's response body read (the rest is not read: only the status
/// counts).
pub const MAX_WEBHOOK_RESPONSE_BYTES: usize = 4 * 1024;

/// How a delivery ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver answered with this status (2xx: delivered; any other, redirects included,
    /// not delivered).
    Status(u16),
    /// The SSRF guard refused the URL.
    Blocked(String),
    /// No answer: connection refused or reset, TLS failure, an unreadable response.
    Failed(String),
    /// No complete answer within the timeout.
    TimedOut,
}

impl Outcome {
    /// Whether the receiver acknowledged the event (a 2xx status).
    pub fn delivered(&self) -> bool {
        matches!(self, Outcome::Status(s) if (200..300).contains(s))
    }
}

/// `POST body` (as `application/json`) to `url` with `headers`, within `timeout`.
pub async fn post(
    config: &Outbound,
    url: &str,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
    timeout: Duration,
) -> Outcome {
    let pinned = match guard::check(url, config.policy, config.resolver.as_ref()).await {
        Ok(p) => p,
        Err(e) => return Outcome::Blocked(e.to_string()),
    };
    let client = match crate::client::pinned(config, &pinned, HeaderMap::new()) {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let started = tokio::time::Instant::now();
    let mut request = client
        .post(pinned.url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let response = match tokio::time::timeout(timeout, request.send()).await {
        Err(_) => return Outcome::TimedOut,
        Ok(Err(e)) => return Outcome::Failed(crate::error_chain(&e)),
        Ok(Ok(r)) => r,
    };
    // The status decides; the body is read (at most the cap, within what is left of the
    // timeout) only to end the exchange politely, and how that goes changes nothing: a receiver
    // that acknowledged the event must not get it again because its body was slow.
    let status = response.status().as_u16();
    let left = timeout.saturating_sub(started.elapsed());
    let _ = tokio::time::timeout(
        left,
        crate::body::read_capped(response, MAX_WEBHOOK_RESPONSE_BYTES),
    )
    .await;
    Outcome::Status(status)
}
