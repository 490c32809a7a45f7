//! MTL/1 against every published and derived vector (`histor-peer.md` §2.3) and against the
//! digests HISTOR 0.4.2 computes for the real tool sets in `fixtures/corpus/`.

use toolmark_toolset::mtl1::{self, MtlCode, REGISTRY_OFFICIAL, SubjectInfo};
use toolmark_toolset::{ToolSet, full};

fn set(text: &str) -> ToolSet {
    ToolSet::parse(text.as_bytes()).unwrap()
}

fn digest(text: &str) -> String {
    mtl1::tool_set_digest(&set(text)).unwrap().to_string()
}

fn code(text: &str) -> MtlCode {
    mtl1::tool_set_digest(&set(text)).unwrap_err().code
}

const CLEAN_TOOLS: &str = r#"[
  {"name": "get_weather", "description": "Return the current weather for a city.",
   "inputSchema": {"type": "object", "properties": {"city": {"type": "string", "description": "City name."}}, "required": ["city"]}},
  {"name": "list_cities", "description": "List the cities this server can report on.",
   "inputSchema": {"type": "object", "properties": {}}}
]"#;

#[test]
fn published_clean_tools_vector() {
    let s = set(CLEAN_TOOLS);
    assert_eq!(
        String::from_utf8(mtl1::canonical_bytes(&s).unwrap()).unwrap(),
        r#"[{"description":"Return the current weather for a city.","inputSchema":{"properties":{"city":{"description":"City name.","type":"string"}},"required":["city"],"type":"object"},"name":"get_weather"},{"description":"List the cities this server can report on.","inputSchema":{"properties":{},"type":"object"},"name":"list_cities"}]"#
    );
    assert_eq!(
        digest(CLEAN_TOOLS),
        "sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c="
    );
    let info = SubjectInfo {
        server_name: "com.example/weather".into(),
        registry: "urn:awr:mtl:1:registry:example".into(),
        server_version: Some("1.4.2".into()),
        transport: Some("stdio".into()),
        package: Some("npm:@example/weather-mcp@1.4.2".into()),
        endpoint: None,
    };
    let subject = mtl1::build_subject(&info, &s).unwrap();
    assert_eq!(
        String::from_utf8(subject.descriptor.clone()).unwrap(),
        r#"{"artifact":{"package":"npm:@example/weather-mcp@1.4.2","transport":"stdio"},"mtl":"1","server":{"name":"com.example/weather","registry":"urn:awr:mtl:1:registry:example","version":"1.4.2"},"toolSet":{"count":2,"digestSRI":"sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c=","names":["get_weather","list_cities"]}}"#
    );
    assert_eq!(
        subject.digest.to_string(),
        "sha256-nNR6utZJHl/EpVoffkzaYj4kA7LbJOig5Yz91lk6k1s="
    );
    assert_eq!(
        subject.urn,
        "urn:awr:mtl:1:subject:sha256:9cd47abad6491e5fc4a55a1f7e4cda623e2403b2db24e8a0e58cfdd6593a935b"
    );
}

#[test]
fn histor_style_remote_subject() {
    let info = SubjectInfo {
        server_name: "io.example/weather".into(),
        registry: REGISTRY_OFFICIAL.into(),
        transport: Some("streamable-http".into()),
        endpoint: Some("https://example.com/mcp".into()),
        ..Default::default()
    };
    let subject = mtl1::build_subject(&info, &set(CLEAN_TOOLS)).unwrap();
    assert_eq!(
        subject.digest.to_string(),
        "sha256-WSjrZjXMtUuczlRX5PHbZdbHtK9yXNmBy8wTuC0mRFM="
    );
}

#[test]
fn published_pattern_hit_vector() {
    // aicom examples/generate.py PATTERN_HIT_TOOLS (the tool definitions, as data).
    let tools = r#"[
      {"name": "create_issue",
       "description": "Create a tracker issue. Requires a personal access token with repo scope.",
       "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"},
         "api_key": {"type": "string", "description": "Token used to authenticate."}},
         "required": ["repo", "api_key"]}},
      {"name": "list_files", "description": "List files in a directory. Returns names instead of full paths.",
       "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
    ]"#;
    let s = set(tools);
    assert_eq!(
        mtl1::tool_set_digest(&s).unwrap().to_string(),
        "sha256-Ei6TrbxC30M3swU6D97xRgWdfw3sN7XuAI+fKx776mc="
    );
    let info = SubjectInfo {
        server_name: "com.example/tracker".into(),
        registry: "urn:awr:mtl:1:registry:example".into(),
        server_version: Some("0.9.0".into()),
        transport: Some("stdio".into()),
        package: Some("npm:@example/tracker-mcp@0.9.0".into()),
        endpoint: None,
    };
    assert_eq!(
        mtl1::build_subject(&info, &s).unwrap().digest.to_string(),
        "sha256-NE3ZizGD2jr6qk05w3CAAaZ8G+l85C93fxp6miaYv9U="
    );
}

#[test]
fn derived_vectors() {
    let t = r#"[{"name":"Z"},{"name":"a","outputSchema":{"type":"object"}},{"name":"é","description":3}]"#;
    assert_eq!(
        String::from_utf8(mtl1::canonical_bytes(&set(t)).unwrap()).unwrap(),
        r#"[{"description":"","inputSchema":{},"name":"Z"},{"description":"","inputSchema":{},"name":"a","outputSchema":{"type":"object"}},{"description":"","inputSchema":{},"name":"é"}]"#
    );
    assert_eq!(
        digest(t),
        "sha256-jBmAdQg7pVQY3G9LSuuLqYNZgeIvPj6aGs+tFD9FwkY="
    );
    let info = SubjectInfo {
        server_name: "n".into(),
        registry: "r".into(),
        transport: Some("streamable-http".into()),
        endpoint: Some("https://x/mcp".into()),
        ..Default::default()
    };
    assert_eq!(
        mtl1::build_subject(&info, &set(t))
            .unwrap()
            .digest
            .to_string(),
        "sha256-41DXLKCPm9HQmBL+oEUJtCmWCb+rKa4TVFc1q3j0Mbg="
    );
    assert_eq!(
        digest(r#"[{"name":"\uFFFF"},{"name":"\uD83D\uDE00"}]"#),
        "sha256-jv7e6b6e0Yxs8ablwjByPIIySbOKsUcIMijG3KCe1Pc="
    );
    assert_eq!(
        digest(r#"[{"name":"t","description":"d","inputSchema":{}}]"#),
        "sha256-gR+WaUTb/tFzHBgQZZW4SEjmCz1dRNLJr0jSFXsqqcQ="
    );
    assert_eq!(
        digest(r#"[{"name":"t","description":"d","inputSchema":{},"outputSchema":{}}]"#),
        "sha256-dKDPh2QQj6po/t47/YyLo93qfMDwcOWQoa2w6rVc+mo="
    );
}

#[test]
fn error_vectors() {
    assert_eq!(code("[]"), MtlCode::Subj002);
    assert_eq!(code(r#"[{"name":"a"},{"name":"a"}]"#), MtlCode::Subj003);
    assert_eq!(code(r#"[{"description":"no name"}]"#), MtlCode::Subj001);
    assert_eq!(code(r#"["not an object"]"#), MtlCode::Subj001);
    assert_eq!(code(r#"[{"name":""}]"#), MtlCode::Subj001);
    assert_eq!(code(r#"[{"name":7}]"#), MtlCode::Subj001);
    for number in [
        "0.5",
        "1.0",
        "1e2",
        "-0.0",
        "9007199254740992",
        "-9223372036854775808",
        "1e400",
        "-1E400",
    ] {
        let t = format!(r#"[{{"name":"a","inputSchema":{{"minimum":{number}}}}}]"#);
        assert_eq!(code(&t), MtlCode::Num001, "{number}");
    }
    // -0 is an integer token: accepted and written as 0.
    assert_eq!(
        digest(r#"[{"name":"a","inputSchema":{"minimum":-0}}]"#),
        digest(r#"[{"name":"a","inputSchema":{"minimum":0}}]"#)
    );
    // A float in a member MTL/1 drops does not matter, even one beyond a double's range.
    assert!(mtl1::tool_set_digest(&set(r#"[{"name":"a","annotations":{"x":0.5}}]"#)).is_ok());
    assert_eq!(
        digest(r#"[{"name":"a","annotations":{"priority":1e400}}]"#),
        "sha256-mJLo0lgIeJfnpcEC1nxqVm59cRh0urbq1nAY+yhtLLQ="
    );
    // An unpaired surrogate is not canonicalizable: SUBJ-001.
    assert_eq!(code(r#"[{"name":"a\ud800"}]"#), MtlCode::Subj001);
    assert_eq!(
        code(r#"[{"name":"a","description":"\udc00"}]"#),
        MtlCode::Subj001
    );
    // Error order: empty first; then per entry; then duplicates; then canonicalisation.
    assert_eq!(
        code(r#"[{"name":"a"},{"name":"a"},{"x":1}]"#),
        MtlCode::Subj001
    );
    assert_eq!(
        code(r#"[{"name":"a","inputSchema":{"m":0.5}},{"name":"a"}]"#),
        MtlCode::Subj003
    );
    // Canonical order decides between two canonicalisation errors: "b" < "c".
    assert_eq!(
        code(r#"[{"name":"c","description":"\ud800"},{"name":"b","inputSchema":{"m":0.5}}]"#),
        MtlCode::Num001
    );
    assert_eq!(
        code(r#"[{"name":"b","description":"\ud800","inputSchema":{"m":0.5}}]"#),
        MtlCode::Subj001
    );
}

#[test]
fn num001_subject_has_names_and_no_digest() {
    let s = set(r#"[{"name":"b","inputSchema":{"minimum":0.5}},{"name":"a"}]"#);
    let info = SubjectInfo {
        server_name: "n".into(),
        registry: "r".into(),
        ..Default::default()
    };
    let subject = mtl1::build_subject(&info, &s).unwrap();
    assert_eq!(subject.tool_set_digest, None);
    assert_eq!(subject.hazard.unwrap().code, MtlCode::Num001);
    assert_eq!(
        String::from_utf8(subject.descriptor).unwrap(),
        r#"{"mtl":"1","server":{"name":"n","registry":"r"},"toolSet":{"count":2,"names":["a","b"]}}"#
    );
    // SUBJ errors are errors for build_subject and names-only for the fallback.
    let bad = set(r#"[{"name":"x\u0000"},{"name":"x\u0000"},{"nameless":1}]"#);
    assert_eq!(
        mtl1::build_subject(&info, &bad).unwrap_err().code,
        MtlCode::Subj001
    );
    let fb = mtl1::fallback_subject(&info, &bad);
    assert_eq!(
        String::from_utf8(fb.descriptor).unwrap(),
        "{\"mtl\":\"1\",\"server\":{\"name\":\"n\",\"registry\":\"r\"},\"toolSet\":{\"count\":3,\"names\":[\"x\u{FFFD}\",\"x\u{FFFD}\"]}}"
    );
}

/// Digests HISTOR 0.4.2 (`histor.subject.tool_set_digest`) computes for the corpus files.
#[test]
fn corpus_digests_equal_histor() {
    for (file, want) in [
        (
            "docker-mcp-registry/alfresco.tools.json",
            "sha256-Fdn5/a8MXmQf39f4dDNpQEJoPey0nAUgHZVs6CSdMr0=",
        ),
        (
            "docker-mcp-registry/okta-mcp-server.tools.json",
            "sha256-SZwjTezzva03NRo/LPlu/ywOP7jAK5qy5cvf/+vt4qo=",
        ),
        (
            "mcp-proxy-snapshots/cloudflare-docs.json",
            "sha256-GVeRFCVwuKfkYPy4TYZLp0i9yJeWt5wW1Okcf9/lQe0=",
        ),
        (
            "mcp-proxy-snapshots/mcp-server-fetch.json",
            "sha256-UX5h7TwSMXQ4t/tcewu7uj03FcgRXWV/oVrjYMHdbAg=",
        ),
        (
            "mcp-proxy-snapshots/server-filesystem.json",
            "sha256-gCp/D3U41G8YPpQCMvgUI3cI/mTsDovXvUsxNqWj4EI=",
        ),
        (
            "mcp-proxy-snapshots/server-memory.json",
            "sha256-/HLlz71/XCABiR+3KWSOdikJL0mBm8MlErxJZGTjQ5I=",
        ),
        (
            "mcp-proxy-snapshots/server-puppeteer.json",
            "sha256-4XqVerlM53pK/2QwFYJ6jyQyLEQBli6Ba2lOml3ux+g=",
        ),
    ] {
        let path = format!(
            "{}/tests/fixtures/corpus/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap();
        let s = ToolSet::parse(&bytes).unwrap();
        assert_eq!(
            mtl1::tool_set_digest(&s).unwrap().to_string(),
            want,
            "{file}"
        );
        // Every corpus set also has a full digest, different from MTL/1 where members were dropped.
        let _ = full::digest(&s);
    }
}
