//! `GET /log`: the current checkpoint and verifier key, and the in-browser verification of the
//! checkpoint and of a proof bundle (`verify.js`).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use maud::html;

use super::layout::{Nav, Page, fact, render, time};
use super::{Html, bad_request, blocking, data};
use crate::AppState;
use crate::logroutes::valid_id;
use crate::witnesses::{View, time_text};

pub(super) async fn page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    let wanted = match params.get("target").map(String::as_str) {
        None | Some("") => None,
        Some(t) if valid_id(t) => Some(t.to_owned()),
        Some(_) => return Err(bad_request("target must be 16 lowercase hex digits")),
    };
    let vkey = state.log.vkey().to_owned();
    let (at, target, witnessing) = blocking(move || {
        let at = data::checkpoint(&state)?;
        let target = match wanted {
            Some(t) => Some(t),
            None => data::newest_target(&state)?,
        };
        let witnessing = View::of(&state, &at);
        Ok((at, target, witnessing))
    })
    .await?;
    let note = String::from_utf8_lossy(&at.note).into_owned();
    let cp = &at.checkpoint;
    let body = html! {
        h1 { "The log" }
        p {
            "Every observation toolmark makes is an entry of a C2SP transparency log \
             (RFC 6962 Merkle tree, Ed25519-signed checkpoints, served as tiles). \
             The checkpoint below commits to every entry so far."
        }
        section aria-labelledby="cp-h" {
            h2 id="cp-h" { "Current checkpoint" }
            dl class="facts" {
                (fact("Origin", html! { code { (cp.origin) } }))
                (fact("Tree size", html! { span id="tree-size" { (cp.size) } " entries" }))
                (fact("Root hash", html! { code class="digest" { (cp.root.to_base64()) } }))
                (fact("Verifier key", html! { code class="digest" id="vkey" { (vkey) } }))
            }
            pre class="note" id="checkpoint" aria-label="Signed checkpoint text" { (note) }
            p {
                a href="/checkpoint" { "/checkpoint" } " (text) · "
                a href="/api/v1/log/vkey" { "verifier key" } " · "
                a href="/api/v1/proof/inclusion?index=0" { "an inclusion proof" }
            }
        }
        (witnesses_section(&witnessing))
        section aria-labelledby="verify-h" {
            h2 id="verify-h" { "Verify in your browser" }
            p {
                "The button fetches " code { "/checkpoint" } " and " code { "/api/v1/log/vkey" }
                ", checks the key id and the checkpoint's Ed25519 signature and the witnesses' \
                 cosignatures (keys from " code { "/api/v1/witnesses" } "), then checks a proof \
                 bundle: the latest entry of the target below (from " code { "/api/v1/lookup/…" }
                "), or the bundle you paste, with the cosignatures on its checkpoint. Everything \
                 is computed here with WebCrypto; nothing is taken on the server's word."
            }
            noscript { p class="error" { "Verification runs in the browser and needs JavaScript." } }
            form id="verify-form" class="stack" {
                div class="field" {
                    label for="verify-target" { "Target id (16 hex digits)" }
                    input id="verify-target" name="target" type="text" pattern="[0-9a-f]{16}"
                        autocomplete="off" spellcheck="false" value=(target.as_deref().unwrap_or(""))
                        aria-describedby="verify-target-help";
                    p class="help" id="verify-target-help" { "Used when the bundle box is empty." }
                }
                div class="field" {
                    label for="verify-bundle" { "Or paste a " code { "c2sp.org/tlog-proof@v1" } " bundle" }
                    textarea id="verify-bundle" name="bundle" rows="10" spellcheck="false" {}
                }
                div class="field buttons" {
                    button type="submit" id="verify-button" { "Verify" }
                    button type="button" id="verify-load" { "Load the target's bundle into the box" }
                }
            }
            div id="verify-output" class="result" aria-live="polite" {
                p id="verify-result" role="status" { "Not verified yet." }
                ol id="verify-steps" class="steps" {}
                pre id="verify-entry" class="json" hidden {}
            }
        }
    };
    Ok(render(
        StatusCode::OK,
        Page {
            title: "Log".into(),
            nav: Nav::Log,
            scripts: &["verify.js"],
            body,
        },
    ))
}

/// Who cosigned the published checkpoint and when, under the configured witness policy (or
/// that none is configured).
fn witnesses_section(view: &View) -> maud::Markup {
    let cosigned = view.witnessed.as_ref().ok();
    let newest = view.newest().and_then(time_text);
    html! {
        section aria-labelledby="witnesses-h" {
            h2 id="witnesses-h" { "Witnesses" }
            @match &view.policy {
                None => p id="witnesses-none" {
                    "No witness is configured: the checkpoint is signed by the log alone."
                },
                Some(policy) => {
                    p {
                        "Independent witnesses cosign the checkpoint (C2SP "
                        code { "cosignature/v1" } "): each states that, at the time it signed, \
                         this is the largest tree it saw for this log, consistent with every \
                         earlier one. The checkpoint is published only once the quorum has \
                         cosigned; the hourly heartbeat has them cosign the same tree again, so \
                         the newest cosignature says how fresh the log is."
                    }
                    dl class="facts" {
                        (fact("Quorum", html! { span id="witness-quorum" { (view.quorum) } }))
                        (fact("Met by this checkpoint", html! {
                            span id="witness-met" {
                                @if cosigned.is_some_and(|w| w.satisfied) { "yes" } @else { "no" }
                            }
                        }))
                        (fact("Newest cosignature", html! {
                            span id="witness-newest" { (time(newest.as_deref())) }
                        }))
                    }
                    @if let Err(e) = &view.witnessed {
                        p class="error" id="witness-error" { "A cosignature does not verify: " (e) }
                    }
                    table class="list" id="witnesses" {
                        caption { "Witnesses of the policy and their cosignatures on the checkpoint above" }
                        thead { tr { th scope="col" { "Witness" } th scope="col" { "Verifier key" } th scope="col" { "Cosigned at" } } }
                        tbody {
                            @for w in policy.witnesses() {
                                @let c = cosigned.and_then(|ws| ws.cosigned.iter().find(|c| c.witness == w.name));
                                tr {
                                    th scope="row" {
                                        @match &w.url {
                                            Some(u) => { (w.name) br; span class="muted" { (u) } },
                                            None => (w.name),
                                        }
                                    }
                                    td { code class="digest" { (w.key.vkey()) } }
                                    td {
                                        @match c {
                                            Some(c) => {
                                                (time(time_text(c.timestamp).as_deref()))
                                                @if !c.fresh { " (dated ahead of this server's clock: not counted)" }
                                            },
                                            None => "not on this checkpoint",
                                        }
                                    }
                                }
                            }
                        }
                    }
                },
            }
        }
    }
}
