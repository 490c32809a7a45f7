//! The desk: the web UI served by the same process as the API.
//!
//! Plain server-rendered HTML (every value escaped by [`esc`]), one shared layout with a nav,
//! one stylesheet and two scripts embedded in the binary (`src/desk/`), no build step. Every
//! page works without JavaScript except the two verification features:
//!
//! - `GET /` — servers: search (`q`), state filter (`state`), paging (`limit`, `offset`).
//! - `GET /s/{id}` — one target: summary, timeline of observations, current tools, changes.
//! - `GET /changes` — changes newest first, class filter (`class`), paging (`before`, `limit`).
//! - `GET /changes/{id}` — one change: class, every signal, the diff, digests, entries.
//! - `GET /log` — the current checkpoint and verifier key; `verify.js` checks the checkpoint's
//!   signature and an inclusion proof in the browser (WebCrypto Ed25519 and SHA-256).
//! - `GET /check` — paste a `tools/list` result; `check.js` posts it to `/api/v1/check` and
//!   verifies the answer's signature (RFC 8785 bytes) and its proof bundle in the browser.
//! - `GET /desk/{asset}` — the embedded assets; `?v=<content hash>` URLs (the ones the pages
//!   link) are cached as immutable, bare ones revalidate with the hash as `ETag`.
//!
//! Every desk response carries a strict `Content-Security-Policy` (`default-src 'self'`, no
//! inline script or style anywhere). The handlers read the index directly (read-only
//! connections from the pool), the blob store for current tools, and the log reader for the
//! checkpoint. `docs/desk.md` describes the pages and the exact bytes the browser checks.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;
use toolmark_index::IndexError;
use toolmark_index::index::{ChangeRow, ObservationRow, ServerRow, TargetRow};

use crate::AppState;
use crate::logroutes::valid_id;

/// The `Content-Security-Policy` of every desk response: only this origin's files, no inline
/// script or style, no plugins, no framing, forms post only here.
pub const CSP: &str = "default-src 'self'; base-uri 'none'; form-action 'self'; \
                       frame-ancestors 'none'; object-src 'none'";

/// Rows per page when `limit` is not given.
pub const DEFAULT_LIMIT: u32 = 50;

/// Most rows per page (`limit` above it is refused with 400).
pub const MAX_LIMIT: u32 = 200;

/// Observations shown per page of a target's timeline.
pub const TIMELINE_ROWS: u32 = 100;

/// Changes of one target listed on its page (newest first).
pub const TARGET_CHANGES: u32 = 200;

/// The state filters of the servers page, with their labels.
pub const STATES: [(&str, &str); 6] = [
    ("all", "All"),
    ("observed", "Observed (last observation ok)"),
    ("changed", "Changed (at least one change)"),
    ("failing", "Failing (last observation not ok)"),
    ("skipped", "Skipped (not dialled)"),
    ("delisted", "Delisted"),
];

/// The change classes, mildest first.
pub const CLASSES: [&str; 3] = ["benign", "unsure", "dangerous"];

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: [Asset; 4] = [
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("desk/style.css"),
    },
    Asset {
        name: "verify.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("desk/verify.js"),
    },
    Asset {
        name: "check.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("desk/check.js"),
    },
    Asset {
        name: "icon.svg",
        content_type: "image/svg+xml",
        body: include_str!("desk/icon.svg"),
    },
];

/// The first 16 hex digits of SHA-256 of each asset (its version in URLs and its `ETag`).
fn versions() -> &'static HashMap<&'static str, String> {
    static V: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    V.get_or_init(|| {
        use sha2::Digest;
        ASSETS
            .iter()
            .map(|a| {
                let d = sha2::Sha256::digest(a.body.as_bytes());
                (a.name, d[..8].iter().map(|b| format!("{b:02x}")).collect())
            })
            .collect()
    })
}

/// The URL a page links an asset by (content-versioned, so it can be cached forever).
pub fn asset_url(name: &str) -> String {
    match versions().get(name) {
        Some(v) => format!("/desk/{name}?v={v}"),
        None => format!("/desk/{name}"),
    }
}

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(servers_page))
        .route("/s/{id}", get(target_page))
        .route("/changes", get(changes_page))
        .route("/changes/{id}", get(change_page))
        .route("/log", get(log_page))
        .route("/check", get(check_page))
        .route("/desk/{name}", get(asset))
}

/// HTML-escape text for element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encode a query parameter value (everything but unreserved characters).
fn url_param(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn security_headers(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
}

/// Which nav item a page is under.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nav {
    Servers,
    Changes,
    Log,
    Check,
    None,
}

/// A page to be put in the layout.
struct Page {
    title: String,
    nav: Nav,
    scripts: &'static [&'static str],
    body: String,
}

fn render(status: StatusCode, page: Page) -> Response {
    let nav = [
        (Nav::Servers, "/", "Servers"),
        (Nav::Changes, "/changes", "Changes"),
        (Nav::Log, "/log", "Log"),
        (Nav::Check, "/check", "Check"),
    ];
    let mut html = String::with_capacity(page.body.len() + 2048);
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} — toolmark</title>\n<link rel=\"icon\" href=\"{}\" type=\"image/svg+xml\">\n\
         <link rel=\"stylesheet\" href=\"{}\">\n",
        esc(&page.title),
        asset_url("icon.svg"),
        asset_url("style.css"),
    );
    for s in page.scripts {
        let _ = writeln!(html, "<script src=\"{}\" defer></script>", asset_url(s));
    }
    html.push_str(
        "</head>\n<body>\n<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header>\n\
         <nav aria-label=\"Main\">\n<a class=\"brand\" href=\"/\">toolmark</a>\n<ul>\n",
    );
    for (n, href, label) in nav {
        let current = if n == page.nav {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = writeln!(html, "<li><a href=\"{href}\"{current}>{label}</a></li>");
    }
    html.push_str("</ul>\n</nav>\n</header>\n<main id=\"main\" tabindex=\"-1\">\n");
    html.push_str(&page.body);
    html.push_str(
        "</main>\n<footer>\n<p>toolmark: a public transparency log of MCP tool definitions. \
         Data: <a href=\"/checkpoint\">checkpoint</a> · <a href=\"/api/v1/log/vkey\">log key</a> \
         · <a href=\"/api/v1/issuer\">answer key</a> · <a href=\"/feed.xml\">feed</a></p>\n\
         </footer>\n</body>\n</html>\n",
    );
    let mut r = (status, html).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    security_headers(h);
    r
}

/// The desk's error page for `status`, saying `message` (escaped).
pub(crate) fn error_page(status: StatusCode, message: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    render(
        status,
        Page {
            title: title.to_owned(),
            nav: Nav::None,
            scripts: &[],
            body: format!(
                "<h1>{}</h1>\n<p class=\"error\">{}</p>\n<p><a href=\"/\">Back to the servers</a></p>\n",
                esc(title),
                esc(message)
            ),
        },
    )
}

/// Why a desk page cannot be shown; rendered as an HTML error page.
#[derive(Debug)]
enum Fail {
    NotFound(String),
    BadRequest(String),
    Internal(String),
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        match self {
            Fail::NotFound(m) => error_page(StatusCode::NOT_FOUND, &m),
            Fail::BadRequest(m) => error_page(StatusCode::BAD_REQUEST, &m),
            Fail::Internal(m) => {
                eprintln!("toolmark desk: internal error: {m}");
                error_page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong on our side (logged).",
                )
            }
        }
    }
}

fn not_found(message: &str) -> Fail {
    Fail::NotFound(message.to_owned())
}

fn bad_request(message: &str) -> Fail {
    Fail::BadRequest(message.to_owned())
}

fn internal(e: impl std::fmt::Display) -> Fail {
    Fail::Internal(e.to_string())
}

fn sql(e: impl Into<IndexError>) -> Fail {
    internal(e.into())
}

type Html = Result<Response, Fail>;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Fail> + Send + 'static,
) -> Result<T, Fail> {
    tokio::task::spawn_blocking(f).await.map_err(internal)?
}

/// A non-negative integer parameter within `min..=max`, `default` when absent or empty.
fn int_param(
    q: &HashMap<String, String>,
    name: &str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, Fail> {
    match q.get(name).map(String::as_str) {
        None | Some("") => Ok(default),
        Some(s) => s
            .parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n) && (s == "0" || !s.starts_with('0')))
            .ok_or_else(|| bad_request(&format!("{name} must be an integer from {min} to {max}"))),
    }
}

fn limit_param(q: &HashMap<String, String>) -> Result<u32, Fail> {
    int_param(q, "limit", DEFAULT_LIMIT.into(), 1, MAX_LIMIT.into()).map(|n| n as u32)
}

// ---------------------------------------------------------------------------------------------
// Small renderers.

fn opt(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("")
}

fn time(t: &str) -> String {
    if t.is_empty() {
        return "—".into();
    }
    format!("<time datetime=\"{0}\">{0}</time>", esc(t))
}

/// A status as a badge: `ok` good, a skip reason neutral, anything else bad.
fn status_badge(status: Option<&str>, skipped: bool) -> String {
    match status {
        None => "<span class=\"badge neutral\">not observed</span>".into(),
        Some("ok") => "<span class=\"badge good\">ok</span>".into(),
        Some(s) if skipped => format!("<span class=\"badge neutral\">skipped: {}</span>", esc(s)),
        Some(s) => format!("<span class=\"badge bad\">{}</span>", esc(s)),
    }
}

/// A change class as a badge (the word is always shown, the colour only repeats it).
fn class_badge(class: &str) -> String {
    let c = match class {
        "benign" => "benign",
        "unsure" => "unsure",
        "dangerous" => "dangerous",
        _ => "neutral",
    };
    format!("<span class=\"badge class-{c}\">{}</span>", esc(class))
}

fn digest(d: &Option<String>) -> String {
    match d {
        Some(d) => format!("<code class=\"digest\">{}</code>", esc(d)),
        None => "—".into(),
    }
}

fn entry_link(index: u64) -> String {
    format!(
        "<a href=\"/api/v1/proof/inclusion?index={index}\" title=\"inclusion proof of entry {index}\">#{index}</a>"
    )
}

fn counts(c: &ChangeRow) -> String {
    format!(
        "<span class=\"counts\"><span title=\"tools added\">+{}</span> <span title=\"tools removed\">−{}</span> <span title=\"tools modified\">~{}</span></span>",
        c.added, c.removed, c.modified
    )
}

// ---------------------------------------------------------------------------------------------
// `/`: servers.

/// One row of the servers table.
struct ListRow {
    id: String,
    server: String,
    target: String,
    last_status: Option<String>,
    last_observed_at: Option<String>,
    tools: Option<i64>,
    skip_reason: Option<String>,
    delisted: bool,
    changes: i64,
}

fn state_clause(state: &str) -> &'static str {
    match state {
        "observed" => "t.last_status = 'ok'",
        "changed" => "EXISTS (SELECT 1 FROM changes c WHERE c.target_id = t.id)",
        "failing" => {
            "t.last_status IS NOT NULL AND t.last_status <> 'ok' AND t.skip_reason IS NULL"
        }
        "skipped" => "t.skip_reason IS NOT NULL",
        "delisted" => "(t.delisted_at IS NOT NULL OR s.delisted_at IS NOT NULL)",
        _ => "1",
    }
}

const SEARCH: &str = "(?1 = '' OR instr(lower(t.server), ?1) > 0 OR instr(lower(t.target), ?1) > 0
     OR instr(lower(coalesce(s.title, '')), ?1) > 0
     OR instr(lower(coalesce(s.description, '')), ?1) > 0)";

fn list_targets(
    state: &AppState,
    q: &str,
    filter: &str,
    limit: u32,
    offset: u64,
) -> Result<(u64, Vec<ListRow>), Fail> {
    let index = state.index.get();
    let conn = index.connection();
    let needle = q.to_ascii_lowercase();
    let clause = state_clause(filter);
    let total: i64 = conn
        .prepare_cached(&format!(
            "SELECT COUNT(*) FROM targets t LEFT JOIN servers s ON s.name = t.server
             WHERE {SEARCH} AND {clause}"
        ))
        .and_then(|mut st| st.query_row([&needle], |r| r.get(0)))
        .map_err(sql)?;
    let offset = i64::try_from(offset).map_err(|_| bad_request("offset is too large"))?;
    let mut st = conn
        .prepare_cached(&format!(
            "SELECT t.id, t.server, t.target, t.last_status, t.last_observed_at, t.current_tools,
                    t.skip_reason, (t.delisted_at IS NOT NULL OR s.delisted_at IS NOT NULL),
                    (SELECT COUNT(*) FROM changes c WHERE c.target_id = t.id)
             FROM targets t LEFT JOIN servers s ON s.name = t.server
             WHERE {SEARCH} AND {clause}
             ORDER BY t.server, t.kind DESC, t.target, t.id LIMIT ?2 OFFSET ?3"
        ))
        .map_err(sql)?;
    let rows = st
        .query_map((&needle, i64::from(limit), offset), |r| {
            Ok(ListRow {
                id: r.get(0)?,
                server: r.get(1)?,
                target: r.get(2)?,
                last_status: r.get(3)?,
                last_observed_at: r.get(4)?,
                tools: r.get(5)?,
                skip_reason: r.get(6)?,
                delisted: r.get(7)?,
                changes: r.get(8)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(sql)?;
    Ok((u64::try_from(total).unwrap_or(0), rows))
}

fn servers_href(q: &str, filter: &str, limit: u32, offset: u64) -> String {
    let mut href = format!("/?q={}&state={}", url_param(q), url_param(filter));
    if limit != DEFAULT_LIMIT {
        let _ = write!(href, "&limit={limit}");
    }
    let _ = write!(href, "&offset={offset}");
    esc(&href)
}

async fn servers_page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    let q = params.get("q").cloned().unwrap_or_default();
    if q.chars().count() > 200 {
        return Err(bad_request("q must be at most 200 characters"));
    }
    let filter = match params.get("state").map(String::as_str) {
        None | Some("") => "all".to_owned(),
        Some(s) if STATES.iter().any(|(k, _)| *k == s) => s.to_owned(),
        Some(_) => {
            let names: Vec<&str> = STATES.iter().map(|(k, _)| *k).collect();
            return Err(bad_request(&format!(
                "state must be one of: {}",
                names.join(", ")
            )));
        }
    };
    let limit = limit_param(&params)?;
    let offset = int_param(&params, "offset", 0, 0, 10_000_000)?;
    let (q2, f2) = (q.clone(), filter.clone());
    let (total, rows) =
        blocking(move || list_targets(&state, q2.trim(), &f2, limit, offset)).await?;

    let mut b = String::new();
    b.push_str("<h1>Servers</h1>\n");
    b.push_str(
        "<form class=\"filters\" method=\"get\" action=\"/\" role=\"search\">\n\
         <div class=\"field\"><label for=\"q\">Search names, endpoints and descriptions</label>\n",
    );
    let _ = writeln!(
        b,
        "<input id=\"q\" name=\"q\" type=\"search\" value=\"{}\" maxlength=\"200\"></div>",
        esc(&q)
    );
    b.push_str("<div class=\"field\"><label for=\"state\">State</label>\n<select id=\"state\" name=\"state\">\n");
    for (k, label) in STATES {
        let sel = if k == filter { " selected" } else { "" };
        let _ = writeln!(b, "<option value=\"{k}\"{sel}>{label}</option>");
    }
    b.push_str("</select></div>\n");
    if limit != DEFAULT_LIMIT {
        let _ = writeln!(
            b,
            "<input type=\"hidden\" name=\"limit\" value=\"{limit}\">"
        );
    }
    b.push_str("<div class=\"field\"><button type=\"submit\">Show</button></div>\n</form>\n");

    let first = if rows.is_empty() { 0 } else { offset + 1 };
    let last = offset + rows.len() as u64;
    let _ = writeln!(
        b,
        "<p class=\"summary\" id=\"result-count\">{first}–{last} of {total} targets</p>"
    );
    if rows.is_empty() {
        b.push_str("<p>No targets match.</p>\n");
    } else {
        b.push_str(
            "<div class=\"scroll\"><table class=\"list\" id=\"servers\">\n<caption class=\"visually-hidden\">Targets</caption>\n\
             <thead><tr><th scope=\"col\">Server</th><th scope=\"col\">Endpoint</th>\
             <th scope=\"col\">Last status</th><th scope=\"col\" class=\"num\">Tools</th>\
             <th scope=\"col\">Last observed</th><th scope=\"col\" class=\"num\">Changes</th></tr></thead>\n<tbody>\n",
        );
        for r in &rows {
            let delisted = if r.delisted {
                " <span class=\"badge neutral\">delisted</span>"
            } else {
                ""
            };
            let _ = writeln!(
                b,
                "<tr><th scope=\"row\"><a href=\"/s/{id}\">{server}</a>{delisted}</th><td class=\"endpoint\">{target}</td>\
                 <td>{status}</td><td class=\"num\">{tools}</td><td>{at}</td><td class=\"num\">{changes}</td></tr>",
                id = esc(&r.id),
                server = esc(&r.server),
                target = esc(&r.target),
                status = status_badge(r.last_status.as_deref(), r.skip_reason.is_some()),
                tools = r.tools.map_or("—".into(), |n| n.to_string()),
                at = time(opt(&r.last_observed_at)),
                changes = r.changes,
            );
        }
        b.push_str("</tbody>\n</table></div>\n");
    }
    b.push_str("<nav class=\"pager\" aria-label=\"Pages\">\n");
    if offset > 0 {
        let prev = offset.saturating_sub(limit.into());
        let _ = writeln!(
            b,
            "<a rel=\"prev\" href=\"{}\">← Previous</a>",
            servers_href(&q, &filter, limit, prev)
        );
    }
    if last < total {
        let _ = writeln!(
            b,
            "<a rel=\"next\" href=\"{}\">Next →</a>",
            servers_href(&q, &filter, limit, last)
        );
    }
    b.push_str("</nav>\n");
    Ok(render(
        StatusCode::OK,
        Page {
            title: "Servers".into(),
            nav: Nav::Servers,
            scripts: &[],
            body: b,
        },
    ))
}

// ---------------------------------------------------------------------------------------------
// `/s/{id}`: one target.

struct TargetData {
    target: TargetRow,
    server: Option<ServerRow>,
    observations: Vec<ObservationRow>,
    changes: Vec<ChangeRow>,
}

fn load_target(
    state: &AppState,
    id: &str,
    before: Option<u64>,
) -> Result<Option<TargetData>, Fail> {
    let (target, server, observations, changes) = {
        let index = state.index.get();
        let Some(target) = index.target(id).map_err(sql)? else {
            return Ok(None);
        };
        let server = index.server(&target.server).map_err(sql)?;
        let observations = index
            .observations_of(id, TIMELINE_ROWS, before)
            .map_err(sql)?;
        let changes = index
            .latest_changes(None, TARGET_CHANGES, Some(&target.server), None)
            .map_err(sql)?
            .into_iter()
            .filter(|c| c.target_id == id)
            .collect();
        (target, server, observations, changes)
    };
    Ok(Some(TargetData {
        target,
        server,
        observations,
        changes,
    }))
}

fn dl_row(b: &mut String, term: &str, value: &str) {
    let _ = writeln!(b, "<div><dt>{term}</dt><dd>{value}</dd></div>");
}

async fn target_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    if !valid_id(&id) {
        return Err(not_found(
            "No such target: a target id is 16 lowercase hex digits.",
        ));
    }
    let before = match params.get("before").map(String::as_str) {
        None | Some("") => None,
        Some(_) => Some(int_param(&params, "before", 0, 1, u64::MAX >> 1)?),
    };
    let id2 = id.clone();
    let st = state.clone();
    let data = blocking(move || load_target(&st, &id2, before)).await?;
    let Some(d) = data else {
        return Err(not_found(&format!("No target {id} is known.")));
    };
    let t = &d.target;
    // The current tools, read and verified once per document (`documents::ToolSetCache`).
    let tools = state.tool_sets.current(&state, t).await.map_err(|e| {
        eprintln!("toolmark desk: current tools of {}: {e}", t.id);
        e.to_string()
    });
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1><span class=\"visually-hidden\">Target: </span>{}</h1>",
        esc(&t.server)
    );
    let _ = writeln!(b, "<p class=\"endpoint lead\">{}</p>", esc(&t.target));
    if let Some(s) = &d.server {
        if let Some(title) = &s.title {
            let _ = writeln!(b, "<p><strong>{}</strong></p>", esc(title));
        }
        if let Some(desc) = &s.description {
            let _ = writeln!(b, "<p class=\"description\">{}</p>", esc(desc));
        }
    }
    b.push_str("<section aria-labelledby=\"summary-h\">\n<h2 id=\"summary-h\">Summary</h2>\n<dl class=\"facts\">\n");
    dl_row(&mut b, "Target id", &format!("<code>{}</code>", esc(&t.id)));
    dl_row(&mut b, "Kind", &esc(&t.kind));
    if let Some(tr) = &t.declared_transport {
        dl_row(&mut b, "Declared transport", &esc(tr));
    }
    if let Some(v) = &t.package_version {
        dl_row(&mut b, "Package version", &esc(v));
    }
    dl_row(
        &mut b,
        "Last status",
        &status_badge(t.last_status.as_deref(), t.skip_reason.is_some()),
    );
    if let Some(detail) = &t.last_detail {
        if !detail.is_empty() {
            dl_row(&mut b, "Last detail", &esc(detail));
        }
    }
    if let Some(reason) = &t.skip_reason {
        let detail = t
            .skip_detail
            .as_deref()
            .map(|d| format!(" ({})", esc(d)))
            .unwrap_or_default();
        dl_row(&mut b, "Not dialled", &format!("{}{detail}", esc(reason)));
    }
    dl_row(&mut b, "Last observed", &time(opt(&t.last_observed_at)));
    dl_row(
        &mut b,
        "Tools",
        &t.current_tools.map_or("—".into(), |n| n.to_string()),
    );
    dl_row(&mut b, "Current full digest", &digest(&t.current_full));
    dl_row(&mut b, "Current MTL/1 digest", &digest(&t.current_mtl1));
    dl_row(&mut b, "First listed", &time(opt(&t.first_listed)));
    if let Some(at) = &t.delisted_at {
        dl_row(&mut b, "Delisted", &time(at));
    }
    if let Some(s) = &d.server {
        dl_row(
            &mut b,
            "Registry",
            &format!("version {} · {}", esc(&s.version), esc(&s.status)),
        );
        if let Some(u) = &s.repository_url {
            dl_row(&mut b, "Repository", &esc(u));
        }
    }
    b.push_str("</dl>\n");
    if t.last_entry.is_some() {
        let _ = writeln!(
            b,
            "<p><a href=\"/log?target={id}\">Verify its latest log entry in your browser</a> · \
             <a href=\"/api/v1/lookup/{id}\">proof bundle (text)</a></p>",
            id = esc(&t.id)
        );
    }
    b.push_str("</section>\n");

    // Current tools.
    b.push_str("<section aria-labelledby=\"tools-h\">\n<h2 id=\"tools-h\">Current tools</h2>\n");
    match &tools {
        Ok(None) => b.push_str("<p>No tool set has been read from this target.</p>\n"),
        Err(e) => {
            let _ = writeln!(
                b,
                "<p class=\"error\">The stored tool set could not be read: {}</p>",
                esc(e)
            );
        }
        Ok(Some(c)) => {
            let href = esc(&crate::documents::document_path(&c.document));
            if c.count == 0 {
                b.push_str("<p>The tool set is empty.</p>\n");
            } else {
                let _ = writeln!(
                    b,
                    "<p>{} tools, from the observation recorded in entry {}.</p>",
                    c.count,
                    t.last_ok_entry.map_or("—".into(), entry_link)
                );
            }
            if !c.inline.is_empty() {
                b.push_str("<dl class=\"tools\" id=\"tools\">\n");
            }
            for tool in &c.inline {
                let title = tool
                    .title
                    .as_deref()
                    .map(|s| format!(" <span class=\"muted\">— {}</span>", esc(s)))
                    .unwrap_or_default();
                let _ = writeln!(
                    b,
                    "<div><dt><code>{}</code>{title}</dt><dd>{}</dd></div>",
                    esc(tool.name.as_deref().unwrap_or("(no name)")),
                    tool.description.as_deref().map_or(
                        "<span class=\"muted\">(no description)</span>".into(),
                        |s| { format!("<span class=\"description\">{}</span>", esc(s)) }
                    )
                );
            }
            if !c.inline.is_empty() {
                b.push_str("</dl>\n");
            }
            if c.omitted() > 0 {
                let _ = writeln!(
                    b,
                    "<p id=\"tools-omitted\">{} more tools ({} bytes of tool definitions in all) \
                     are not shown here: <a href=\"{href}\">the whole observation document</a>.</p>",
                    c.omitted(),
                    c.tool_bytes
                );
            }
            let _ = writeln!(
                b,
                "<p><a href=\"{href}\" id=\"document-link\">Observation document</a> \
                 ({} bytes, <code class=\"digest\">{}</code>): every byte the server sent, \
                 whose SHA-256 is the log entry's <code>raw</code>.</p>",
                c.document_bytes,
                esc(&c.document.to_string())
            );
        }
    }
    b.push_str("</section>\n");

    // Changes.
    b.push_str("<section aria-labelledby=\"changes-h\">\n<h2 id=\"changes-h\">Changes</h2>\n");
    if d.changes.is_empty() {
        b.push_str("<p>No change of the tool set has been recorded.</p>\n");
    } else {
        b.push_str(
            "<div class=\"scroll\"><table class=\"list\" id=\"target-changes\">\n<caption class=\"visually-hidden\">Changes of this target</caption>\n\
             <thead><tr><th scope=\"col\">Change</th><th scope=\"col\">Observed</th><th scope=\"col\">Class</th>\
             <th scope=\"col\">Tools</th><th scope=\"col\">Entries</th></tr></thead>\n<tbody>\n",
        );
        for c in &d.changes {
            let _ = writeln!(
                b,
                "<tr><th scope=\"row\"><a href=\"/changes/{id}\">Change {id}</a></th><td>{at}</td><td>{class}</td><td>{counts}</td><td>{old} → {new}</td></tr>",
                id = c.id,
                at = time(&c.observed_at),
                class = class_badge(&c.class),
                counts = counts(c),
                old = entry_link(c.old_entry),
                new = entry_link(c.new_entry),
            );
        }
        b.push_str("</tbody>\n</table></div>\n");
    }
    b.push_str("</section>\n");

    // Timeline.
    b.push_str(
        "<section aria-labelledby=\"timeline-h\">\n<h2 id=\"timeline-h\">Timeline of observations</h2>\n",
    );
    if d.observations.is_empty() {
        b.push_str("<p>No observation has been logged.</p>\n");
    } else {
        b.push_str(
            "<div class=\"scroll\"><table class=\"list\" id=\"timeline\">\n<caption class=\"visually-hidden\">Observations, newest first</caption>\n\
             <thead><tr><th scope=\"col\">Entry</th><th scope=\"col\">Observed</th><th scope=\"col\">Status</th>\
             <th scope=\"col\">Detail</th><th scope=\"col\" class=\"num\">Tools</th><th scope=\"col\">Digests</th></tr></thead>\n<tbody>\n",
        );
        for o in &d.observations {
            let mut digests = String::new();
            if let Some(f) = &o.full {
                let _ = write!(
                    digests,
                    "<span class=\"muted\">full</span> <code class=\"digest\">{}</code>",
                    esc(f)
                );
            }
            if let Some(m) = &o.mtl1 {
                let _ = write!(
                    digests,
                    "<br><span class=\"muted\">MTL/1</span> <code class=\"digest\">{}</code>",
                    esc(m)
                );
            } else if let Some(e) = &o.mtl1_error {
                let _ = write!(
                    digests,
                    "<br><span class=\"muted\">MTL/1 error</span> {}",
                    esc(e)
                );
            }
            let mut detail = esc(opt(&o.detail));
            if let Some(tr) = &o.transport {
                let _ = write!(detail, " <span class=\"muted\">{}</span>", esc(tr));
            }
            let _ = writeln!(
                b,
                "<tr><th scope=\"row\">{entry}</th><td>{at}</td><td>{status}</td><td>{detail}</td><td class=\"num\">{tools}</td><td>{digests}</td></tr>",
                entry = entry_link(o.entry),
                at = time(&o.observed_at),
                status = status_badge(Some(&o.status), t.skip_reason.as_deref() == Some(&o.status)),
                tools = o.tools.map_or("—".into(), |n| n.to_string()),
            );
        }
        b.push_str("</tbody>\n</table></div>\n");
        b.push_str("<nav class=\"pager\" aria-label=\"Timeline pages\">\n");
        if before.is_some() {
            let _ = writeln!(b, "<a href=\"/s/{}\">Newest observations</a>", esc(&t.id));
        }
        if d.observations.len() == TIMELINE_ROWS as usize {
            if let Some(last) = d.observations.last() {
                let _ = writeln!(
                    b,
                    "<a rel=\"next\" href=\"/s/{}?before={}\">Older observations →</a>",
                    esc(&t.id),
                    last.entry
                );
            }
        }
        b.push_str("</nav>\n");
    }
    b.push_str("</section>\n");
    Ok(render(
        StatusCode::OK,
        Page {
            title: t.server.clone(),
            nav: Nav::Servers,
            scripts: &[],
            body: b,
        },
    ))
}

// ---------------------------------------------------------------------------------------------
// `/changes`.

async fn changes_page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    let class = match params.get("class").map(String::as_str) {
        None | Some("") | Some("all") => None,
        Some(c) if CLASSES.contains(&c) => Some(c.to_owned()),
        Some(_) => {
            return Err(bad_request(
                "class must be one of: all, benign, unsure, dangerous",
            ));
        }
    };
    let before = match params.get("before").map(String::as_str) {
        None | Some("") => None,
        Some(_) => Some(int_param(&params, "before", 0, 1, i64::MAX as u64)? as i64),
    };
    let limit = limit_param(&params)?;
    let c2 = class.clone();
    let rows = blocking(move || {
        state
            .index
            .get()
            .latest_changes(before, limit, None, c2.as_deref())
            .map_err(sql)
    })
    .await?;

    let mut b = String::new();
    b.push_str("<h1>Changes</h1>\n");
    b.push_str(
        "<form class=\"filters\" method=\"get\" action=\"/changes\">\n<div class=\"field\"><label for=\"class\">Class</label>\n<select id=\"class\" name=\"class\">\n",
    );
    for c in ["all", "benign", "unsure", "dangerous"] {
        let sel = if class.as_deref().unwrap_or("all") == c {
            " selected"
        } else {
            ""
        };
        let _ = writeln!(b, "<option value=\"{c}\"{sel}>{c}</option>");
    }
    b.push_str("</select></div>\n");
    if limit != DEFAULT_LIMIT {
        let _ = writeln!(
            b,
            "<input type=\"hidden\" name=\"limit\" value=\"{limit}\">"
        );
    }
    b.push_str("<div class=\"field\"><button type=\"submit\">Show</button></div>\n</form>\n");
    if rows.is_empty() {
        b.push_str("<p id=\"result-count\">No changes.</p>\n");
    } else {
        b.push_str(
            "<div class=\"scroll\"><table class=\"list\" id=\"changes\">\n<caption class=\"visually-hidden\">Changes, newest first</caption>\n\
             <thead><tr><th scope=\"col\">Change</th><th scope=\"col\">Observed</th><th scope=\"col\">Server</th>\
             <th scope=\"col\">Endpoint</th><th scope=\"col\">Class</th><th scope=\"col\">Tools</th></tr></thead>\n<tbody>\n",
        );
        for c in &rows {
            let _ = writeln!(
                b,
                "<tr><th scope=\"row\"><a href=\"/changes/{id}\">Change {id}</a></th><td>{at}</td>\
                 <td><a href=\"/s/{tid}\">{server}</a></td><td class=\"endpoint\">{endpoint}</td><td>{class}</td><td>{counts}</td></tr>",
                id = c.id,
                at = time(&c.observed_at),
                tid = esc(&c.target_id),
                server = esc(&c.server),
                endpoint = esc(&c.endpoint),
                class = class_badge(&c.class),
                counts = counts(c),
            );
        }
        b.push_str("</tbody>\n</table></div>\n");
    }
    b.push_str("<nav class=\"pager\" aria-label=\"Pages\">\n");
    let mut base = String::from("/changes?");
    if let Some(c) = &class {
        let _ = write!(base, "class={c}&");
    }
    if limit != DEFAULT_LIMIT {
        let _ = write!(base, "limit={limit}&");
    }
    if before.is_some() {
        let _ = writeln!(
            b,
            "<a href=\"{}\">Newest changes</a>",
            esc(base.trim_end_matches(['&', '?']))
        );
    }
    if rows.len() == limit as usize {
        if let Some(last) = rows.last() {
            let _ = writeln!(
                b,
                "<a rel=\"next\" href=\"{}before={}\">Older changes →</a>",
                esc(&base),
                last.id
            );
        }
    }
    b.push_str("</nav>\n");
    Ok(render(
        StatusCode::OK,
        Page {
            title: "Changes".into(),
            nav: Nav::Changes,
            scripts: &[],
            body: b,
        },
    ))
}

// ---------------------------------------------------------------------------------------------
// `/changes/{id}`.

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// A JSON text value (compact canonical JSON from the diff) shown readably: strings that are
/// JSON are pretty-printed when they are objects or arrays.
fn json_value(v: &Value) -> String {
    match v.as_str() {
        None => "<span class=\"muted\">(absent)</span>".into(),
        Some(text) => {
            let pretty = serde_json::from_str::<Value>(text)
                .ok()
                .filter(|p| p.is_object() || p.is_array())
                .and_then(|p| serde_json::to_string_pretty(&p).ok());
            match pretty {
                Some(p) => format!("<pre class=\"json\">{}</pre>", esc(&p)),
                None => format!("<code>{}</code>", esc(text)),
            }
        }
    }
}

fn word_diff(ops: &Value) -> String {
    let mut out = String::from("<p class=\"words\">");
    for op in ops.as_array().into_iter().flatten() {
        let kind = s(&op[0]);
        let text = esc(s(&op[1]));
        match kind {
            "-" => {
                let _ = write!(
                    out,
                    "<del><span class=\"visually-hidden\">[removed: </span>{text}<span class=\"visually-hidden\">]</span></del>"
                );
            }
            "+" => {
                let _ = write!(
                    out,
                    "<ins><span class=\"visually-hidden\">[added: </span>{text}<span class=\"visually-hidden\">]</span></ins>"
                );
            }
            _ => out.push_str(&text),
        }
    }
    out.push_str("</p>\n");
    out
}

fn member_changes(b: &mut String, caption: &str, members: &Value) {
    let Some(list) = members.as_array().filter(|l| !l.is_empty()) else {
        return;
    };
    let _ = writeln!(
        b,
        "<table class=\"list\">\n<caption>{}</caption>\n<thead><tr><th scope=\"col\">Member</th><th scope=\"col\">Old</th><th scope=\"col\">New</th></tr></thead>\n<tbody>",
        esc(caption)
    );
    for m in list {
        let _ = writeln!(
            b,
            "<tr><th scope=\"row\"><code>{}</code></th><td>{}</td><td>{}</td></tr>",
            esc(s(&m["member"])),
            json_value(&m["old"]),
            json_value(&m["new"])
        );
    }
    b.push_str("</tbody>\n</table>\n");
}

fn schema_changes(b: &mut String, caption: &str, schema: &Value) {
    let Some(list) = schema["changes"].as_array() else {
        return;
    };
    let _ = writeln!(
        b,
        "<table class=\"list\">\n<caption>{}</caption>\n<thead><tr><th scope=\"col\">Path</th><th scope=\"col\">Old</th><th scope=\"col\">New</th></tr></thead>\n<tbody>",
        esc(caption)
    );
    for c in list {
        let _ = writeln!(
            b,
            "<tr><th scope=\"row\"><code class=\"path\">{}</code></th><td>{}</td><td>{}</td></tr>",
            esc(s(&c["path"])),
            json_value(&c["old"]),
            json_value(&c["new"])
        );
    }
    b.push_str("</tbody>\n</table>\n");
    if n(&schema["truncated"]) > 0 {
        let _ = writeln!(
            b,
            "<p class=\"muted\">{} more path changes not listed.</p>",
            n(&schema["truncated"])
        );
    }
}

fn tool_diff(b: &mut String, t: &Value, classes: &HashMap<String, String>) {
    let name = s(&t["name"]);
    let class = classes
        .get(name)
        .map(|c| format!(" {}", class_badge(c)))
        .unwrap_or_default();
    let _ = writeln!(
        b,
        "<article class=\"tool-diff\">\n<h4><code>{}</code>{class}</h4>",
        esc(name)
    );
    let d = &t["description"];
    match s(&d["kind"]) {
        "words" => {
            b.push_str("<h5>Description</h5>\n");
            b.push_str(&word_diff(&d["ops"]));
        }
        "snippets" => {
            let _ = writeln!(
                b,
                "<h5>Description</h5>\n<p>Too long for a word diff ({} → {} characters); the beginnings:</p>\n\
                 <div class=\"sides\"><div><h6>Old</h6><p class=\"description\">{}</p></div><div><h6>New</h6><p class=\"description\">{}</p></div></div>",
                n(&d["oldChars"]),
                n(&d["newChars"]),
                esc(s(&d["old"])),
                esc(s(&d["new"]))
            );
        }
        _ => {}
    }
    if t["inputSchema"].is_object() {
        schema_changes(b, "inputSchema changes", &t["inputSchema"]);
    }
    if t["outputSchema"].is_object() {
        schema_changes(b, "outputSchema changes", &t["outputSchema"]);
    }
    let a = &t["annotations"];
    if a.is_object() {
        b.push_str(
            "<table class=\"list\">\n<caption>Hints (effective values)</caption>\n<thead><tr><th scope=\"col\">Hint</th><th scope=\"col\">Old</th><th scope=\"col\">New</th></tr></thead>\n<tbody>\n",
        );
        for h in a["hints"].as_array().into_iter().flatten() {
            let side = |v: &str, e: &str| {
                format!(
                    "{}{}",
                    h[v].as_bool().unwrap_or(false),
                    if h[e].as_bool().unwrap_or(false) {
                        ""
                    } else {
                        " <span class=\"muted\">(default)</span>"
                    }
                )
            };
            let changed = h["old"] != h["new"];
            let _ = writeln!(
                b,
                "<tr{}><th scope=\"row\"><code>{}</code>{}</th><td>{}</td><td>{}</td></tr>",
                if changed { " class=\"changed\"" } else { "" },
                esc(s(&h["hint"])),
                if changed {
                    " <strong>changed</strong>"
                } else {
                    ""
                },
                side("old", "oldExplicit"),
                side("new", "newExplicit"),
            );
        }
        b.push_str("</tbody>\n</table>\n");
        member_changes(b, "Other annotation changes", &a["members"]);
    }
    member_changes(b, "Other member changes", &t["members"]);
    b.push_str("</article>\n");
}

fn name_list(b: &mut String, heading: &str, names: &Value, total: u64) {
    let Some(list) = names.as_array().filter(|l| !l.is_empty()) else {
        return;
    };
    let _ = writeln!(b, "<h3>{heading} ({total})</h3>\n<ul class=\"names\">");
    for name in list {
        let _ = writeln!(b, "<li><code>{}</code></li>", esc(s(name)));
    }
    b.push_str("</ul>\n");
    if total > list.len() as u64 {
        let _ = writeln!(
            b,
            "<p class=\"muted\">{} more not listed.</p>",
            total - list.len() as u64
        );
    }
}

fn rule_meaning(id: &str) -> &'static str {
    toolmark_toolset::classify::RULES
        .iter()
        .find(|r| r.id == id)
        .map_or("", |r| r.meaning)
}

async fn change_page(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Html {
    let Some(n_id) = id
        .parse::<i64>()
        .ok()
        .filter(|n| *n > 0 && !id.starts_with(['0', '+']))
    else {
        return Err(not_found(
            "No such change: a change id is a positive integer.",
        ));
    };
    let row = blocking(move || state.index.get().change(n_id).map_err(sql)).await?;
    let Some(c) = row else {
        return Err(not_found(&format!("No change {n_id} is known.")));
    };
    let diff: Option<Value> = c.diff.as_deref().and_then(|d| serde_json::from_str(d).ok());
    let classification: Option<Value> = c
        .classification
        .as_deref()
        .and_then(|d| serde_json::from_str(d).ok());

    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>Change {} <span class=\"class-banner class-{cls}\" id=\"change-class\" data-class=\"{cls}\">{cls}</span></h1>",
        c.id,
        cls = esc(&c.class)
    );
    let _ = writeln!(
        b,
        "<p class=\"lead\"><a href=\"/s/{}\">{}</a> <span class=\"endpoint\">{}</span>, observed {}.</p>",
        esc(&c.target_id),
        esc(&c.server),
        esc(&c.endpoint),
        time(&c.observed_at)
    );
    b.push_str("<dl class=\"facts\">\n");
    dl_row(&mut b, "Tools", &counts(&c));
    dl_row(
        &mut b,
        "Entries",
        &format!(
            "{} → {} (inclusion proofs)",
            entry_link(c.old_entry),
            entry_link(c.new_entry)
        ),
    );
    dl_row(
        &mut b,
        "Full digest",
        &format!(
            "{} → {}",
            digest(&Some(c.old_full.clone())),
            digest(&Some(c.new_full.clone()))
        ),
    );
    dl_row(
        &mut b,
        "MTL/1 digest",
        &format!("{} → {}", digest(&c.old_mtl1), digest(&c.new_mtl1)),
    );
    b.push_str("</dl>\n");

    // Classification.
    b.push_str(
        "<section aria-labelledby=\"signals-h\">\n<h2 id=\"signals-h\">Classification</h2>\n",
    );
    let mut tool_classes = HashMap::new();
    match &classification {
        None => b.push_str(
            "<p>No classification was stored (one of the two documents is not stored); the change is recorded as <strong>unsure</strong>.</p>\n",
        ),
        Some(cl) => {
            for t in cl["tools"].as_array().into_iter().flatten() {
                tool_classes.insert(s(&t["tool"]).to_owned(), s(&t["class"]).to_owned());
            }
            let signals = cl["signals"].as_array().cloned().unwrap_or_default();
            if signals.is_empty() {
                b.push_str("<p>No rule fired.</p>\n");
            } else {
                b.push_str(
                    "<div class=\"scroll\"><table class=\"list\" id=\"signals\">\n<caption class=\"visually-hidden\">Signals: every rule that fired</caption>\n\
                     <thead><tr><th scope=\"col\">Class</th><th scope=\"col\">Rule</th><th scope=\"col\">Tool</th>\
                     <th scope=\"col\">Where</th><th scope=\"col\">Old</th><th scope=\"col\">New</th><th scope=\"col\">Detail</th></tr></thead>\n<tbody>\n",
                );
                for sig in &signals {
                    let rule = s(&sig["rule"]);
                    let text = |k: &str| {
                        sig[k]
                            .as_str()
                            .map_or(String::new(), |v| format!("<code>{}</code>", esc(v)))
                    };
                    let _ = writeln!(
                        b,
                        "<tr class=\"signal-{cls}\"><td>{badge}</td><th scope=\"row\"><code>{rule}</code><br><span class=\"muted\">{meaning}</span></th>\
                         <td>{tool}</td><td>{path}</td><td>{old}</td><td>{new}</td><td>{detail}</td></tr>",
                        cls = esc(s(&sig["class"])),
                        badge = class_badge(s(&sig["class"])),
                        rule = esc(rule),
                        meaning = esc(rule_meaning(rule)),
                        tool = text("tool"),
                        path = text("path"),
                        old = text("old"),
                        new = text("new"),
                        detail = esc(sig["detail"].as_str().unwrap_or("")),
                    );
                }
                b.push_str("</tbody>\n</table></div>\n");
                if n(&cl["signalsTruncated"]) > 0 {
                    let _ = writeln!(
                        b,
                        "<p class=\"muted\">{} more signals not listed.</p>",
                        n(&cl["signalsTruncated"])
                    );
                }
            }
        }
    }
    b.push_str("</section>\n");

    // Diff.
    b.push_str("<section aria-labelledby=\"diff-h\">\n<h2 id=\"diff-h\">Diff</h2>\n");
    match &diff {
        None => b.push_str("<p>No diff was stored (one of the two documents is not stored).</p>\n"),
        Some(d) => {
            let _ = writeln!(
                b,
                "<p>{} added, {} removed, {} modified, {} unchanged.</p>",
                n(&d["addedTotal"]),
                n(&d["removedTotal"]),
                n(&d["modifiedTotal"]),
                n(&d["unchanged"])
            );
            name_list(&mut b, "Added tools", &d["added"], n(&d["addedTotal"]));
            name_list(
                &mut b,
                "Removed tools",
                &d["removed"],
                n(&d["removedTotal"]),
            );
            if let Some(list) = d["modified"].as_array().filter(|l| !l.is_empty()) {
                let _ = writeln!(b, "<h3>Modified tools ({})</h3>", n(&d["modifiedTotal"]));
                for t in list {
                    tool_diff(&mut b, t, &tool_classes);
                }
            }
            if let Some(list) = d["newAddresses"].as_array().filter(|l| !l.is_empty()) {
                let _ = writeln!(
                    b,
                    "<h3>New outside addresses ({})</h3>\n<ul class=\"names\">",
                    n(&d["newAddressesTotal"])
                );
                for a in list {
                    let _ = writeln!(
                        b,
                        "<li><span class=\"muted\">{}</span> <code>{}</code></li>",
                        esc(s(&a["kind"])),
                        esc(s(&a["value"]))
                    );
                }
                b.push_str("</ul>\n");
            }
            if n(&d["unmatchedOld"]) > 0 || n(&d["unmatchedNew"]) > 0 {
                let _ = writeln!(
                    b,
                    "<p>Entries without a unique name: {} before, {} after{}.</p>",
                    n(&d["unmatchedOld"]),
                    n(&d["unmatchedNew"]),
                    if d["unmatchedChanged"].as_bool() == Some(true) {
                        " (they differ)"
                    } else {
                        ""
                    }
                );
            }
            if d["truncated"].as_bool() == Some(true) {
                b.push_str(
                    "<p class=\"muted\">Some lists in this diff were cut at their caps.</p>\n",
                );
            }
        }
    }
    b.push_str("</section>\n");
    Ok(render(
        StatusCode::OK,
        Page {
            title: format!("Change {} ({})", c.id, c.class),
            nav: Nav::Changes,
            scripts: &[],
            body: b,
        },
    ))
}

// ---------------------------------------------------------------------------------------------
// `/log`.

async fn log_page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    let wanted = match params.get("target").map(String::as_str) {
        None | Some("") => None,
        Some(t) if valid_id(t) => Some(t.to_owned()),
        Some(_) => return Err(bad_request("target must be 16 lowercase hex digits")),
    };
    let vkey = state.log.vkey().to_owned();
    let (at, target) = blocking(move || {
        let at = state.log.checkpoint().map_err(internal)?;
        let target = match wanted {
            Some(t) => Some(t),
            None => {
                let index = state.index.get();
                index
                    .connection()
                    .prepare_cached(
                        "SELECT target_id FROM observations ORDER BY entry DESC LIMIT 1",
                    )
                    .and_then(|mut st| {
                        st.query_map([], |r| r.get::<_, String>(0))?
                            .next()
                            .transpose()
                    })
                    .map_err(sql)?
            }
        };
        Ok((at, target))
    })
    .await?;
    let note = String::from_utf8_lossy(&at.note).into_owned();
    let cp = &at.checkpoint;
    let mut b = String::new();
    b.push_str("<h1>The log</h1>\n");
    b.push_str(
        "<p>Every observation toolmark makes is an entry of a C2SP transparency log \
         (RFC 6962 Merkle tree, Ed25519-signed checkpoints, served as tiles). \
         The checkpoint below commits to every entry so far.</p>\n",
    );
    b.push_str("<section aria-labelledby=\"cp-h\">\n<h2 id=\"cp-h\">Current checkpoint</h2>\n<dl class=\"facts\">\n");
    dl_row(
        &mut b,
        "Origin",
        &format!("<code>{}</code>", esc(&cp.origin)),
    );
    dl_row(
        &mut b,
        "Tree size",
        &format!("<span id=\"tree-size\">{}</span> entries", cp.size),
    );
    dl_row(
        &mut b,
        "Root hash",
        &format!(
            "<code class=\"digest\">{}</code>",
            esc(&cp.root.to_base64())
        ),
    );
    dl_row(
        &mut b,
        "Verifier key",
        &format!("<code class=\"digest\" id=\"vkey\">{}</code>", esc(&vkey)),
    );
    b.push_str("</dl>\n");
    let _ = writeln!(
        b,
        "<pre class=\"note\" id=\"checkpoint\" aria-label=\"Signed checkpoint text\">{}</pre>\n\
         <p><a href=\"/checkpoint\">/checkpoint</a> (text) · <a href=\"/api/v1/log/vkey\">verifier key</a> · \
         <a href=\"/api/v1/proof/inclusion?index=0\">an inclusion proof</a></p>\n</section>",
        esc(&note)
    );
    b.push_str(
        "<section aria-labelledby=\"verify-h\">\n<h2 id=\"verify-h\">Verify in your browser</h2>\n\
         <p>The button fetches <code>/checkpoint</code> and <code>/api/v1/log/vkey</code>, checks the \
         key id and the checkpoint's Ed25519 signature, then checks a proof bundle: the latest entry of \
         the target below (from <code>/api/v1/lookup/…</code>), or the bundle you paste. Everything is \
         computed here with WebCrypto; nothing is taken on the server's word.</p>\n\
         <noscript><p class=\"error\">Verification runs in the browser and needs JavaScript.</p></noscript>\n\
         <form id=\"verify-form\" class=\"stack\">\n",
    );
    let _ = writeln!(
        b,
        "<div class=\"field\"><label for=\"verify-target\">Target id (16 hex digits)</label>\n\
         <input id=\"verify-target\" name=\"target\" type=\"text\" pattern=\"[0-9a-f]{{16}}\" \
         autocomplete=\"off\" spellcheck=\"false\" value=\"{}\" aria-describedby=\"verify-target-help\">\n\
         <p class=\"help\" id=\"verify-target-help\">Used when the bundle box is empty.</p></div>",
        esc(target.as_deref().unwrap_or(""))
    );
    b.push_str(
        "<div class=\"field\"><label for=\"verify-bundle\">Or paste a <code>c2sp.org/tlog-proof@v1</code> bundle</label>\n\
         <textarea id=\"verify-bundle\" name=\"bundle\" rows=\"10\" spellcheck=\"false\"></textarea></div>\n\
         <div class=\"field buttons\"><button type=\"submit\" id=\"verify-button\">Verify</button>\n\
         <button type=\"button\" id=\"verify-load\">Load the target's bundle into the box</button></div>\n\
         </form>\n\
         <div id=\"verify-output\" class=\"result\" aria-live=\"polite\">\n\
         <p id=\"verify-result\" role=\"status\">Not verified yet.</p>\n\
         <ol id=\"verify-steps\" class=\"steps\"></ol>\n\
         <pre id=\"verify-entry\" class=\"json\" hidden></pre>\n</div>\n</section>\n",
    );
    Ok(render(
        StatusCode::OK,
        Page {
            title: "Log".into(),
            nav: Nav::Log,
            scripts: &["verify.js"],
            body: b,
        },
    ))
}

// ---------------------------------------------------------------------------------------------
// `/check`.

async fn check_page() -> Response {
    let b = "<h1>Check a tool set</h1>\n\
        <p>Paste what a server answered to <code>tools/list</code> (the result object, the whole \
        JSON-RPC response, or a bare array of tools) and say which server it came from. The desk \
        asks <code>/api/v1/check</code> whether toolmark observed exactly this set there, then \
        verifies the signed answer and its log proof in your browser.</p>\n\
        <noscript><p class=\"error\">Checking runs in the browser and needs JavaScript \
        (or POST to <code>/api/v1/check</code> yourself).</p></noscript>\n\
        <form id=\"check-form\" class=\"stack\">\n\
        <div class=\"field\"><label for=\"check-endpoint\">Endpoint URL or package (<code>npm:…</code>, <code>pypi:…</code>)</label>\n\
        <input id=\"check-endpoint\" name=\"endpoint\" type=\"text\" inputmode=\"url\" autocomplete=\"off\" spellcheck=\"false\" maxlength=\"2000\"></div>\n\
        <div class=\"field\"><label for=\"check-name\">Server name (optional with an endpoint)</label>\n\
        <input id=\"check-name\" name=\"name\" type=\"text\" autocomplete=\"off\" spellcheck=\"false\" maxlength=\"2000\"></div>\n\
        <div class=\"field\"><label for=\"check-tools\">The <code>tools/list</code> result</label>\n\
        <textarea id=\"check-tools\" name=\"tools\" rows=\"14\" spellcheck=\"false\" required aria-describedby=\"check-tools-help\"></textarea>\n\
        <p class=\"help\" id=\"check-tools-help\">Sent as it is: the tools' JSON text is not re-encoded.</p></div>\n\
        <div class=\"field buttons\"><button type=\"submit\" id=\"check-button\">Check</button></div>\n\
        </form>\n\
        <div id=\"check-output\" class=\"result\" aria-live=\"polite\">\n\
        <p id=\"check-status\" role=\"status\"></p>\n\
        <div id=\"check-answer\" hidden>\n\
        <h2>Answer</h2>\n\
        <p>Match: <span id=\"check-match\" class=\"badge\"></span></p>\n\
        <p id=\"check-note\"></p>\n\
        <dl class=\"facts\" id=\"check-facts\"></dl>\n\
        <h2>Verification</h2>\n\
        <p id=\"check-verify\">Not verified yet.</p>\n\
        <ol id=\"check-steps\" class=\"steps\"></ol>\n\
        <details><summary>The answer as received</summary><pre id=\"check-raw\" class=\"json\"></pre></details>\n\
        </div>\n</div>\n";
    render(
        StatusCode::OK,
        Page {
            title: "Check".into(),
            nav: Nav::Check,
            scripts: &["verify.js", "check.js"],
            body: b.to_owned(),
        },
    )
}

// ---------------------------------------------------------------------------------------------
// `/desk/{name}`.

async fn asset(
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let Some(a) = ASSETS.iter().find(|a| a.name == name) else {
        return not_found("No such desk file.").into_response();
    };
    let version = &versions()[a.name];
    let etag = format!("\"{version}\"");
    let cache = if params.get("v") == Some(version) {
        crate::logroutes::IMMUTABLE
    } else {
        "no-cache"
    };
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut r = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        a.body.into_response()
    };
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(a.content_type),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    security_headers(h);
    r
}
