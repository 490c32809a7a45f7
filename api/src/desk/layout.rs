//! The layout every desk page is put in, and the small pieces several pages share.
//!
//! Pages are [`maud`] templates: every value spliced into them is escaped (`&`, `<`, `>`,
//! `"`), and [`render`] then writes each `'` as `&#39;` too, as the desk always has, so a
//! value is inert in text and in any quoted attribute. Nothing here writes a script or style
//! element (the CSP forbids inline ones), which is where that reference would not be read.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, PreEscaped, html};
use toolmark_toolset::classify::Class;

use super::asset_url;
use crate::changes::ChangeView;

/// Which nav item a page is under.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Nav {
    Servers,
    Changes,
    Log,
    Check,
    Stats,
    None,
}

/// The nav's items: which page, its path, its label.
const NAV: [(Nav, &str, &str); 5] = [
    (Nav::Servers, "/", "Servers"),
    (Nav::Changes, "/changes", "Changes"),
    (Nav::Log, "/log", "Log"),
    (Nav::Check, "/check", "Check"),
    (Nav::Stats, "/stats", "Stats"),
];

/// The first line of every page. `PreEscaped` because it is constant markup (maud's
/// `DOCTYPE` is upper case and has no line break after it; pages have always begun with this
/// line).
const DOCTYPE: PreEscaped<&str> = PreEscaped("<!doctype html>\n");

/// A page to be put in the layout.
pub(super) struct Page {
    /// The `<title>`, before " — toolmark".
    pub title: String,
    /// The nav item marked current.
    pub nav: Nav,
    /// Assets loaded as deferred scripts.
    pub scripts: &'static [&'static str],
    /// What goes in `<main>`.
    pub body: Markup,
}

/// `markup` as the desk writes it: maud's escaping, and `'` as `&#39;` (see the module doc).
pub(crate) fn to_html(markup: Markup) -> String {
    markup.into_string().replace('\'', "&#39;")
}

/// The page in the layout, with the desk's headers.
pub(super) fn render(status: StatusCode, page: Page) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (page.title) " — toolmark" }
                link rel="icon" href=(asset_url("icon.svg")) type="image/svg+xml";
                link rel="stylesheet" href=(asset_url("style.css"));
                @for s in page.scripts {
                    script src=(asset_url(s)) defer {}
                }
            }
            body {
                a class="skip" href="#main" { "Skip to content" }
                header {
                    nav aria-label="Main" {
                        a class="brand" href="/" { "toolmark" }
                        ul {
                            @for (n, href, label) in NAV {
                                li { a href=(href) aria-current=[(n == page.nav).then_some("page")] { (label) } }
                            }
                        }
                    }
                }
                main id="main" tabindex="-1" { (page.body) }
                footer {
                    p {
                        "toolmark: a public transparency log of MCP tool definitions. Data: "
                        a href="/checkpoint" { "checkpoint" } " · "
                        a href="/api/v1/log/vkey" { "log key" } " · "
                        a href="/api/v1/issuer" { "answer key" } " · "
                        a href="/feed.xml" { "feed" }
                    }
                }
            }
        }
    };
    let mut r = (status, to_html(markup)).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    super::security_headers(h);
    r
}

/// The desk's error page for `status`, saying `message`.
pub(crate) fn error_page(status: StatusCode, message: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    render(
        status,
        Page {
            title: title.to_owned(),
            nav: Nav::None,
            scripts: &[],
            body: html! {
                h1 { (title) }
                p class="error" { (message) }
                p { a href="/" { "Back to the servers" } }
            },
        },
    )
}

/// A table's header row: a `th scope="col"` per column, those named in `numeric` aligned right.
pub(super) fn head(columns: &[&str], numeric: &[&str]) -> Markup {
    html! {
        thead {
            tr {
                @for c in columns {
                    th scope="col" class=[numeric.contains(c).then_some("num")] { (c) }
                }
            }
        }
    }
}

/// A listing: a scrolling `table class="list"` with id `id`, a caption for screen readers, the
/// header row of `columns` ([`head`]) and `rows` as its body.
pub(super) fn listing(
    id: &str,
    caption: &str,
    columns: &[&str],
    numeric: &[&str],
    rows: Markup,
) -> Markup {
    html! {
        div class="scroll" {
            table class="list" id=(id) {
                caption class="visually-hidden" { (caption) }
                (head(columns, numeric))
                tbody { (rows) }
            }
        }
    }
}

/// A term and its value in a `<dl class="facts">`.
pub(super) fn fact(term: &str, value: Markup) -> Markup {
    html! { div { dt { (term) } dd { (value) } } }
}

/// A time as `<time>`, or a dash when there is none.
pub(super) fn time(t: Option<&str>) -> Markup {
    html! {
        @match t {
            Some(t) if !t.is_empty() => time datetime=(t) { (t) },
            _ => "—",
        }
    }
}

/// A count, or a dash when there is none.
pub(super) fn count<N: maud::Render>(n: Option<N>) -> Markup {
    html! {
        @match n {
            Some(n) => (n),
            None => "—",
        }
    }
}

/// A status as a badge: `ok` good, a skip reason neutral, anything else bad.
pub(super) fn status_badge(status: Option<&str>, skipped: bool) -> Markup {
    html! {
        @match status {
            None => span class="badge neutral" { "not observed" },
            Some("ok") => span class="badge good" { "ok" },
            Some(s) if skipped => span class="badge neutral" { "skipped: " (s) },
            Some(s) => span class="badge bad" { (s) },
        }
    }
}

/// A change class as a badge (the word is always shown, the colour only repeats it).
pub(super) fn class_badge(class: Class) -> Markup {
    html! { span class={ "badge class-" (class.as_str()) } { (class.as_str()) } }
}

/// A digest in code, or a dash when there is none.
pub(super) fn digest(d: Option<&str>) -> Markup {
    html! {
        @match d {
            Some(d) => code class="digest" { (d) },
            None => "—",
        }
    }
}

/// A log entry's index, linking its inclusion proof.
pub(super) fn entry_link(index: u64) -> Markup {
    html! {
        a href={ "/api/v1/proof/inclusion?index=" (index) } title={ "inclusion proof of entry " (index) } { "#" (index) }
    }
}

/// The entry a target's tools come from, or a dash.
pub(super) fn entry_or_dash(index: Option<u64>) -> Markup {
    html! {
        @match index {
            Some(i) => (entry_link(i)),
            None => "—",
        }
    }
}

/// A change's exact counts of added, removed and modified tools.
pub(super) fn counts(c: &ChangeView) -> Markup {
    let r = &c.row;
    if c.authorization.is_some() {
        return html! { span class="counts" { "authorization server changed" } };
    }
    if let Some(b) = &c.behaviour {
        return html! { span class="counts" { "behaviour changed (" (b.old_version) " → " (b.new_version) ")" } };
    }
    if let Some(g) = &c.registry {
        return html! { span class="counts" { (g.summary()) " (" (g.old_version) " → " (g.new_version) ")" } };
    }
    if c.instructions.is_some() || c.scan.is_some() {
        return html! { span class="counts" { (crate::feeds::change_summary(c)) } };
    }
    if c.surface.is_some() {
        return html! { span class="counts" {
            (c.headline()) " (" (r.added) " added, " (r.removed) " removed, " (r.modified) " changed)"
        } };
    }
    if c.card_mismatch.is_some() {
        return html! { span class="counts" { (c.headline()) } };
    }
    html! {
        span class="counts" {
            span title="tools added" { "+" (r.added) } " "
            span title="tools removed" { "−" (r.removed) } " "
            span title="tools modified" { "~" (r.modified) }
        }
    }
}
