//! The `toolmark/1` full digest: its vectors (as in docs/digests.md) and its properties. Key
//! order, whitespace, string escaping and the spelling of a number do not change it; any change
//! to a byte-significant value does.

use proptest::prelude::*;
use toolmark_toolset::json::{Json, Str};
use toolmark_toolset::{ToolSet, full, mtl1};

fn digest(text: &str) -> String {
    full::digest(&ToolSet::parse(text.as_bytes()).unwrap()).to_string()
}

fn canonical(text: &str) -> String {
    String::from_utf8(full::canonical_bytes(
        &ToolSet::parse(text.as_bytes()).unwrap(),
    ))
    .unwrap()
}

/// The vectors published in docs/digests.md.
#[test]
fn documented_vectors() {
    // 1. A plain set: the full canonical form equals MTL/1's when tools have only the four members.
    let plain = r#"[{"name":"t","description":"d","inputSchema":{}}]"#;
    assert_eq!(
        canonical(plain),
        r#"[{"description":"d","inputSchema":{},"name":"t"}]"#
    );
    assert_eq!(
        digest(plain),
        "sha256-gR+WaUTb/tFzHBgQZZW4SEjmCz1dRNLJr0jSFXsqqcQ="
    );

    // 2. Members MTL/1 drops are covered, numbers are ECMAScript-serialised.
    let rich = r#"[{"name":"b","title":"B","annotations":{"readOnlyHint":true},
                   "inputSchema":{"type":"object","properties":{"x":{"type":"number","minimum":0.50,"maximum":1E2}}}},
                  {"name":"a","_meta":{"v":1.0}}]"#;
    assert_eq!(
        canonical(rich),
        r#"[{"_meta":{"v":1},"name":"a"},{"annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"x":{"maximum":100,"minimum":0.5,"type":"number"}},"type":"object"},"name":"b","title":"B"}]"#
    );
    assert_eq!(
        digest(rich),
        "sha256-qExqRJSRuWgV5QxnB+FB89qdM59MSO0xu0Cm+u1b+NM="
    );
    assert_eq!(
        mtl1::tool_set_digest(&ToolSet::parse(rich.as_bytes()).unwrap())
            .unwrap_err()
            .code
            .as_str(),
        "MTL-NUM-001"
    );

    // 3. What MTL/1 refuses still has a full digest: empty, duplicates, unnamed, lone surrogate.
    assert_eq!(canonical("[]"), "[]");
    assert_eq!(
        digest("[]"),
        "sha256-T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqHPC8RFhICuUU="
    );
    let odd =
        r#"[{"name":"x","v":2},3,{"name":"x","v":1},{"name":"\ud800"},{"description":"no name"}]"#;
    assert_eq!(
        canonical(odd),
        r#"[3,{"description":"no name"},{"name":"x","v":1},{"name":"x","v":2},{"name":"\ud800"}]"#
    );
    assert_eq!(
        digest(odd),
        "sha256-q1XMZMfuGQHZUlD+L9p1VWTXvxz+DeHaFw5NsucLGaE="
    );
}

#[test]
fn annotation_change_moves_full_but_not_mtl1() {
    let a = r#"[{"name":"rm","inputSchema":{},"annotations":{"destructiveHint":false}}]"#;
    let b = r#"[{"name":"rm","inputSchema":{},"annotations":{"destructiveHint":true}}]"#;
    let (sa, sb) = (
        ToolSet::parse(a.as_bytes()).unwrap(),
        ToolSet::parse(b.as_bytes()).unwrap(),
    );
    assert_eq!(
        mtl1::tool_set_digest(&sa).unwrap(),
        mtl1::tool_set_digest(&sb).unwrap()
    );
    assert_ne!(full::digest(&sa), full::digest(&sb));
}

/// A JSON value with a generator of semantically equal renderings.
fn leaf() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        (-1_000_000i64..1_000_000).prop_map(|n| Json::Number(n.to_string().into())),
        (-1000.0f64..1000.0).prop_map(|f| Json::Number(format!("{f}").into())),
        "[a-z\u{e9}\u{1F600}\u{FFFF} \"\\\\\n\t\u{1}]{0,12}"
            .prop_map(|s| Json::String(Str::Text(s.into()))),
    ]
}

fn value() -> impl Strategy<Value = Json> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
            prop::collection::btree_map("[a-zA-Z_$\u{e9}\u{1F600}]{1,8}", inner, 0..6).prop_map(
                |m| {
                    Json::Object(
                        m.into_iter()
                            .map(|(k, v)| (Str::Text(k.into()), v))
                            .collect(),
                    )
                }
            ),
        ]
    })
}

fn tools() -> impl Strategy<Value = Vec<Json>> {
    prop::collection::vec(
        ("[a-z_]{1,6}", value()).prop_map(|(name, schema)| {
            Json::Object(vec![
                ("name".into(), Json::String(Str::Text(name.into()))),
                ("inputSchema".into(), schema),
                ("title".into(), Json::String("T".into())),
            ])
        }),
        0..6,
    )
}

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Render `v` as JSON text, with members in an order chosen by `seed`, whitespace, escaped
/// characters and alternative number spellings (`2` as `2.0` or `20e-1`), all meaning the same.
fn render(v: &Json, seed: &mut u64, out: &mut String) {
    let mut next = || xorshift(seed);
    let ws = [" ", "", "\n  ", "\t"];
    out.push_str(ws[(next() % 4) as usize]);
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(t) => {
            let f: f64 = t.parse().unwrap();
            match next() % 3 {
                0 => out.push_str(t),
                1 if t.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
                    out.push_str(&format!("{t}.0"))
                }
                _ => out.push_str(&format!("{:e}", f)),
            }
        }
        Json::String(s) => {
            out.push('"');
            for c in s.as_str().unwrap().chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
                    c if next() % 3 == 0 => {
                        let mut buf = [0u16; 2];
                        for u in c.encode_utf16(&mut buf) {
                            out.push_str(&format!("\\u{u:04x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                render(item, seed, out);
            }
            out.push(']');
        }
        Json::Object(members) => {
            let mut order: Vec<usize> = (0..members.len()).collect();
            for i in (1..order.len()).rev() {
                let j = (next() % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
            out.push('{');
            for (n, &i) in order.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                render(&Json::String(members[i].0.clone()), seed, out);
                out.push(':');
                render(&members[i].1, seed, out);
            }
            out.push('}');
        }
    }
}

fn text_of(tools: &[Json], seed: u64) -> String {
    let mut seed = seed | 1;
    let mut out = String::new();
    render(&Json::Array(tools.to_vec()), &mut seed, &mut out);
    out
}

/// Change one leaf somewhere in `v` (the `pick`-th leaf, counted depth-first). Returns whether a
/// leaf was changed.
fn mutate(v: &mut Json, pick: &mut usize) -> bool {
    match v {
        Json::Array(items) => items.iter_mut().any(|i| mutate(i, pick)),
        Json::Object(members) => members.iter_mut().any(|(_, m)| mutate(m, pick)),
        leaf => {
            if *pick > 0 {
                *pick -= 1;
                return false;
            }
            *leaf = match leaf {
                Json::String(s) => Json::String(Str::Text(format!("{s}!").into())),
                Json::Number(t) => {
                    Json::Number(format!("{}", t.parse::<f64>().unwrap() + 1.0).into())
                }
                Json::Bool(b) => Json::Bool(!*b),
                _ => Json::Bool(false),
            };
            true
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn renderings_of_one_set_share_a_digest(tools in tools(), s1 in any::<u64>(), s2 in any::<u64>()) {
        prop_assert_eq!(digest(&text_of(&tools, s1)), digest(&text_of(&tools, s2)));
    }

    #[test]
    fn tool_order_does_not_matter(mut tools in tools(), s in any::<u64>()) {
        let before = digest(&text_of(&tools, s));
        tools.reverse();
        prop_assert_eq!(before, digest(&text_of(&tools, s)));
    }

    #[test]
    fn any_value_change_moves_the_digest(tools in tools(), pick in 0usize..64, s in any::<u64>()) {
        let mut changed = tools.clone();
        let mut p = pick;
        if changed.iter_mut().any(|t| mutate(t, &mut p)) {
            prop_assert_ne!(digest(&text_of(&tools, s)), digest(&text_of(&changed, s)));
        }
    }

    #[test]
    fn adding_a_member_moves_the_digest(tools in tools(), s in any::<u64>()) {
        prop_assume!(!tools.is_empty());
        let mut changed = tools.clone();
        if let Json::Object(m) = &mut changed[0] {
            m.push(("_meta".into(), Json::Null));
        }
        prop_assert_ne!(digest(&text_of(&tools, s)), digest(&text_of(&changed, s)));
    }
}
