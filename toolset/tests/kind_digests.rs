//! The surface's entries and digests: parsing a kind's pages (`surface::items`), the per-kind
//! `toolmark/1` digests, the card's digest, the per-tool `toolmark-tool/1` digest and the tool
//! index, and the caching hints of a listing. The vectors are those of docs/digests.md; the Node
//! `canonicalize` package computed them independently (`tests/full_digest_interop.rs`).

use toolmark_toolset::json::Json;
use toolmark_toolset::surface::cache::{CacheHints, MAX_TTL_MS, Scope};
use toolmark_toolset::surface::items::{Items, ItemsError};
use toolmark_toolset::surface::{Kind, OK, RawList, RawRead, card};
use toolmark_toolset::{ParseError, ToolSet, full};

fn list(pages: &[&str]) -> RawList {
    RawList {
        status: OK.into(),
        detail: String::new(),
        pages: pages.iter().map(|p| p.to_string()).collect(),
    }
}

fn read(uri: &str, status: &str, result: Option<&str>) -> RawRead {
    RawRead {
        uri: uri.into(),
        status: status.into(),
        detail: String::new(),
        result: result.map(str::to_string),
    }
}

fn items(kind: Kind, pages: &[&str]) -> Items {
    Items::of_list(kind, &list(pages)).unwrap()
}

fn canonical(items: &Items) -> String {
    String::from_utf8(items.canonical_bytes()).unwrap()
}

const PROMPTS: &str = r#"{"prompts":[{"name":"summarize","description":"Summarise a text","arguments":[{"name":"text","required":true}]},{"name":"greet","title":"Greet","arguments":[]},"odd"]}"#;
const RESOURCES: &str = r#"{"resources":[{"uri":"file:///b.txt","name":"b","mimeType":"text/plain","size":1.0E3},{"uri":"file:///a.txt","name":"a"}]}"#;
const TEMPLATES: &str = r#"{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"file"},{"name":"no template"}]}"#;
const CONTENTS: &str = r#"{"contents":[{"uri":"ui://weather/view.html","mimeType":"text/html;profile=mcp-app","text":"<p>hi</p>","_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com"]}}}}]}"#;

#[test]
fn prompts_vector() {
    let p = items(Kind::Prompts, &[PROMPTS]);
    assert_eq!(
        canonical(&p),
        r#"["odd",{"arguments":[],"name":"greet","title":"Greet"},{"arguments":[{"name":"text","required":true}],"description":"Summarise a text","name":"summarize"}]"#
    );
    assert_eq!(
        p.digest().to_string(),
        "sha256-PItoUTIj+dtlOEcevJqpf4oKCJoPb0JzA6N+jKfHTNM="
    );
}

#[test]
fn resources_vector_sorts_by_uri_and_writes_ecmascript_numbers() {
    let r = items(Kind::Resources, &[RESOURCES]);
    assert_eq!(
        canonical(&r),
        r#"[{"name":"a","uri":"file:///a.txt"},{"mimeType":"text/plain","name":"b","size":1000,"uri":"file:///b.txt"}]"#
    );
    assert_eq!(
        r.digest().to_string(),
        "sha256-PyPADa/ZYiwpnmwI3wGiXspPlIU0o3gJKBZmcub69mY="
    );
}

#[test]
fn templates_vector_sorts_by_uri_template_with_entries_lacking_one_first() {
    let t = items(Kind::Templates, &[TEMPLATES]);
    assert_eq!(
        canonical(&t),
        r#"[{"name":"no template"},{"name":"file","uriTemplate":"file:///{path}"}]"#
    );
    assert_eq!(
        t.digest().to_string(),
        "sha256-aB9LEEb9G7hKMPrnWYr/KYwS80JUvk5pQrb51NnN5vI="
    );
}

#[test]
fn app_pages_vector() {
    let a = Items::of_reads(&[read("ui://weather/view.html", OK, Some(CONTENTS))]).unwrap();
    assert_eq!(a.kind(), Kind::AppPages);
    assert_eq!(a.key_member(), "uri");
    assert_eq!(
        a.digest().to_string(),
        "sha256-T+Zd4pCcJ4hQ/OoSHX3isyTkQNH3XhZ5C+KbBzwbanU="
    );
}

#[test]
fn an_empty_list_has_the_digest_of_the_empty_array() {
    let empty = items(Kind::Prompts, &[r#"{"prompts":[]}"#]);
    assert_eq!(canonical(&empty), "[]");
    assert_eq!(
        empty.digest().to_string(),
        "sha256-T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqHPC8RFhICuUU="
    );
    let none = items(Kind::Resources, &[]);
    assert_eq!(none.digest(), empty.digest());
}

#[test]
fn prompts_digest_like_tools_under_the_same_definition() {
    // Same entries, same key member (`name`): the full digest and the prompts digest agree.
    let entries =
        r#"[{"name":"x","v":2},3,{"name":"x","v":1},{"name":"\ud800"},{"description":"no name"}]"#;
    let p = items(Kind::Prompts, &[&format!(r#"{{"prompts":{entries}}}"#)]);
    let tools = ToolSet::parse(entries.as_bytes()).unwrap();
    assert_eq!(p.digest(), full::digest(&tools));
    assert_eq!(
        p.digest().to_string(),
        "sha256-q1XMZMfuGQHZUlD+L9p1VWTXvxz+DeHaFw5NsucLGaE="
    );
}

#[test]
fn paging_entry_order_member_order_and_spelling_do_not_move_a_kind_digest() {
    let one = items(Kind::Resources, &[RESOURCES]);
    let split = items(
        Kind::Resources,
        &[
            r#"{"resources":[{"name":"a","uri":"file:///a.txt"}],"nextCursor":"p2"}"#,
            r#" {"resources" : [ {"size":1000,"mimeType":"text\/plain","name":"b","uri":"file:///b.txt"} ]} "#,
        ],
    );
    assert_eq!(one.digest(), split.digest());
    let changed = items(
        Kind::Resources,
        &[
            r#"{"resources":[{"uri":"file:///b.txt","name":"b","mimeType":"text/plain","size":1001},{"uri":"file:///a.txt","name":"a"}]}"#,
        ],
    );
    assert_ne!(one.digest(), changed.digest());
}

#[test]
fn items_keep_every_entry_text_byte_for_byte_in_page_order() {
    let p = items(
        Kind::Prompts,
        &[
            r#"{"prompts":[ {"name" : "b"} ,7],"nextCursor":"c"}"#,
            r#"{"prompts":[{"name":"a","x":1.50}]}"#,
        ],
    );
    let raw: Vec<&str> = p.items.iter().map(|i| &*i.raw).collect();
    assert_eq!(raw, [r#"{"name" : "b"}"#, "7", r#"{"name":"a","x":1.50}"#]);
    assert_eq!(p.items[0].get_str("name"), Some("b"));
    assert_eq!(p.items[1].value, Json::Number("7".into()));
    assert_eq!(p.len(), 3);
}

#[test]
fn a_page_may_have_a_byte_order_mark_or_be_a_json_rpc_response() {
    let p = items(
        Kind::Prompts,
        &[
            "\u{FEFF}{\"prompts\":[{\"name\":\"a\"}]}",
            r#"{"jsonrpc":"2.0","id":3,"result":{"prompts":[{"name":"b"}]}}"#,
        ],
    );
    let names: Vec<_> = p.items.iter().map(|i| i.get_str("name")).collect();
    assert_eq!(names, [Some("a"), Some("b")]);
}

#[test]
fn a_repeated_list_member_takes_the_last() {
    let p = items(
        Kind::Templates,
        &[
            r#"{"resourceTemplates":[{"uriTemplate":"old"}],"resourceTemplates":[{"uriTemplate":"new"}]}"#,
        ],
    );
    assert_eq!(p.len(), 1);
    assert_eq!(&*p.items[0].raw, r#"{"uriTemplate":"new"}"#);
}

#[test]
fn pages_that_are_not_a_kinds_result_are_refused_with_their_index() {
    let err = |pages: &[&str]| Items::of_list(Kind::Prompts, &list(pages)).unwrap_err();
    assert_eq!(
        err(&[r#"{"prompts":[]}"#, "[1]"]),
        ItemsError::NotAnObject { page: 1 }
    );
    assert_eq!(
        err(&[r#"{"tools":[]}"#]),
        ItemsError::Missing {
            page: 0,
            member: "prompts"
        }
    );
    assert_eq!(
        err(&[r#"{"prompts":{}}"#]),
        ItemsError::NotArray {
            page: 0,
            member: "prompts"
        }
    );
    assert!(matches!(
        err(&[r#"{"prompts":[1,]}"#]),
        ItemsError::Json { page: 0, .. }
    ));
}

#[test]
fn pages_nested_deeper_than_the_cap_are_refused() {
    let deep = format!(
        r#"{{"prompts":[{}{}]}}"#,
        "[".repeat(toolmark_toolset::json::MAX_DEPTH),
        "]".repeat(toolmark_toolset::json::MAX_DEPTH)
    );
    assert!(matches!(
        Items::of_list(Kind::Prompts, &list(&[&deep])),
        Err(ItemsError::Json { page: 0, .. })
    ));
}

#[test]
fn app_pages_come_from_ok_reads_only() {
    let reads = [
        read(
            "ui://a",
            OK,
            Some(r#"{"contents":[{"uri":"ui://a","text":"A"}]}"#),
        ),
        read("ui://b", "timeout", None),
        read("ui://c", "skipped", None),
        read(
            "ui://d",
            OK,
            Some(r#"{"contents":[{"uri":"ui://d","blob":"AA=="},{"uri":"ui://d#2","text":"D"}]}"#),
        ),
    ];
    let a = Items::of_reads(&reads).unwrap();
    let uris: Vec<_> = a.items.iter().map(|i| i.get_str("uri").unwrap()).collect();
    assert_eq!(uris, ["ui://a", "ui://d", "ui://d#2"]);
}

#[test]
fn an_ok_read_without_a_result_is_an_error() {
    assert_eq!(
        Items::of_reads(&[read("ui://a", OK, None)]),
        Err(ItemsError::NoResult { page: 0 })
    );
    assert_eq!(
        Items::of_reads(&[read("ui://a", OK, Some(r#"{"contents":3}"#))]),
        Err(ItemsError::NotArray {
            page: 0,
            member: "contents"
        })
    );
}

#[test]
fn card_digest_vector_is_rfc8785_of_the_whole_document() {
    let body = r#"{"version":"1.0","name":"io.example/weather","n":1.0E0,"a":[true,null]}"#;
    assert_eq!(
        card::digest(body).unwrap().to_string(),
        "sha256-h8jmoDXcXUfPEn7MGBXbYei08ERKq7WTFWpSKkNzue8="
    );
    let respelled = "\u{FEFF} { \"a\" : [ true , null ] , \"n\" : 1, \"name\":\"io.example\\/weather\",\"version\":\"1.0\" }";
    assert_eq!(card::digest(respelled), card::digest(body));
}

#[test]
fn a_card_that_is_any_json_value_has_a_digest_and_one_that_is_not_json_has_none() {
    assert_eq!(
        card::digest("3").unwrap().to_string(),
        "sha256-TgdAhWK+24tgzgXB3s/jrRa3IjCWfeAfZAt+Rym0n84="
    );
    assert!(matches!(
        card::digest("{\"a\":1,}"),
        Err(ParseError::Json(_))
    ));
}

#[test]
fn a_tool_digest_is_the_sri_of_its_entry_in_the_full_digest() {
    let set = ToolSet::parse(br#"[{"inputSchema":{}, "name":"t","description":"d"}]"#).unwrap();
    assert_eq!(
        full::entry_bytes(&set.tools[0].value),
        br#"{"description":"d","inputSchema":{},"name":"t"}"#
    );
    assert_eq!(
        full::tool_digest(&set.tools[0]).to_string(),
        "sha256-mjDJ61j2CauCkwXLSm6FnAxvYwmScBKYHv1frAiF1Yo="
    );
}

#[test]
fn tool_index_vector_of_one_tool() {
    let set = ToolSet::parse(br#"[{"name":"t","description":"d","inputSchema":{}}]"#).unwrap();
    let index = full::ToolIndex::of(&set);
    let digests: Vec<String> = index.digests.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        digests,
        ["sha256-mjDJ61j2CauCkwXLSm6FnAxvYwmScBKYHv1frAiF1Yo="]
    );
    assert_eq!(
        index.digest.to_string(),
        "sha256-QKiPpL7rayuFP/wHYj1fP2HPUn20ZAnFnz3Q97j5rWM="
    );
}

#[test]
fn tool_index_sorts_digest_strings_bytewise_and_keeps_every_entry() {
    let set = ToolSet::parse(
        br#"[{"name":"x","v":2},3,{"name":"x","v":1},{"name":"\ud800"},{"description":"no name"}]"#,
    )
    .unwrap();
    let index = full::ToolIndex::of(&set);
    let digests: Vec<String> = index.digests.iter().map(|d| d.to_string()).collect();
    let mut sorted = digests.clone();
    sorted.sort();
    assert_eq!(digests, sorted);
    assert_eq!(
        digests,
        [
            "sha256-0Ou8xK3773XXiBWUQi9Wv8jGDpN0yPo0ElctLuVuBnA=",
            "sha256-2XYJNbu1ks0TXAh617j6hpMHDCFXcBzrXhXfd/IYw7A=",
            "sha256-TgdAhWK+24tgzgXB3s/jrRa3IjCWfeAfZAt+Rym0n84=",
            "sha256-mpfpFP7NbTbqfXsNGwwlQAynzc9n0Jkn/qyVh7GJEPs=",
            "sha256-vO9PGuxODHpVZDR20IPeU+LdT4cX0YzRu4FuwFAEHvw=",
        ]
    );
    assert_eq!(
        index.digest.to_string(),
        "sha256-58w5Gh1DjD4S231xZj87uMJzEVLewzWSjepL9AXL5po="
    );
}

#[test]
fn tool_index_keeps_duplicates_and_the_empty_set_has_the_empty_arrays_digest() {
    let dup = ToolSet::parse(
        br#"[{"name":"t","description":"d","inputSchema":{}},{"name":"t","description":"d","inputSchema":{}}]"#,
    )
    .unwrap();
    let index = full::ToolIndex::of(&dup);
    assert_eq!(index.digests.len(), 2);
    assert_eq!(index.digests[0], index.digests[1]);
    assert_eq!(
        index.digest.to_string(),
        "sha256-iUtC97kTjNXyYS42LFmcaCeXEay/E1jPDn4JaFO6PzE="
    );
    let empty = full::ToolIndex::of(&ToolSet::parse(b"[]").unwrap());
    assert!(empty.digests.is_empty());
    assert_eq!(
        empty.digest.to_string(),
        "sha256-T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqHPC8RFhICuUU="
    );
}

#[test]
fn a_tool_keeps_its_digest_when_another_tool_changes_or_the_order_changes() {
    let a = ToolSet::parse(br#"[{"name":"a","v":1},{"name":"b","v":1}]"#).unwrap();
    let b = ToolSet::parse(br#"[{"v":2,"name":"b"},{"v":1,"name":"a"}]"#).unwrap();
    let (ia, ib) = (full::ToolIndex::of(&a), full::ToolIndex::of(&b));
    assert_eq!(
        full::tool_digest(&a.tools[0]),
        full::tool_digest(&b.tools[1])
    );
    assert!(ib.digests.contains(&full::tool_digest(&a.tools[0])));
    assert!(!ib.digests.contains(&full::tool_digest(&a.tools[1])));
    assert_ne!(ia.digest, ib.digest);
}

#[test]
fn cache_hints_take_the_smallest_ttl_over_the_pages() {
    let h = CacheHints::of_pages(&[
        r#"{"prompts":[],"ttlMs":60000,"cacheScope":"public","nextCursor":"2"}"#,
        r#"{"prompts":[],"ttlMs":5000,"cacheScope":"public"}"#,
        r#"{"prompts":[]}"#,
    ]);
    assert_eq!(h.ttl_ms, Some(5000));
    assert_eq!(h.scope, Some(Scope::Public));
    assert!(!h.unreadable);
    assert_eq!(h.ignored, 0);
}

#[test]
fn one_private_page_makes_the_listing_private() {
    let h = CacheHints::of_pages(&[
        r#"{"tools":[],"cacheScope":"public"}"#,
        r#"{"tools":[],"cacheScope":"private"}"#,
        r#"{"tools":[],"cacheScope":"public"}"#,
    ]);
    assert_eq!(h.scope, Some(Scope::Private));
    assert_eq!(h.ttl_ms, None);
}

#[test]
fn a_listing_without_hints_has_none() {
    let h = CacheHints::of_pages(&[r#"{"resources":[]}"#]);
    assert_eq!(h, CacheHints::default());
}

#[test]
fn hints_of_the_wrong_type_are_ignored_and_counted() {
    let h = CacheHints::of_pages(&[
        r#"{"ttlMs":"60000","cacheScope":"shared"}"#,
        r#"{"ttlMs":-1,"cacheScope":true}"#,
        r#"{"ttlMs":1.5}"#,
        r#"{"ttlMs":9007199254740992}"#,
        r#"{"ttlMs":250,"cacheScope":"public"}"#,
    ]);
    assert_eq!(h.ttl_ms, Some(250));
    assert_eq!(h.scope, Some(Scope::Public));
    assert_eq!(h.ignored, 6);
    assert!(!h.unreadable);
}

#[test]
fn a_ttl_is_any_spelling_of_a_whole_number_up_to_the_cap() {
    for (page, ttl) in [
        (r#"{"ttlMs":0}"#, 0),
        (r#"{"ttlMs":1e3}"#, 1000),
        (r#"{"ttlMs":1000.0}"#, 1000),
        (r#"{"ttlMs":9007199254740991}"#, MAX_TTL_MS),
    ] {
        assert_eq!(CacheHints::of_pages(&[page]).ttl_ms, Some(ttl), "{page}");
    }
}

#[test]
fn a_page_that_is_not_an_object_is_unreadable_and_a_json_rpc_result_is_read() {
    let h = CacheHints::of_pages(&[
        "not json",
        "[1]",
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"ttlMs":10,"cacheScope":"private"}}"#,
    ]);
    assert!(h.unreadable);
    assert_eq!(h.ttl_ms, Some(10));
    assert_eq!(h.scope, Some(Scope::Private));
    assert_eq!(h.ignored, 0);
}

/// What a client holding an answer's `toolDigests` recomputes: the list in the index's order
/// gives the index digest; the same digests in another order, or one missing, do not.
#[test]
fn tool_index_digest_of_its_list_is_the_index_digest_and_order_matters() {
    let set = ToolSet::parse(
        br#"[{"name":"x","v":2},3,{"name":"x","v":1},{"name":"\ud800"},{"description":"no name"}]"#,
    )
    .unwrap();
    let index = full::ToolIndex::of(&set);
    assert_eq!(full::ToolIndex::digest_of(&index.digests), index.digest);
    let mut reversed = index.digests.clone();
    reversed.reverse();
    assert_ne!(full::ToolIndex::digest_of(&reversed), index.digest);
    assert_ne!(
        full::ToolIndex::digest_of(&index.digests[1..]),
        index.digest
    );
    assert_eq!(
        full::ToolIndex::digest_of(&[]).to_string(),
        "sha256-T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqHPC8RFhICuUU="
    );
}
