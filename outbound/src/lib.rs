//! Outbound HTTP: the one place toolmark's own requests to other hosts are made and configured.
//!
//! What it does:
//! - [`guard`]: the SSRF guard — parse a URL, resolve its host once, require every address to
//!   be global (unless the policy allows private ones), and pin the connection to the checked
//!   addresses, so DNS rebinding has nothing to rebind.
//! - [`client`]: build the HTTP clients, with their rules: no redirect followed, no proxy, a
//!   connect timeout, rustls with the platform's verifier or an explicit [`Trust`], the
//!   [`Outbound`] settings' user agent; [`client::pinned`] for guarded requests,
//!   [`client::unguarded`] for a host the operator named (a registry, a remote log).
//! - [`body`]: read a response body under caps applied while it streams (decompressed size,
//!   compression ratio, silence between chunks), optionally charged to the caller's meter.
//! - [`webhook`]: one `POST` of a signed security event to a subscriber.
//! - [`witness`]: one C2SP `tlog-witness` `add-checkpoint` submission to a witness.
//!
//! Every limit is a named constant ([`limits`], and next to each POST).
//!
//! What it never does: follow a redirect, send credentials it was not given, read a body
//! without a cap, dial an address the guard did not check, retry (what a failure means and
//! when to try again is the caller's decision), or serve HTTP. It knows nothing of MCP, of the
//! registry or of the log's storage: the crawler (`toolmark-crawler`), the webhooks
//! (`toolmark-webhooks`) and the cosigner (`toolmark-cosign`) decide what to send and what an
//! answer means.

#![deny(missing_docs)]
// The one crate that builds HTTP clients (clippy.toml forbids it elsewhere).
#![allow(clippy::disallowed_methods)]

pub mod body;
pub mod client;
pub mod guard;
pub mod limits;
pub mod webhook;
pub mod witness;

pub use client::{ClientError, Outbound, Trust, TrustError};

/// An error and its sources on one line (`a: b: c`), for details.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
