//! Registry parsing and target building, on real registry data.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use toolmark_observation::registry::{
    self, Declared, Ecosystem, MAX_HEADERS_PER_REMOTE, MAX_ITEMS_PER_PAGE, MAX_SENT_HEADER_BYTES,
    Page, Record, RegistryError, SkipReason, Status, Target, TargetKind, WithheldWhy,
    latest_per_name, parse_page, parse_snapshot, targets,
};

const FIXTURE: &str = include_str!("fixtures/registry-2025-12-18-sample.json");

fn fixture_page() -> Page {
    let wrapped = format!(r#"{{"servers": {FIXTURE}, "metadata": {{"count": 61}}}}"#);
    parse_page(wrapped.as_bytes()).expect("fixture page parses")
}

/// A page holding the given items (JSON text) and an optional cursor.
fn page_of(items: &[&str], cursor: Option<&str>) -> Vec<u8> {
    let cursor = match cursor {
        Some(c) => format!(r#","nextCursor":"{c}""#),
        None => String::new(),
    };
    format!(
        r#"{{"servers":[{}],"metadata":{{"count":{}{cursor}}}}}"#,
        items.join(","),
        items.len()
    )
    .into_bytes()
}

/// One item with the given remotes / packages JSON (arrays).
fn item(name: &str, remotes: &str, packages: &str) -> String {
    format!(
        r#"{{"server":{{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name":"{name}","description":"d","version":"1.0.0","remotes":{remotes},"packages":{packages}}},
        "_meta":{{"io.modelcontextprotocol.registry/official":{{"status":"active",
        "publishedAt":"2025-12-01T00:00:00Z","updatedAt":"2025-12-01T00:00:00Z","isLatest":true}}}}}}"#
    )
}

fn one_record(remotes: &str, packages: &str) -> Record {
    let page = parse_page(&page_of(&[&item("a.b/c", remotes, packages)], None)).unwrap();
    assert!(page.rejected.is_empty(), "{:?}", page.rejected);
    page.servers.into_iter().next().unwrap()
}

fn skips(record: &Record) -> Vec<Option<SkipReason>> {
    targets(record).into_iter().map(|t| t.skip).collect()
}

/// What dialling `target` (a remote) sends.
fn declared(target: &Target) -> &Declared {
    match &target.kind {
        TargetKind::Remote { declared, .. } => declared,
        TargetKind::Package { .. } => panic!("a package"),
    }
}

/// The first remote of `record`'s targets: what it sends, and its skip reason.
fn first_remote(record: &Record) -> (Declared, Option<SkipReason>) {
    let t = targets(record).into_iter().next().unwrap();
    (declared(&t).clone(), t.skip)
}

/// `(name, why)` of every withheld header.
fn withheld(d: &Declared) -> Vec<(&str, WithheldWhy)> {
    d.withheld
        .iter()
        .map(|w| (w.name.as_str(), w.why))
        .collect()
}

/// `(name, value)` of every header sent.
fn sent(d: &Declared) -> Vec<(&str, &str)> {
    d.headers
        .iter()
        .map(|h| (h.name.as_str(), h.value.as_str()))
        .collect()
}

// ---- fixture (trimmed real data) ----

#[test]
fn fixture_parses_completely() {
    let page = fixture_page();
    assert_eq!(page.servers.len(), 61);
    assert!(page.rejected.is_empty());
    assert_eq!(page.next_cursor, None);
    let names: BTreeSet<_> = page.servers.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.len(), 49);
    assert_eq!(page.servers.iter().filter(|r| r.is_latest).count(), 47);
    assert!(page.servers.iter().all(|r| r.status == Status::Active));
    assert!(page.servers.iter().all(|r| !r.published_at.is_empty()));
}

#[test]
fn fixture_latest_per_name_prefers_is_latest() {
    let latest = latest_per_name(fixture_page().servers);
    assert_eq!(latest.len(), 49);
    let names: Vec<_> = latest.iter().map(|r| r.name.clone()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "sorted by name");
    let by_name: BTreeMap<_, _> = latest.iter().map(|r| (r.name.as_str(), r)).collect();
    assert_eq!(by_name["com.mintmcp/gmail"].version, "1.0.5");
    assert_eq!(by_name["com.mintmcp/gcal"].version, "1.0.4");
    assert!(by_name["com.mintmcp/gmail"].is_latest);

    // Same answer whatever the input order.
    let mut reversed = fixture_page().servers;
    reversed.reverse();
    assert_eq!(latest_per_name(reversed), latest);
}

#[test]
fn fixture_smithery_remotes_are_dialled_without_their_key_and_keep_no_value() {
    let page = fixture_page();
    let smithery: Vec<_> = page
        .servers
        .iter()
        .filter(|r| r.name.starts_with("ai.smithery/"))
        .collect();
    assert!(smithery.len() >= 5);
    for r in smithery {
        for t in targets(r) {
            if let TargetKind::Remote { .. } = t.kind {
                assert_eq!(t.skip, None);
                let d = declared(&t);
                assert!(d.headers.is_empty());
                assert_eq!(
                    withheld(d),
                    [("Authorization", WithheldWhy::Secret)],
                    "{}",
                    r.name
                );
            }
        }
    }
    // The fixture holds `Bearer {smithery_api_key}`; nothing parsed may.
    assert!(FIXTURE.contains("Bearer {smithery_api_key}"));
    let dump = format!("{:?}", page.servers);
    assert!(!dump.contains("Bearer"));
    assert!(!dump.contains("smithery_api_key"));
}

#[test]
fn fixture_targets_cover_every_remote_and_package() {
    let page = fixture_page();
    let cf = page
        .servers
        .iter()
        .find(|r| r.name == "com.cloudflare.mcp/mcp")
        .unwrap();
    let t = targets(cf);
    assert_eq!(t.len(), 30, "no cap on remotes");
    let sse = t
        .iter()
        .filter(|t| matches!(&t.kind, TargetKind::Remote { transport, .. } if transport == "sse"))
        .count();
    assert_eq!(sse, 15);
    // Optional `Authentication` headers do not cause a skip; sse is supported.
    assert!(t.iter().all(|t| t.skip.is_none()), "{t:?}");

    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for r in &page.servers {
        for t in targets(r) {
            let key = match (&t.kind, &t.skip) {
                (_, Some(s)) => s.as_str().to_owned(),
                (TargetKind::Remote { transport, .. }, None) => format!("ok-{transport}"),
                (TargetKind::Package { ecosystem, .. }, None) => format!("ok-{ecosystem:?}"),
            };
            *counts.entry(key).or_default() += 1;
        }
    }
    assert!(counts["ok-Npm"] > 0 && counts["ok-Pypi"] > 0, "{counts:?}");
    assert!(counts["ok-sse"] > 0 && counts["ok-streamable-http"] > 0);
    // Header-declared remotes are dialled (anonymously): none is skipped for its headers.
    assert!(!counts.contains_key("header-required"), "{counts:?}");
    let anonymous = page
        .servers
        .iter()
        .flat_map(targets)
        .filter(|t| t.skip.is_none() && matches!(&t.kind, TargetKind::Remote { declared, .. } if !declared.withheld.is_empty()))
        .count();
    assert!(anonymous >= 10, "{anonymous}");
    // oci 4, mcpb 2, nuget 2 (some entries also have npm packages).
    assert!(counts["unsupported-package-type"] >= 8, "{counts:?}");
    let oci = page
        .servers
        .iter()
        .flat_map(targets)
        .filter(|t| matches!(&t.kind, TargetKind::Package { ecosystem: Ecosystem::Other(e), .. } if e == "oci"))
        .collect::<Vec<_>>();
    assert!(!oci.is_empty());
    assert!(
        oci.iter()
            .all(|t| t.skip == Some(SkipReason::UnsupportedPackageType("oci".to_owned())))
    );
}

// ---- full corpus ----

fn corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/registry");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "note: {} is absent; skipping full-corpus test",
            dir.display()
        );
        None
    }
}

#[test]
fn full_corpus_2025_12_18_counts() {
    let Some(dir) = corpus_dir() else { return };
    let bytes = std::fs::read(dir.join("mcp-insights-servers-2025-12-18T0842Z.json")).unwrap();
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"), "real file has a BOM");
    let page = parse_snapshot(&bytes).unwrap();
    assert!(
        page.rejected.is_empty(),
        "{:?}",
        &page.rejected[..3.min(page.rejected.len())]
    );
    let all = page.servers;
    assert_eq!(all.len(), 2_794);
    let names: BTreeSet<_> = all.iter().map(|r| r.name.clone()).collect();
    assert_eq!(names.len(), 1_108);
    assert_eq!(all.iter().filter(|r| r.is_latest).count(), 1_108);
    let transport_count = |t: &str| {
        all.iter()
            .flat_map(|r| &r.remotes)
            .filter(|r| r.transport == t)
            .count()
    };
    assert_eq!(transport_count("streamable-http"), 1_011);
    assert_eq!(transport_count("sse"), 198);
    assert!(
        all.iter()
            .all(|r| r.remotes_omitted == 0 && r.packages_omitted == 0)
    );

    let latest = latest_per_name(all);
    assert_eq!(latest.len(), 1_108);
    assert!(latest.iter().all(|r| r.is_latest));
    let with_remotes: Vec<_> = latest.iter().filter(|r| !r.remotes.is_empty()).collect();
    assert_eq!(with_remotes.len(), 486);
    // Documented facts about the latest entries' remotes (reference §2).
    let remotes: Vec<_> = with_remotes.iter().flat_map(|r| &r.remotes).collect();
    assert_eq!(remotes.len(), 621);
    assert_eq!(remotes.iter().filter(|r| r.transport == "sse").count(), 129);
    assert!(remotes.iter().all(|r| r.variables.is_empty()));
    let remote_targets: Vec<_> = with_remotes
        .iter()
        .flat_map(|r| targets(r))
        .filter(|t| matches!(t.kind, TargetKind::Remote { .. }))
        .collect();
    assert_eq!(remote_targets.len(), 621);
    assert!(remote_targets.iter().all(|t| !matches!(
        t.skip,
        Some(SkipReason::CleartextUrl | SkipReason::TemplatedUrl { .. })
    )));
    // Every one of them is dialled: none is skipped for its headers.
    assert!(remote_targets.iter().all(|t| t.skip.is_none()));
    let withholding_needed = remotes
        .iter()
        .filter(|r| r.headers.iter().any(|h| h.is_needed()))
        .count();
    // 156 declare an `isRequired` header; 118 more declare a templated value without it
    // (109 `Bearer {smithery_api_key}`, 8 `App {INFOBIP_API_KEY}`, 1 other): skipped as
    // `header-required` until #13, dialled without those headers now.
    assert_eq!(withholding_needed, 274);
    // Two literal values are declared (`Api-Token: YOUR_API_TOKEN_HERE`, `Lang-Code: en`),
    // on one remote, and are sent.
    let sending: Vec<_> = remote_targets
        .iter()
        .flat_map(|t| sent(declared(t)))
        .collect();
    assert_eq!(
        sending,
        [("Api-Token", "YOUR_API_TOKEN_HERE"), ("Lang-Code", "en")]
    );
    let strictly_required = remotes
        .iter()
        .filter(|r| r.headers.iter().any(|h| h.is_required))
        .count();
    assert_eq!(strictly_required, 156);
    let smithery_keyless = remote_targets
        .iter()
        .filter(|t| {
            matches!(&t.kind, TargetKind::Remote { url, .. } if url.contains("server.smithery.ai"))
                && withheld(declared(t)) == [("Authorization", WithheldWhy::Secret)]
        })
        .count();
    // 212 smithery remotes, one of which declares no header at all.
    assert_eq!(smithery_keyless, 211);
}

#[test]
fn full_corpus_2025_12_17_parses() {
    let Some(dir) = corpus_dir() else { return };
    let bytes = std::fs::read(dir.join("mcp-insights-servers-2025-12-17T0843Z.json")).unwrap();
    let page = parse_snapshot(&bytes).unwrap();
    assert!(page.rejected.is_empty());
    assert_eq!(page.servers.len(), 2_756);
}

// ---- page shape, BOM, rejection ----

#[test]
fn bom_is_tolerated() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(page_of(&[&item("a.b/c", "[]", "[]")], Some("a.b/c:1.0.0")));
    let page = parse_page(&bytes).unwrap();
    assert_eq!(page.servers.len(), 1);
    assert_eq!(page.next_cursor.as_deref(), Some("a.b/c:1.0.0"));
}

#[test]
fn empty_cursor_is_none() {
    let page = parse_page(&page_of(&[], Some(""))).unwrap();
    assert_eq!(page.next_cursor, None);
    assert!(page.servers.is_empty());
}

#[test]
fn malformed_item_is_rejected_rest_kept() {
    let good1 = item("a.b/one", "[]", "[]");
    let good2 = item(
        "a.b/two",
        r#"[{"type":"sse","url":"https://x.example/sse"}]"#,
        "[]",
    );
    let no_name = r#"{"server":{"version":"1.0.0"}}"#;
    let bad_type =
        r#"{"server":{"name":"a.b/x","version":"1","remotes":[{"type":"sse","url":7}]}}"#;
    let bad_headers = r#"{"server":{"name":"a.b/y","version":"1","remotes":[{"type":"sse","url":"https://a","headers":[{"name":"H","isRequired":"yes"}]}]}}"#;
    let page = parse_page(&page_of(
        &[&good1, no_name, "42", bad_type, &good2, bad_headers],
        None,
    ))
    .unwrap();
    let names: Vec<_> = page.servers.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a.b/one", "a.b/two"]);
    let idx: Vec<_> = page.rejected.iter().map(|(i, _)| *i).collect();
    assert_eq!(idx, [1, 2, 3, 5]);
    assert!(page.rejected.iter().all(|(_, why)| !why.is_empty()));
}

#[test]
fn missing_optional_fields_and_unknown_members() {
    let minimal = r#"{"server":{"name":"a.b/min","version":"0.1","futureField":{"x":[1]},"repository":{}},"extra":1}"#;
    let page = parse_page(&page_of(&[minimal], None)).unwrap();
    let r = &page.servers[0];
    assert_eq!(r.status, Status::Unknown);
    assert!(!r.is_latest);
    assert_eq!(r.published_at, "");
    assert_eq!(r.title, None);
    assert_eq!(r.repository_url, None);
    assert!(r.remotes.is_empty() && r.packages.is_empty());
    assert!(targets(r).is_empty());
}

#[test]
fn not_a_page_is_an_error() {
    for bad in [&b"[]"[..], b"{}", b"{\"servers\":{}}", b"null", b"not json"] {
        assert!(parse_page(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
    assert!(matches!(
        parse_page(b"{\"servers\":3}"),
        Err(RegistryError::NotAPage(_))
    ));
    assert!(matches!(
        parse_snapshot(b"{}"),
        Err(RegistryError::NotAPage(_))
    ));
}

#[test]
fn too_many_items_is_an_error() {
    let items = vec!["{}"; MAX_ITEMS_PER_PAGE + 1];
    assert!(matches!(
        parse_page(&page_of(&items, None)),
        Err(RegistryError::TooManyItems { .. })
    ));
}

#[test]
fn long_text_is_capped_and_long_name_rejected() {
    let long = "x".repeat(registry::MAX_TEXT_LEN + 50);
    let with_long_desc = format!(
        r#"{{"server":{{"name":"a.b/c","version":"1","description":"{long}","title":"é{long}"}}}}"#
    );
    let long_name = format!(
        r#"{{"server":{{"name":"a.b/{}","version":"1"}}}}"#,
        "n".repeat(registry::MAX_NAME_LEN)
    );
    let page = parse_page(&page_of(&[&with_long_desc, &long_name], None)).unwrap();
    assert_eq!(page.servers.len(), 1);
    let r = &page.servers[0];
    assert_eq!(
        r.description.as_ref().unwrap().len(),
        registry::MAX_TEXT_LEN
    );
    assert!(r.title.as_ref().unwrap().len() <= registry::MAX_TEXT_LEN);
    assert_eq!(page.rejected.len(), 1);
    assert_eq!(page.rejected[0].0, 1);
}

#[test]
fn a_pages_items_are_its_accepted_items_and_parse_back_to_their_records() {
    let page = parse_page(&page_of(
        &[
            r#"{"server":{"name":"a/one","version":"1"}}"#,
            r#"{"server":{"version":"no name"}}"#,
            r#"{"server":{"name":"a/two","version":"2","remotes":[{"type":"sse","url":"https://x/sse"}]}}"#,
        ],
        None,
    ))
    .unwrap();
    assert_eq!(page.items.len(), 2);
    let again = parse_snapshot(format!("[{}]", page.items.join(",")).as_bytes()).unwrap();
    assert_eq!(again.servers, page.servers);
    assert!(again.items.is_empty(), "a snapshot keeps no item texts");
}

#[test]
fn a_rejected_item_keeps_its_name_when_it_has_one() {
    let page = parse_page(&page_of(
        &[
            r#"{"server":{"name":"a/named","version":""}}"#,
            r#"{"server":{"version":"1"}}"#,
        ],
        None,
    ))
    .unwrap();
    assert_eq!(page.rejected.len(), 2);
    assert_eq!(page.rejected_names, [Some("a/named".to_owned()), None]);
}

// ---- latest_per_name ----

fn rec(name: &str, version: &str, latest: bool, published: &str, status: &str) -> String {
    format!(
        r#"{{"server":{{"name":"{name}","version":"{version}"}},"_meta":{{"io.modelcontextprotocol.registry/official":{{"status":"{status}","publishedAt":"{published}","updatedAt":"{published}","isLatest":{latest}}}}}}}"#
    )
}

#[test]
fn latest_per_name_rules() {
    let items = [
        rec("z.z/b", "2.0.0", false, "2025-12-02T00:00:00Z", "active"),
        rec("z.z/b", "1.0.0", true, "2025-12-01T00:00:00Z", "active"),
        rec("a.a/a", "1.0.0", false, "2025-12-01T00:00:09Z", "active"),
        rec("a.a/a", "1.0.1", false, "2025-12-01T00:00:09.5Z", "active"),
        rec("m.m/gone", "1.0.0", true, "2025-12-01T00:00:00Z", "deleted"),
        rec("m.m/half", "2.0.0", true, "2025-12-02T00:00:00Z", "deleted"),
        rec(
            "m.m/half",
            "1.0.0",
            false,
            "2025-12-01T00:00:00Z",
            "deprecated",
        ),
    ];
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    let page = parse_page(&page_of(&refs, None)).unwrap();
    let latest = latest_per_name(page.servers.clone());
    let got: Vec<_> = latest
        .iter()
        .map(|r| (r.name.as_str(), r.version.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("a.a/a", "1.0.1"),
            ("m.m/half", "1.0.0"),
            ("z.z/b", "1.0.0")
        ]
    );
    let mut rev = page.servers;
    rev.reverse();
    assert_eq!(latest_per_name(rev), latest);
}

// ---- skip reasons ----

#[test]
fn skip_templated_url() {
    let r = one_record(
        r#"[{"type":"streamable-http","url":"https://{tenant_id}.example.com/{region}/mcp"}]"#,
        "[]",
    );
    assert_eq!(r.remotes[0].variables, ["tenant_id", "region"]);
    let s = skips(&r);
    assert_eq!(
        s,
        [Some(SkipReason::TemplatedUrl {
            variables: vec!["tenant_id".into(), "region".into()]
        })]
    );
    assert_eq!(s[0].as_ref().unwrap().as_str(), "templated-url");
}

#[test]
fn declared_headers_are_sorted_into_sent_and_withheld() {
    let r = one_record(
        r#"[{"type":"streamable-http","url":"https://x.example/mcp","headers":[
            {"name":"X-Optional","isRequired":false,"value":"opt"},
            {"name":"Authorization","isRequired":true,"isSecret":true,"value":"Bearer {smithery_api_key}"},
            {"name":"X-Tenant","isRequired":true,"default":"t1","choices":["t1","t2"]}]}]"#,
        "[]",
    );
    let (d, skip) = first_remote(&r);
    // Dialled anonymously: what needs the user is withheld, the literal is sent.
    assert_eq!(skip, None);
    assert_eq!(sent(&d), [("X-Optional", "opt")]);
    assert_eq!(
        withheld(&d),
        [
            ("Authorization", WithheldWhy::Secret),
            ("X-Tenant", WithheldWhy::NoValue)
        ]
    );
    assert!(d.withheld.iter().all(|w| w.required));
    assert_eq!(
        d.withheld_note().unwrap(),
        "without declared header(s) Authorization (secret), X-Tenant (no-value)"
    );
    // Needed first, flags kept.
    let h = &r.remotes[0].headers;
    assert_eq!(h.len(), 3);
    assert!(h[0].is_required && h[0].is_secret && h[0].name == "Authorization");
    assert!(!h[2].is_required && h[2].name == "X-Optional");
}

#[test]
fn secret_and_templated_values_are_never_kept() {
    let secret = "sk-live-DO-NOT-KEEP-0123456789";
    let r = one_record(
        &format!(
            r#"[{{"type":"sse","url":"https://x.example/sse","headers":[
            {{"name":"Authorization","isRequired":true,"isSecret":true,"value":"Bearer {secret}","default":"{secret}-d","placeholder":"{secret}-p"}},
            {{"name":"X-Other","isSecret":true,"value":"{secret}-o"}},
            {{"name":"X-Template","value":"k={{api_key}}"}},
            {{"name":"Authorization","value":"{secret}-credential-by-name"}}]}}]"#
        ),
        "[]",
    );
    let dump = format!("{r:?}{:?}", targets(&r));
    assert!(!dump.contains(secret), "{dump}");
    assert!(!dump.contains("Bearer"));
    assert!(!dump.contains("k={api_key}"));
    let (d, skip) = first_remote(&r);
    assert_eq!(skip, None);
    assert!(d.headers.is_empty());
    assert_eq!(
        withheld(&d),
        [
            // Needed ones (required, or templated) first.
            ("Authorization", WithheldWhy::Secret),
            ("X-Template", WithheldWhy::Template),
            ("X-Other", WithheldWhy::Secret),
            ("Authorization", WithheldWhy::Secret),
        ]
    );
}

#[test]
fn reserved_headers_are_never_sent_and_a_required_one_skips_the_remote() {
    let names = [
        "Host",
        "content-length",
        "Transfer-Encoding",
        "Connection",
        "Cookie",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "mcp-method",
        "Accept",
        "User-Agent",
    ];
    let headers: Vec<String> = names
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","value":"literal"}}"#))
        .collect();
    let r = one_record(
        &format!(
            r#"[{{"type":"streamable-http","url":"https://x.example/mcp","headers":[{}]}}]"#,
            headers.join(",")
        ),
        "[]",
    );
    let (d, skip) = first_remote(&r);
    assert_eq!(skip, None, "none is required: dialled without them");
    assert!(d.headers.is_empty());
    assert_eq!(
        withheld(&d),
        names
            .iter()
            .map(|n| (*n, WithheldWhy::Reserved))
            .collect::<Vec<_>>()
    );
    assert!(
        !format!("{r:?}").contains("literal"),
        "values of reserved headers are not kept"
    );

    // A required header whose fixed value may not be sent: dialling would observe another service.
    let r = one_record(
        r#"[{"type":"streamable-http","url":"https://x.example/mcp","headers":[
            {"name":"Host","isRequired":true,"value":"internal.example"},
            {"name":"Authorization","isRequired":true,"isSecret":true}]}]"#,
        "[]",
    );
    assert_eq!(
        skips(&r),
        [Some(SkipReason::HeaderRequired {
            headers: vec!["Host".into()]
        })]
    );
}

#[test]
fn invalid_header_values_and_names_are_withheld() {
    let r = one_record(
        r#"[{"type":"streamable-http","url":"https://x.example/mcp","headers":[
            {"name":"X-Newline","value":"a\r\nInjected: 1"},
            {"name":"X-Unicode","value":"caf\u00e9"},
            {"name":"X-Padded","value":" a"},
            {"name":"Bad Name","value":"a"},
            {"name":"X-Fine","value":"a b\tc"}]}]"#,
        "[]",
    );
    let (d, skip) = first_remote(&r);
    assert_eq!(skip, None);
    assert_eq!(sent(&d), [("X-Fine", "a b\tc")]);
    assert_eq!(
        withheld(&d),
        [
            ("X-Newline", WithheldWhy::Invalid),
            ("X-Unicode", WithheldWhy::Invalid),
            ("X-Padded", WithheldWhy::Invalid),
            ("Bad Name", WithheldWhy::Invalid),
        ]
    );
}

#[test]
fn headers_sent_stay_within_the_byte_limit() {
    // 1,000-byte values: four fit in MAX_SENT_HEADER_BYTES (4 KiB), the fifth does not.
    let value = "v".repeat(1_000);
    let headers: Vec<String> = (0..5)
        .map(|i| format!(r#"{{"name":"X-H{i}","value":"{value}"}}"#))
        .collect();
    let r = one_record(
        &format!(
            r#"[{{"type":"streamable-http","url":"https://x.example/mcp","headers":[{}]}}]"#,
            headers.join(",")
        ),
        "[]",
    );
    let (d, skip) = first_remote(&r);
    assert_eq!(skip, None);
    let bytes: usize = d
        .headers
        .iter()
        .map(|h| h.name.len() + h.value.len() + 4)
        .sum();
    assert!(bytes <= MAX_SENT_HEADER_BYTES);
    assert_eq!(d.headers.len(), 4);
    assert_eq!(withheld(&d), [("X-H4", WithheldWhy::OverLimit)]);
}

#[test]
fn required_headers_survive_the_header_cap() {
    let mut headers: Vec<String> = (0..MAX_HEADERS_PER_REMOTE + 5)
        .map(|i| format!(r#"{{"name":"X-Opt-{i}"}}"#))
        .collect();
    headers.push(r#"{"name":"Authorization","isRequired":true}"#.to_owned());
    let r = one_record(
        &format!(
            r#"[{{"type":"streamable-http","url":"https://x.example/mcp","headers":[{}]}}]"#,
            headers.join(",")
        ),
        "[]",
    );
    assert_eq!(r.remotes[0].headers.len(), MAX_HEADERS_PER_REMOTE);
    let (d, skip) = first_remote(&r);
    assert_eq!(skip, None);
    assert_eq!(d.withheld[0].name, "Authorization");
    assert!(d.withheld[0].required);
    assert_eq!(
        (d.withheld.len(), d.headers.len()),
        (MAX_HEADERS_PER_REMOTE, 0)
    );
}

#[test]
fn skip_cleartext_url() {
    let r = one_record(
        r#"[{"type":"streamable-http","url":"http://x.example/mcp"}]"#,
        "[]",
    );
    let s = skips(&r);
    assert_eq!(s, [Some(SkipReason::CleartextUrl)]);
    assert_eq!(s[0].as_ref().unwrap().as_str(), "cleartext-url");
}

#[test]
fn skip_unsupported_transport() {
    let r = one_record(r#"[{"type":"websocket","url":"wss://x.example/ws"}]"#, "[]");
    let s = skips(&r);
    assert_eq!(
        s,
        [Some(SkipReason::UnsupportedTransport("websocket".into()))]
    );
    assert_eq!(s[0].as_ref().unwrap().as_str(), "unsupported-transport");
}

#[test]
fn skip_unsupported_package_type() {
    let r = one_record(
        "[]",
        r#"[{"registryType":"oci","identifier":"docker.io/x/y","version":"1","transport":{"type":"stdio"}},
            {"registryType":"mcpb","identifier":"https://x/y.mcpb","fileSha256":"00"},
            {"registryType":"npm","identifier":"@x/y","version":"1.2.3","transport":{"type":"stdio"}},
            {"registryType":"pypi","identifier":"y","version":"0.1"}]"#,
    );
    let t = targets(&r);
    let s: Vec<_> = t.iter().map(|t| t.skip.clone()).collect();
    assert_eq!(
        s,
        [
            Some(SkipReason::UnsupportedPackageType("oci".into())),
            Some(SkipReason::UnsupportedPackageType("mcpb".into())),
            None,
            None
        ]
    );
    assert_eq!(s[0].as_ref().unwrap().as_str(), "unsupported-package-type");
    assert_eq!(
        t[2].kind,
        TargetKind::Package {
            ecosystem: Ecosystem::Npm,
            name: "@x/y".into(),
            version: Some("1.2.3".into()),
            transport: "stdio".into(),
        }
    );
    assert!(matches!(
        &t[3].kind,
        TargetKind::Package {
            ecosystem: Ecosystem::Pypi,
            ..
        }
    ));
    assert_eq!(r.packages[0].transport, "stdio");
    assert_eq!(r.packages[1].transport, "");
}

#[test]
fn skip_invalid_url() {
    for url in [
        "not a url",
        "https://",
        "ftp://x.example/",
        "//x.example/mcp",
    ] {
        let r = one_record(&format!(r#"[{{"type":"sse","url":"{url}"}}]"#), "[]");
        let s = skips(&r);
        assert_eq!(s, [Some(SkipReason::InvalidUrl)], "{url}");
        assert_eq!(s[0].as_ref().unwrap().as_str(), "invalid-url");
    }
}

#[test]
fn sse_and_streamable_http_are_crawled() {
    let r = one_record(
        r#"[{"type":"sse","url":"https://x.example/sse"},
            {"type":"streamable-http","url":"https://x.example/mcp","headers":[{"name":"X-Opt","isRequired":false}]}]"#,
        "[]",
    );
    assert_eq!(skips(&r), [None, None]);
    let t = targets(&r);
    assert_eq!(t[0].server, "a.b/c");
    assert_eq!(t[0].version, "1.0.0");
}

#[test]
fn templated_header_value_counts_as_needed() {
    // Real shape: 109 smithery remotes on 2025-12-18 declare this without `isRequired`.
    let r = one_record(
        r#"[{"type":"streamable-http","url":"https://server.smithery.ai/@x/y/mcp","headers":[
            {"description":"Bearer token for Smithery authentication","value":"Bearer {smithery_api_key}","name":"Authorization"},
            {"name":"Accept-Language","value":"en"}]}]"#,
        "[]",
    );
    let h = &r.remotes[0].headers;
    assert!(h[0].value_is_template && !h[0].is_required && h[0].is_needed());
    assert!(!h[1].is_needed());
    let (d, skip) = first_remote(&r);
    assert_eq!(skip, None);
    assert_eq!(sent(&d), [("Accept-Language", "en")]);
    assert_eq!(withheld(&d), [("Authorization", WithheldWhy::Secret)]);
    assert!(!format!("{r:?}{d:?}").contains("Bearer"));
}

// ---- URL templates ----

#[test]
fn templated_url_with_a_default_and_a_single_choice_is_filled() {
    let r = one_record(
        r#"[{"type":"streamable-http","url":"https://{tenant_id}.example.com/{region}/mcp",
            "variables":{"tenant_id":{"default":"acme","isRequired":true},
                         "region":{"choices":["eu-west"]}}}]"#,
        "[]",
    );
    let t = targets(&r).into_iter().next().unwrap();
    assert_eq!(t.skip, None);
    let TargetKind::Remote { url, declared, .. } = &t.kind else {
        panic!()
    };
    // The target keeps the published URL (its identity); dialling fills it in.
    assert_eq!(url, "https://{tenant_id}.example.com/{region}/mcp");
    assert_eq!(
        declared.variables,
        [
            ("tenant_id".to_owned(), "acme".to_owned()),
            ("region".to_owned(), "eu-west".to_owned())
        ]
    );
    assert_eq!(
        declared.dial_url(url),
        "https://acme.example.com/eu-west/mcp"
    );
}

#[test]
fn templated_url_without_a_usable_value_stays_skipped() {
    for (variables, why) in [
        (r#"{"tenant":{"isRequired":true}}"#, "no default"),
        (r#"{"tenant":{"choices":["a","b"]}}"#, "several choices"),
        (r#"{"tenant":{"default":"a","isSecret":true}}"#, "a secret"),
        (
            r#"{"tenant":{"default":"evil.example/x?"}}"#,
            "reserved characters",
        ),
        (r#"{"tenant":{"default":""}}"#, "empty"),
        (r#"{"tenant":{"default":7}}"#, "not a string"),
        (r#""tenant""#, "not an object"),
        (r#"{"other":{"default":"a"}}"#, "another variable"),
    ] {
        let r = one_record(
            &format!(
                r#"[{{"type":"streamable-http","url":"https://{{tenant}}.example.com/mcp","variables":{variables}}}]"#
            ),
            "[]",
        );
        assert_eq!(
            skips(&r),
            [Some(SkipReason::TemplatedUrl {
                variables: vec!["tenant".into()]
            })],
            "{why}"
        );
    }
}
