//! The surface read after a complete tool listing (`Session::list_surface`), over a replay: what
//! is asked, in which order, what is kept, and how each failure is named without ending the
//! others.

mod support;

use support::{Frame, Replay, ReplayError, identity};
use toolmark_mcp::{Handshake, Limits, Listing, Session, SurfaceLimits};
use toolmark_toolset::surface::{RawList, RawRead, RawSurface};

const SESSION: Handshake = Handshake::Initialize("2025-11-25");

fn init(capabilities: &str) -> Vec<Frame> {
    vec![Frame::Body(format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"serverInfo":{{"name":"s","version":"1"}}}}}}"#
    ))]
}

fn answer(id: u64, result: &str) -> Vec<Frame> {
    vec![Frame::Body(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
    ))]
}

fn error(id: u64, code: i64) -> Vec<Frame> {
    vec![Frame::Body(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"Method not found"}}}}"#
    ))]
}

const TOOLS: &str = r#"{"tools":[{"name":"t","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://t/page"}}}]}"#;

/// The tools listed, then the surface; the listing as read.
fn observe(script: Vec<Vec<Frame>>, uris: &[&str], limits: Limits) -> (Replay, Listing) {
    let mut t = Replay::new(script);
    let mut listing = Listing::default();
    let uris: Vec<String> = uris.iter().map(|u| (*u).to_owned()).collect();
    support::run(async {
        let mut session = Session::new(limits, identity(), &mut listing);
        session.list_tools(&mut t, SESSION).await.expect("listed");
        session
            .list_surface(&mut t, &uris, |e: &ReplayError| {
                ("transport".into(), e.to_string())
            })
            .await;
    });
    (t, listing)
}

fn ok(pages: &[&str]) -> Option<RawList> {
    Some(RawList {
        status: "ok".into(),
        detail: String::new(),
        pages: pages.iter().map(|p| (*p).to_owned()).collect(),
    })
}

#[test]
fn declared_kinds_are_listed_in_order_and_kept_byte_for_byte() {
    let prompts = r#"{"prompts":[{"name":"p","arguments":[{"name":"a","required":true}]}],"ttlMs":60000,"cacheScope":"public"}"#;
    let resources1 = r#"{"resources":[{"uri":"test://1","name":"one"}],"nextCursor":"2"}"#;
    let resources2 = r#"{"resources":[{"uri":"test://2","name":"two"}]}"#;
    let templates = r#"{"resourceTemplates":[{"uriTemplate":"test://{id}","name":"t"}]}"#;
    let page = r#"{"contents":[{"uri":"ui://t/page","mimeType":"text/html;profile=mcp-app","text":"<p>hi</p>"}]}"#;
    let (t, listing) = observe(
        vec![
            init(r#"{"tools":{},"prompts":{},"resources":{}}"#),
            answer(2, TOOLS),
            answer(3, prompts),
            answer(4, resources1),
            answer(5, resources2),
            answer(6, templates),
            answer(7, page),
        ],
        &["ui://t/page"],
        Limits::default(),
    );
    let asked: Vec<(&str, &str)> = t.requests();
    let methods: Vec<&str> = asked.iter().map(|r| r.0).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/list",
            "resources/templates/list",
            "resources/read"
        ]
    );
    assert_eq!(
        asked[4].1,
        r#"{"jsonrpc":"2.0","id":5,"method":"resources/list","params":{"cursor":"2"}}"#
    );
    assert_eq!(
        asked[6].1,
        r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"ui://t/page"}}"#
    );
    assert_eq!(
        listing.surface,
        Some(RawSurface {
            prompts: ok(&[prompts]),
            resources: ok(&[resources1, resources2]),
            resource_templates: ok(&[templates]),
            app_pages: vec![RawRead {
                uri: "ui://t/page".into(),
                status: "ok".into(),
                detail: String::new(),
                result: Some(page.into()),
            }],
            card: None,
        })
    );
}

#[test]
fn a_kind_the_server_does_not_declare_is_not_asked_for() {
    let (t, listing) = observe(
        vec![init(r#"{"tools":{}}"#), answer(2, TOOLS)],
        &[],
        Limits::default(),
    );
    assert_eq!(t.requests().len(), 2);
    assert_eq!(listing.surface, Some(RawSurface::default()));
}

#[test]
fn an_error_on_one_kind_is_named_and_the_others_are_still_read() {
    let templates = r#"{"resourceTemplates":[]}"#;
    let (_, listing) = observe(
        vec![
            init(r#"{"prompts":{},"resources":{}}"#),
            answer(2, TOOLS),
            error(3, -32601),
            answer(4, r#"{"resources":"not an array"}"#),
            answer(5, templates),
        ],
        &[],
        Limits::default(),
    );
    let s = listing.surface.unwrap();
    let prompts = s.prompts.unwrap();
    assert_eq!(prompts.status, "error");
    assert_eq!(
        prompts.detail,
        "prompts/list: JSON-RPC error -32601: Method not found"
    );
    let resources = s.resources.unwrap();
    assert_eq!(
        (resources.status.as_str(), resources.detail.as_str()),
        ("protocol", "resources/list result has no resources array")
    );
    assert_eq!(s.resource_templates, ok(&[templates]));
}

#[test]
fn a_repeated_cursor_and_the_page_cap_end_a_list_as_partial() {
    let again = r#"{"prompts":[{"name":"p"}],"nextCursor":"x"}"#;
    let (_, listing) = observe(
        vec![
            init(r#"{"prompts":{}}"#),
            answer(2, TOOLS),
            answer(3, again),
            answer(4, again),
        ],
        &[],
        Limits::default(),
    );
    let prompts = listing.surface.unwrap().prompts.unwrap();
    assert_eq!(prompts.status, "partial");
    assert_eq!(prompts.detail, "prompts/list cursor repeated after 2 pages");
    assert_eq!(prompts.pages.len(), 2, "what was read is kept");

    let limits = Limits {
        surface: SurfaceLimits {
            max_pages: 2,
            ..SurfaceLimits::default()
        },
        ..Limits::default()
    };
    let (_, listing) = observe(
        vec![
            init(r#"{"prompts":{}}"#),
            answer(2, TOOLS),
            answer(3, r#"{"prompts":[],"nextCursor":"a"}"#),
            answer(4, r#"{"prompts":[],"nextCursor":"b"}"#),
        ],
        &[],
        limits,
    );
    let prompts = listing.surface.unwrap().prompts.unwrap();
    assert_eq!(
        (prompts.status.as_str(), prompts.detail.as_str()),
        ("partial", "more than 2 prompts/list pages")
    );
}

#[test]
fn too_many_entries_end_a_list_as_too_large() {
    let limits = Limits {
        surface: SurfaceLimits {
            max_items: 2,
            ..SurfaceLimits::default()
        },
        ..Limits::default()
    };
    let (_, listing) = observe(
        vec![
            init(r#"{"resources":{}}"#),
            answer(2, TOOLS),
            answer(
                3,
                r#"{"resources":[{"uri":"a"},{"uri":"b"},{"uri":"c"}],"nextCursor":"n"}"#,
            ),
            answer(4, r#"{"resourceTemplates":[]}"#),
        ],
        &[],
        limits,
    );
    let s = listing.surface.unwrap();
    let resources = s.resources.unwrap();
    assert_eq!(
        (resources.status.as_str(), resources.detail.as_str()),
        ("too-large", "more than 2 resources")
    );
    assert!(
        resources.pages.is_empty(),
        "the page over the cap is not kept"
    );
    assert_eq!(s.resource_templates.unwrap().status, "ok");
}

#[test]
fn app_pages_past_the_cap_are_skipped_and_an_oversized_one_is_not_kept() {
    let limits = Limits {
        surface: SurfaceLimits {
            max_reads: 2,
            max_read_bytes: 64,
            ..SurfaceLimits::default()
        },
        ..Limits::default()
    };
    let small = r#"{"contents":[{"uri":"ui://a","text":"x"}]}"#;
    let big = format!(
        r#"{{"contents":[{{"uri":"ui://b","text":"{}"}}]}}"#,
        "y".repeat(100)
    );
    let (t, listing) = observe(
        vec![
            init(r#"{"tools":{}}"#),
            answer(2, TOOLS),
            answer(3, small),
            answer(4, &big),
        ],
        &["ui://a", "ui://b", "ui://c"],
        limits,
    );
    assert_eq!(t.requests().len(), 4, "two reads, the third URI not read");
    let pages = listing.surface.unwrap().app_pages;
    assert_eq!(pages[0].status, "ok");
    assert_eq!(pages[0].result.as_deref(), Some(small));
    assert_eq!(pages[1].status, "too-large");
    assert_eq!(pages[1].result, None);
    assert_eq!(
        (pages[2].status.as_str(), pages[2].detail.as_str()),
        ("skipped", "more than 2 ui:// pages named")
    );
}

#[test]
fn a_transport_failure_is_named_by_the_caller_and_the_next_kind_still_asked() {
    // The recording has no answer to prompts/list: the replay's own error.
    let (t, listing) = observe(
        vec![
            init(r#"{"prompts":{},"resources":{}}"#),
            answer(2, TOOLS),
            vec![],
            answer(4, r#"{"resources":[]}"#),
            answer(5, r#"{"resourceTemplates":[]}"#),
        ],
        &[],
        Limits::default(),
    );
    assert_eq!(t.requests().len(), 5);
    let s = listing.surface.unwrap();
    let prompts = s.prompts.unwrap();
    assert_eq!(
        (prompts.status.as_str(), prompts.detail.as_str()),
        (
            "transport",
            "prompts/list: the recording ends without an answer"
        )
    );
    assert_eq!(s.resources.unwrap().status, "ok");
}
