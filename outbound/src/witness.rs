//! One C2SP `tlog-witness` submission: `POST <prefix>/add-checkpoint` to a witness, through the
//! same SSRF guard and client rules as every other request toolmark makes.
//!
//! The URL is checked by [`guard::check`] (https only unless the policy allows private
//! addresses, every address checked, the connection pinned), no redirect is followed (a 3xx is a
//! [`Submission::Refused`] like any other unexpected status), the exchange is bounded by a
//! timeout and the answer by [`toolmark_log::witness::MAX_RESPONSE_BYTES`]. A 409 answer's size
//! is read only from a `text/x.tlog.size` body. What the answer's signature lines mean (do they
//! verify, is the policy met) is the caller's decision; this module reports what the witness
//! said.

use std::time::Duration;

use toolmark_log::witness::{ADD_CHECKPOINT_PATH, MAX_RESPONSE_BYTES, SIZE_CONTENT_TYPE};

use reqwest::header::HeaderMap;

use crate::{Outbound, guard};

/// What a witness answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// 200: the body (the witness's signature lines, not yet verified).
    Cosigned(Vec<u8>),
    /// 409 with a `text/x.tlog.size` body: the size the witness last cosigned.
    Conflict(u64),
    /// Any other status (400, 403, 404, 422, 3xx, 5xx, or a 409 without a readable size), with
    /// the start of the body for the operator.
    Refused {
        /// The HTTP status.
        status: u16,
        /// The first bytes of the body, as text.
        detail: String,
    },
    /// The SSRF guard refused the URL.
    Blocked(String),
    /// No usable answer: connection refused or reset, TLS failure, a body over the cap.
    Failed(String),
    /// No complete answer within the timeout.
    TimedOut,
}

/// Most characters of a refusal's body kept for the operator.
pub const MAX_REFUSAL_DETAIL: usize = 200;

/// `POST body` to `<prefix>/add-checkpoint` within `timeout`.
pub async fn add_checkpoint(
    config: &Outbound,
    prefix: &str,
    body: Vec<u8>,
    timeout: Duration,
) -> Submission {
    let url = format!("{}/{ADD_CHECKPOINT_PATH}", prefix.trim_end_matches('/'));
    // The whole submission, the guard's name resolution included, is one timeout.
    let exchange = async {
        let pinned = match guard::check(&url, config.policy, config.resolver.as_ref()).await {
            Ok(p) => p,
            Err(e) => return Err(Submission::Blocked(e.to_string())),
        };
        let client = crate::client::pinned(config, &pinned, HeaderMap::new())
            .map_err(|e| Submission::Failed(e.to_string()))?;
        let failed = |e: String| Submission::Failed(e);
        let response = client
            .post(pinned.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(body)
            .send()
            .await
            .map_err(|e| failed(crate::error_chain(&e)))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or_default().trim().to_owned());
        let body = crate::body::read_capped(response, MAX_RESPONSE_BYTES)
            .await
            .map_err(|e| failed(e.to_string()))?;
        Ok::<_, Submission>((status, content_type, body))
    };
    let (status, content_type, body) = match tokio::time::timeout(timeout, exchange).await {
        Err(_) => return Submission::TimedOut,
        Ok(Err(s)) => return s,
        Ok(Ok(r)) => r,
    };
    match status {
        200 => Submission::Cosigned(body),
        409 if content_type.as_deref() == Some(SIZE_CONTENT_TYPE) => {
            match toolmark_log::witness::parse_size_body(&body) {
                Ok(size) => Submission::Conflict(size),
                Err(e) => Submission::Refused {
                    status,
                    detail: e.to_string(),
                },
            }
        }
        _ => Submission::Refused {
            status,
            detail: String::from_utf8_lossy(&body)
                .chars()
                .take(MAX_REFUSAL_DETAIL)
                .collect(),
        },
    }
}
