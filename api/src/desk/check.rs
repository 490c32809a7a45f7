//! `GET /check`: the form to check a tool set; `check.js` posts it to `/api/v1/check` and
//! verifies the signed answer and its proof in the browser.

use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::layout::{Nav, Page, render};

pub(super) async fn page() -> Response {
    let body = html! {
        h1 { "Check a tool set" }
        p {
            "Paste what a server answered to " code { "tools/list" } " (the result object, the \
             whole JSON-RPC response, or a bare array of tools) and say which server it came \
             from. The desk asks " code { "/api/v1/check" } " whether toolmark observed exactly \
             this set there, then verifies the signed answer and its log proof in your browser."
        }
        noscript {
            p class="error" {
                "Checking runs in the browser and needs JavaScript (or POST to "
                code { "/api/v1/check" } " yourself)."
            }
        }
        form id="check-form" class="stack" {
            div class="field" {
                label for="check-endpoint" {
                    "Endpoint URL or package (" code { "npm:…" } ", " code { "pypi:…" } ")"
                }
                input id="check-endpoint" name="endpoint" type="text" inputmode="url"
                    autocomplete="off" spellcheck="false" maxlength="2000";
            }
            div class="field" {
                label for="check-name" { "Server name (optional with an endpoint)" }
                input id="check-name" name="name" type="text" autocomplete="off"
                    spellcheck="false" maxlength="2000";
            }
            div class="field" {
                label for="check-tools" { "The " code { "tools/list" } " result" }
                textarea id="check-tools" name="tools" rows="14" spellcheck="false" required
                    aria-describedby="check-tools-help" {}
                p class="help" id="check-tools-help" {
                    "Sent as it is: the tools' JSON text is not re-encoded."
                }
            }
            div class="field buttons" { button type="submit" id="check-button" { "Check" } }
        }
        div id="check-output" class="result" aria-live="polite" {
            p id="check-status" role="status" {}
            div id="check-answer" hidden {
                h2 { "Answer" }
                p { "Match: " span id="check-match" class="badge" {} }
                p id="check-note" {}
                dl class="facts" id="check-facts" {}
                h2 { "Verification" }
                p id="check-verify" { "Not verified yet." }
                ol id="check-steps" class="steps" {}
                details {
                    summary { "The answer as received" }
                    pre id="check-raw" class="json" {}
                }
            }
        }
    };
    render(
        StatusCode::OK,
        Page {
            title: "Check".into(),
            nav: Nav::Check,
            scripts: &["verify.js", "check.js"],
            body,
        },
    )
}
