//! The desk: every page through the router (status, content type, CSP, what it shows), escaping
//! of hostile registry and tool text, 404s, parameter validation, the embedded assets — and the
//! whole desk driven in headless Chromium (`desk_in_a_browser`, see `api/tests/desk/`).
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{Request, StatusCode, header};
use support::index_support::{Env, day, day_str, ok, records};
use support::*;
use toolmark_api::AppState;
use toolmark_api::desk::{CSP, asset_url};

fn text(body: &[u8]) -> String {
    String::from_utf8(body.to_vec()).expect("the page is UTF-8")
}

/// A desk page: 200, HTML, the CSP, the layout, no inline script or style.
async fn page(state: &Arc<AppState>, path: &str) -> String {
    let (status, headers, body) = get(state, path).await;
    let html = text(&body);
    assert_eq!(status, StatusCode::OK, "{path}: {html}");
    assert_html(path, &headers, &html);
    html
}

fn assert_html(path: &str, headers: &axum::http::HeaderMap, html: &str) {
    assert_eq!(
        headers[header::CONTENT_TYPE],
        "text/html; charset=utf-8",
        "{path}"
    );
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert_eq!(csp, CSP, "{path}");
    assert!(csp.contains("default-src 'self'") && !csp.contains("unsafe"));
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert!(
        html.starts_with("<!doctype html>\n<html lang=\"en\">"),
        "{path}"
    );
    assert_eq!(html.matches("<main id=\"main\"").count(), 1, "{path}");
    assert_eq!(html.matches("<h1>").count(), 1, "{path}: one h1");
    assert!(html.contains("<nav aria-label=\"Main\">"), "{path}");
    // No inline script, style or event handler anywhere (the CSP would block them).
    for (i, _) in html.match_indices("<script") {
        assert!(
            html[i..].starts_with("<script src=\"/desk/"),
            "{path}: inline script"
        );
    }
    assert!(
        !html.contains("<style") && !html.contains(" style="),
        "{path}: inline style"
    );
    // No event-handler attribute or javascript: URL in any tag (escaped text has no `<`).
    for tag in html.split('<').skip(1) {
        let tag = tag[..tag.find('>').unwrap_or(tag.len())].to_ascii_lowercase();
        let attrs = tag.split_whitespace().skip(1);
        for a in attrs {
            assert!(!a.starts_with("on"), "{path}: <{tag}>");
        }
        assert!(!tag.contains("javascript:"), "{path}: <{tag}>");
    }
    // Every form control has a label.
    for (i, _) in html.match_indices(" id=\"") {
        let tag_start = html[..i].rfind('<').unwrap();
        let tag = &html[tag_start..i];
        if ["<input", "<select", "<textarea"]
            .iter()
            .any(|t| tag.starts_with(t))
            && !html[tag_start..].starts_with("<input type=\"hidden\"")
        {
            let id = &html[i + 5..i + 5 + html[i + 5..].find('"').unwrap()];
            assert!(
                html.contains(&format!("<label for=\"{id}\"")),
                "{path}: #{id} has no label"
            );
        }
    }
}

/// Rows of a table body with links to target pages (the servers table).
fn target_rows(html: &str) -> usize {
    html.matches("<tr><th scope=\"row\"><a href=\"/s/").count()
}

fn target_id(p: &Populated, url: &str) -> String {
    p.state.index.get().find_target_by_key(url).unwrap()[0]
        .id
        .clone()
}

fn change_id(p: &Populated) -> i64 {
    p.state
        .index
        .get()
        .latest_changes(None, 10, None, None)
        .unwrap()[0]
        .id
}

#[tokio::test]
async fn every_page_renders() {
    let p = populated("desk-pages");
    let s = &p.state;

    let all = page(s, "/").await;
    assert_eq!(target_rows(&all), 5, "{all}");
    for name in ["files", "memory", "locked", "flaky", "keyed"] {
        assert!(all.contains(&format!("io.example/{name}</a>")), "{name}");
    }
    assert!(all.contains("1–5 of 5 targets"));
    assert!(all.contains(&asset_url("style.css")));

    // Search and state filters.
    let memory = page(s, "/?q=MEMORY").await;
    assert_eq!(target_rows(&memory), 1);
    assert!(memory.contains("value=\"MEMORY\""));
    assert_eq!(target_rows(&page(s, "/?q=files.example").await), 1);
    assert_eq!(
        target_rows(&page(s, "/?q=needs+a+key").await),
        1,
        "description"
    );
    assert_eq!(target_rows(&page(s, "/?q=nothing-like-this").await), 0);
    for (state, expected) in [
        ("all", 5),
        ("observed", 2),
        ("changed", 1),
        ("failing", 2),
        ("skipped", 1),
        ("delisted", 0),
    ] {
        let html = page(s, &format!("/?state={state}")).await;
        assert_eq!(target_rows(&html), expected, "state={state}");
        assert!(html.contains(&format!("<option value=\"{state}\" selected>")));
    }
    let failing = page(s, "/?state=failing").await;
    assert!(failing.contains("io.example/locked") && failing.contains("io.example/flaky"));
    assert!(failing.contains("auth-required") && failing.contains("timeout"));
    let skipped = page(s, "/?state=skipped").await;
    assert!(skipped.contains("skipped: header-required"));

    // A target: summary, tools from the stored document, timeline, changes.
    let mem_id = target_id(&p, MEMORY_URL);
    let t = page(s, &format!("/s/{mem_id}")).await;
    assert!(t.contains("<title>io.example/memory — toolmark</title>"));
    assert!(t.contains(MEMORY_URL));
    assert!(t.contains("<code>create_entities</code>"), "{t}");
    assert!(t.contains("Create multiple new entities in the knowledge graph"));
    let tools = tools_of(&support::page(MEMORY_SET));
    assert!(t.contains(&format!(
        "{} tools, from the observation",
        tools.as_array().unwrap().len()
    )));
    assert_eq!(
        t.matches("<tr><th scope=\"row\"><a href=\"/api/v1/proof/inclusion?index=")
            .count(),
        2
    );
    assert!(t.contains("No change of the tool set has been recorded."));
    assert!(t.contains(&format!("href=\"/log?target={mem_id}\"")));
    assert!(t.contains(&format!("href=\"/api/v1/lookup/{mem_id}\"")));

    let files_id = target_id(&p, FILES_URL);
    let cid = change_id(&p);
    let f = page(s, &format!("/s/{files_id}")).await;
    assert!(f.contains(&format!("<a href=\"/changes/{cid}\">Change {cid}</a>")));
    assert!(f.contains("badge class-dangerous"));
    let locked = page(s, &format!("/s/{}", target_id(&p, LOCKED_URL))).await;
    assert!(locked.contains("No tool set has been read from this target."));
    assert!(locked.contains("401 from initialize"));
    let flaky = page(s, &format!("/s/{}", target_id(&p, FLAKY_URL))).await;
    // The last ok set (day 0) is still the current one after the timeout.
    assert!(flaky.contains("<code>fetch</code>"), "{flaky}");
    assert!(flaky.contains("observation deadline of 90 s passed"));
    let keyed = page(s, &format!("/s/{}", target_id(&p, KEYED_URL))).await;
    assert!(keyed.contains("Not dialled") && keyed.contains("Host"));

    // Changes and one change.
    let changes = page(s, "/changes").await;
    assert!(changes.contains(&format!("<a href=\"/changes/{cid}\">Change {cid}</a>")));
    assert!(changes.contains(&format!("<a href=\"/s/{files_id}\">io.example/files</a>")));
    assert!(
        page(s, "/changes?class=dangerous")
            .await
            .contains("Change ")
    );
    assert!(
        page(s, "/changes?class=benign")
            .await
            .contains("No changes.")
    );
    assert!(page(s, "/changes?class=all").await.contains("Change "));
    let c = page(s, &format!("/changes/{cid}")).await;
    assert!(
        c.contains("id=\"change-class\" data-class=\"dangerous\""),
        "{c}"
    );
    assert!(c.contains("<code>hint-changed</code>"), "{c}");
    assert!(c.contains("A hint&#39;s effective value changed."));
    assert!(c.contains("<code>readOnlyHint</code> <strong>changed</strong>"));
    assert!(c.contains("<h3>Modified tools (1)</h3>"));
    let row = p.state.index.get().change(cid).unwrap().unwrap();
    assert!(c.contains(&row.old_full) && c.contains(&row.new_full));
    assert!(c.contains(&format!("/api/v1/proof/inclusion?index={}", row.new_entry)));

    // The log and the check page.
    let log = page(s, "/log").await;
    let at = p.state.log.checkpoint().unwrap();
    let note = String::from_utf8(at.note.clone()).unwrap();
    assert!(log.contains(&maud::html! { (note) }.into_string()));
    assert!(log.contains(p.state.log.vkey()));
    assert!(log.contains("<span id=\"tree-size\">10</span>"));
    assert!(log.contains(&format!(
        "<script src=\"{}\" defer></script>",
        asset_url("verify.js")
    )));
    assert!(log.contains("id=\"verify-result\""));
    // The default target is the one with the newest entry; a given one is used as it is.
    let with_target = page(s, &format!("/log?target={mem_id}")).await;
    assert!(with_target.contains(&format!("value=\"{mem_id}\"")));
    let check = page(s, "/check").await;
    assert!(check.contains("id=\"check-tools\"") && check.contains("<label for=\"check-tools\">"));
    assert!(check.contains(&asset_url("check.js")));

    // Stats (its numbers on a fixed clock: `stats_page_shows_the_numbers_and_two_charts`).
    let stats = page(s, "/stats").await;
    assert!(stats.contains("<a href=\"/stats\" aria-current=\"page\">Stats</a>"));
    // A target's badge and the snippets that embed it.
    assert!(t.contains(&format!(
        "<img id=\"target-badge\" src=\"/badge/{mem_id}.svg\""
    )));
    assert!(t.contains(&format!(
        "[![toolmark]({BASE}/badge/{mem_id}.svg)]({BASE}/s/{mem_id})"
    )));
    assert!(t.contains(&format!(
        "&lt;a href=&quot;{BASE}/s/{mem_id}&quot;&gt;&lt;img src=&quot;{BASE}/badge/{mem_id}.svg&quot;"
    )));
}

/// Day 1 of the fixture, 01:00Z.
fn fixture_day1() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + Duration::from_secs(day(1, 3600))
}

/// The `<svg>` with `id` in a page, parsed as XML (the charts are drawn by the server).
fn chart<'a>(html: &'a str, id: &str) -> roxmltree::Document<'a> {
    let start = html
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let end = start + html[start..].find("</svg>").unwrap() + "</svg>".len();
    roxmltree::Document::parse(&html[start..end]).expect("the chart is well-formed XML")
}

#[tokio::test]
async fn stats_page_shows_the_numbers_and_two_charts() {
    let mut p = populated("desk-stats");
    Arc::get_mut(&mut p.state).unwrap().clock = fixture_day1;
    let html = page(&p.state, "/stats").await;
    assert!(html.contains("<title>Stats — toolmark</title>"));
    assert!(
        html.contains("<dt>Listed</dt><dd>5 (5 remotes, 0 packages)</dd>"),
        "{html}"
    );
    assert!(html.contains("<dt>Pinned</dt><dd>3 — "));
    assert!(html.contains("<code>header-required</code> 1"));
    // One dangerous change in every window.
    assert!(html.contains(
        "<th scope=\"row\">Last 24 hours</th><td class=\"num\">1</td><td class=\"num\">1</td>"
    ));
    assert!(html.contains("<th scope=\"row\">Crawl "), "the crawl's row");
    assert!(html.contains("<th scope=\"row\">Package sweep</th><td colspan=\"5\">none yet</td>"));
    assert!(html.contains("<code>files.example.com</code>"));
    for (id, what, newest) in [
        ("chart-observations", "observations", 5),
        ("chart-changes", "changes", 1),
    ] {
        let doc = chart(&html, id);
        let svg = doc.root_element();
        assert_eq!(svg.attribute("role"), Some("img"));
        let labels: Vec<&str> = svg
            .attribute("aria-labelledby")
            .unwrap()
            .split(' ')
            .collect();
        assert_eq!(labels, [format!("{id}-title"), format!("{id}-desc")]);
        let desc = svg
            .children()
            .find(|n| n.has_tag_name("desc"))
            .unwrap()
            .text()
            .unwrap();
        assert!(desc.contains("from 2026-11-02 to 2026-12-01"), "{desc}");
        let bars: Vec<_> = svg
            .descendants()
            .filter(|n| n.has_tag_name("rect"))
            .collect();
        assert_eq!(bars.len(), 30);
        assert!(
            bars.iter()
                .all(|b| b.attribute("class") == Some(&*format!("bar bar-{what}")))
        );
        let last = bars[29]
            .children()
            .find(|n| n.has_tag_name("title"))
            .unwrap()
            .text()
            .unwrap();
        assert_eq!(last, format!("2026-12-01: {newest} {what}"));
        let height = |b: &roxmltree::Node| b.attribute("height").unwrap().parse::<f64>().unwrap();
        // The newest day's bar is the tallest; days without any are flat.
        assert!(height(&bars[29]) > 50.0, "{what}");
        assert_eq!(height(&bars[0]), 0.0);
        // Day labels, and the scale's top.
        let texts: Vec<&str> = svg
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        assert!(
            texts.contains(&"12-01") && texts.contains(&"11-24"),
            "{texts:?}"
        );
        assert!(texts.contains(&newest.to_string().as_str()), "{texts:?}");
    }
    // The numbers behind the charts, as a table.
    assert!(html.contains(
        "<th scope=\"row\">2026-12-01</th><td class=\"num\">5</td><td class=\"num\">1</td>"
    ));
}

#[tokio::test]
async fn paging() {
    let p = populated("desk-paging");
    let s = &p.state;
    let first = page(s, "/?limit=2").await;
    assert_eq!(target_rows(&first), 2);
    assert!(first.contains("1–2 of 5 targets"));
    assert!(
        first.contains("href=\"/?q=&amp;state=all&amp;limit=2&amp;offset=2\""),
        "{first}"
    );
    assert!(!first.contains("rel=\"prev\""));
    let last = page(s, "/?limit=2&offset=4").await;
    assert_eq!(target_rows(&last), 1);
    assert!(last.contains("5–5 of 5 targets"));
    assert!(last.contains("rel=\"prev\"") && !last.contains("rel=\"next\""));
    let beyond = page(s, "/?offset=100").await;
    assert_eq!(target_rows(&beyond), 0);
    // The filter is kept in the paging links.
    let q = page(s, "/?q=example&state=failing&limit=1").await;
    assert!(q.contains("href=\"/?q=example&amp;state=failing&amp;limit=1&amp;offset=1\""));

    let cid = change_id(&p);
    let one = page(s, "/changes?limit=1").await;
    assert!(
        one.contains(&format!("href=\"/changes?limit=1&amp;before={cid}\"")),
        "{one}"
    );
    let older = page(s, &format!("/changes?before={cid}")).await;
    assert!(older.contains("No changes.") && older.contains("Newest changes"));
    let dangerous = page(s, "/changes?class=dangerous&limit=1").await;
    assert!(dangerous.contains(&format!(
        "href=\"/changes?class=dangerous&amp;limit=1&amp;before={cid}\""
    )));
    // The timeline pages by entry.
    let mem_id = target_id(&p, MEMORY_URL);
    let t = page(s, &format!("/s/{mem_id}?before=6")).await;
    assert_eq!(
        t.matches("<tr><th scope=\"row\"><a href=\"/api/v1/proof/inclusion?index=")
            .count(),
        1
    );
    assert!(t.contains("Newest observations"));
}

#[tokio::test]
async fn not_found_and_bad_parameters() {
    let p = populated("desk-errors");
    let s = &p.state;
    let mem_id = target_id(&p, MEMORY_URL);
    for path in [
        "/s/0000000000000000".to_owned(),
        "/s/not-an-id".to_owned(),
        format!("/s/{}", mem_id.to_ascii_uppercase()),
        format!("/s/{mem_id}0"),
        "/changes/999".to_owned(),
        "/changes/0".to_owned(),
        "/changes/-1".to_owned(),
        "/changes/01".to_owned(),
        "/changes/abc".to_owned(),
        "/changes/99999999999999999999".to_owned(),
    ] {
        let (status, headers, body) = get(s, &path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        let html = text(&body);
        assert_html(&path, &headers, &html);
        assert!(html.contains("<h1>Not Found</h1>"), "{path}: {html}");
    }
    for path in [
        "/?limit=abc",
        "/?limit=0",
        "/?limit=201",
        "/?limit=-1",
        "/?limit=1.5",
        "/?offset=-1",
        "/?offset=x",
        "/?state=weird",
        "/?state=ALL",
        "/changes?class=evil",
        "/changes?class=Dangerous",
        "/changes?before=x",
        "/changes?before=0",
        "/changes?limit=1000",
        "/log?target=zz",
        "/log?target=ABCDEF0123456789",
    ] {
        let (status, headers, body) = get(s, path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
        assert_html(path, &headers, &text(&body));
    }
    let long = format!("/?q={}", "a".repeat(201));
    assert_eq!(get(s, &long).await.0, StatusCode::BAD_REQUEST);
    let (status, _, _) = get(s, &format!("/s/{mem_id}?before=x")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // An empty parameter is the default.
    page(s, "/?q=&state=&limit=&offset=").await;
    page(s, "/changes?class=&before=").await;
    // Unknown desk files.
    let (status, headers, _) = get(s, "/desk/nope.js").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(headers[header::CONTENT_SECURITY_POLICY], CSP);
    assert_eq!(get(s, "/desk/../Cargo.toml").await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn assets_are_served_with_types_and_caching() {
    let p = populated("desk-assets");
    let s = &p.state;
    for (name, content_type, needle) in [
        ("style.css", "text/css; charset=utf-8", ":focus-visible"),
        (
            "verify.js",
            "text/javascript; charset=utf-8",
            "verifyInclusion",
        ),
        (
            "check.js",
            "text/javascript; charset=utf-8",
            "/api/v1/check",
        ),
        ("icon.svg", "image/svg+xml", "<svg"),
    ] {
        let url = asset_url(name);
        assert!(url.starts_with(&format!("/desk/{name}?v=")), "{url}");
        let (status, headers, body) = get(s, &url).await;
        assert_eq!(status, StatusCode::OK, "{url}");
        assert_eq!(headers[header::CONTENT_TYPE], content_type, "{name}");
        assert_eq!(
            headers[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(text(&body).contains(needle), "{name}");
        let etag = headers[header::ETAG].to_str().unwrap().to_owned();
        assert_eq!(
            etag,
            format!("\"{}\"", &url[url.find("?v=").unwrap() + 3..])
        );
        // Unversioned, or an old version: revalidated.
        for stale in [format!("/desk/{name}"), format!("/desk/{name}?v=0123")] {
            let (status, headers, _) = get(s, &stale).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(headers[header::CACHE_CONTROL], "no-cache", "{stale}");
        }
        let (status, _, body) = send(
            s,
            Request::get(format!("/desk/{name}"))
                .header(header::IF_NONE_MATCH, &etag)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);
        assert!(body.is_empty());
    }
}

/// A server whose registry name and description, tool names and descriptions are all HTML,
/// with a change between two days, so every page has hostile text to show.
#[tokio::test]
async fn hostile_text_is_escaped() {
    let name = "io.example/<script>alert(\"name\")</script>";
    let url = "https://hostile.example.com/mcp?x=<b>&y=\"q\"";
    let tools = |desc: &str| {
        serde_json::json!({"tools": [{
            "name": "<img src=x onerror=alert(1)>",
            "title": "<i>title</i>",
            "description": desc,
            "inputSchema": {"type": "object", "properties": {"<p>": {"type": "string", "description": "</td><script>alert(3)</script>"}}},
        }]})
        .to_string()
    };
    let day0 = tools("</dd><script>alert(\"desc\")</script> & 'single' \"double\"");
    let day1 = tools("</dd><script>alert(\"desc\")</script> & <svg onload=alert(2)> now");
    let mut env = Env::new("desk-hostile");
    let recs = records(serde_json::json!([{
        "name": name, "description": "<script>alert('server')</script>", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": url}],
    }]));
    for (d, page_text) in [(0, &day0), (1, &day1)] {
        env.run(&day_str(d, 0), &recs, &[], |_| {
            Some(ok(day(d, 60), vec![page_text.clone()]))
        });
    }
    let state = Arc::new(AppState::open(&env.dir, BASE).unwrap());
    let id = state.index.get().targets_of(name).unwrap()[0].id.clone();
    let cid = state
        .index
        .get()
        .latest_changes(None, 1, None, None)
        .unwrap()[0]
        .id;

    for path in [
        "/".to_owned(),
        "/?q=%3Cscript%3E".to_owned(),
        format!("/s/{id}"),
        "/changes".to_owned(),
        format!("/changes/{cid}"),
        format!("/log?target={id}"),
    ] {
        let html = page(&state, &path).await;
        for raw in [
            "<script>alert",
            "<img src=x",
            "<svg onload",
            "<b>&y",
            "<i>title",
            "</dd><script",
            "</td><script",
        ] {
            assert!(!html.contains(raw), "{path}: {raw} is not escaped\n{html}");
        }
    }
    let t = page(&state, &format!("/s/{id}")).await;
    assert!(t.contains("io.example/&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;"));
    assert!(t.contains("&lt;script&gt;alert(&#39;server&#39;)&lt;/script&gt;"));
    assert!(t.contains("<code>&lt;img src=x onerror=alert(1)&gt;</code>"));
    assert!(t.contains("&amp; &lt;svg onload=alert(2)&gt; now"));
    assert!(t.contains("?x=&lt;b&gt;&amp;y=&quot;q&quot;"));
    let c = page(&state, &format!("/changes/{cid}")).await;
    assert!(c.contains("&lt;svg"), "{c}");
    assert!(c.contains("<ins>"), "a word diff: {c}");
    // The search box echoes the query escaped.
    let search = page(&state, "/?q=%22%3E%3Cscript%3E").await;
    assert!(search.contains("value=\"&quot;&gt;&lt;script&gt;\""));
}

// ---------------------------------------------------------------------------------------------
// The browser test.

const BROWSER_DEADLINE: Duration = Duration::from_secs(300);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The whole desk in headless Chromium: every page without console errors, in-browser
/// verification of a real log (success) and of tampered bundles (failure), a real tool set
/// checked on /check, screenshots in `target/desk-artifacts/`.
///
/// Needs `TOOLMARK_DESK_PYTHON` (printed by `scripts/desk-browser`) and Debian's Chromium
/// (`TOOLMARK_CHROMIUM`, default `/usr/bin/chromium`). Without the variable it is skipped, with
/// a note, unless `CI` is set: then it fails.
#[tokio::test]
async fn the_log_page_says_when_no_witness_is_configured() {
    let p = populated("desk-log-no-witness");
    let log = page(&p.state, "/log").await;
    assert!(log.contains("<h2 id=\"witnesses-h\">Witnesses</h2>"));
    assert!(log.contains("id=\"witnesses-none\""));
    assert!(!log.contains("id=\"witnesses\""));
}

#[tokio::test]
async fn the_log_page_shows_the_witnesses_and_who_cosigned_the_checkpoint_when() {
    let mut p = populated("desk-log-witnesses");
    let state = Arc::get_mut(&mut p.state).unwrap();
    state.witnesses = Some(Arc::new(witness_policy()));
    // The service's clock at 2026-12-02T19:00:00Z; cosigned then and ten minutes before.
    state.clock = || std::time::UNIX_EPOCH + Duration::from_secs(1_796_238_000);
    publish_cosigned(&p.dir, &[(2, 1_796_238_000), (3, 1_796_237_400)]);
    let log = page(&p.state, "/log").await;
    assert!(log.contains("<span id=\"witness-quorum\">2 of 3 witnesses</span>"));
    assert!(log.contains("<span id=\"witness-met\">yes</span>"));
    assert!(log.contains(
        "<span id=\"witness-newest\"><time datetime=\"2026-12-02T19:00:00Z\">2026-12-02T19:00:00Z</time></span>"
    ));
    let table = &log[log.find("id=\"witnesses\"").unwrap()..];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert!(rows[0].contains("w1") && rows[0].contains("not on this checkpoint"));
    assert!(rows[1].contains("w2") && rows[1].contains("https://witness2.example/"));
    assert!(rows[1].contains(&cosigner(2).witness_key().vkey()));
    assert!(rows[1].contains("2026-12-02T19:00:00Z"));
    assert!(rows[2].contains("w3") && rows[2].contains("2026-12-02T18:50:00Z"));
}

#[test]
fn desk_in_a_browser() {
    let Some(python) = std::env::var_os("TOOLMARK_DESK_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but TOOLMARK_DESK_PYTHON is not: run `export TOOLMARK_DESK_PYTHON=$(scripts/desk-browser)`"
        );
        eprintln!(
            "desk_in_a_browser: skipped (set TOOLMARK_DESK_PYTHON=$(scripts/desk-browser) to drive the desk in Chromium)"
        );
        return;
    };
    let chromium =
        std::env::var("TOOLMARK_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    assert!(
        Path::new(&chromium).exists(),
        "no Chromium at {chromium} (apt-get install chromium, or set TOOLMARK_CHROMIUM)"
    );
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("desk-artifacts");
    let _ = std::fs::remove_dir_all(&artifacts);
    std::fs::create_dir_all(&artifacts).unwrap();

    let mut p = populated("desk-browser");
    // Witnessed: the published checkpoint cosigned by two of the three test witnesses (the
    // driver checks the browser verifies their cosignatures, and refuses a forged one).
    Arc::get_mut(&mut p.state).unwrap().witnesses = Some(Arc::new(witness_policy()));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    publish_cosigned(&p.dir, &[(1, now - 60), (3, now - 30)]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = toolmark_api::router(p.state.clone());
    rt.spawn(async move { axum::serve(listener, app).await });

    let driver = workspace().join("api/tests/desk/desk_browser.py");
    let tools = workspace()
        .join("toolset/tests/fixtures/corpus")
        .join(MEMORY_SET);
    let log_path = artifacts.join("driver.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut child = std::process::Command::new(&python)
        .arg(&driver)
        .arg(format!("http://{addr}"))
        .arg(&artifacts)
        .arg(&tools)
        .arg(&chromium)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {python:?}: {e}"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > BROWSER_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    rt.shutdown_timeout(Duration::from_secs(5));
    match status {
        None => panic!("the browser driver did not finish in {BROWSER_DEADLINE:?}:\n{output}"),
        Some(s) => assert!(s.success(), "the browser driver failed ({s}):\n{output}"),
    }
    eprintln!("{output}");
    for shot in ["01-servers.png", "12-log-verified.png", "16-check-same.png"] {
        assert!(artifacts.join(shot).exists(), "{shot} was not saved");
    }
}

/// A remote dialled without its declared key says so on its page.
#[tokio::test]
async fn a_remote_dialled_without_its_declared_headers_says_so() {
    const OPEN: &str = "https://open.example.com/mcp";
    let mut env = Env::new("desk-withheld");
    let recs = records(serde_json::json!([
        {"name": "io.example/open", "description": "lists without a key", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": OPEN,
                      "headers": [{"name": "Authorization", "value": "Bearer {key}", "isSecret": true}]}]}
    ]));
    env.run(&day_str(0, 0), &recs, &[], |_| {
        Some(ok(
            day(0, 5),
            vec![support::index_support::corpus_page(
                support::index_support::MEMORY,
            )],
        ))
    });
    let state = Arc::new(AppState::open(&env.dir, BASE).unwrap());
    let id = state.index.get().find_target_by_key(OPEN).unwrap()[0]
        .id
        .clone();
    let html = page(&state, &format!("/s/{id}")).await;
    assert!(html.contains("Dialled without"), "{html}");
    assert!(html.contains("<code>Authorization</code>"));
    assert!(!html.contains("Bearer"), "no declared value is shown");
}
