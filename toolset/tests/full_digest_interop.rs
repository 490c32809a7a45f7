//! The `toolmark/1` full digest, the per-kind digests of the surface and the `toolmark-tool/1`
//! tool index recomputed by someone else's RFC 8785 implementation: Node.js with the npm
//! `canonicalize` package (`tests/interop/full_digest.cjs`), over the corpus, the documented
//! vectors and thousands of generated numbers and strings (as tool sets, and as pages of
//! prompts, resources, templates and app contents). Agreement shows the definitions in
//! docs/digests.md are enough to reproduce our digests without our code.
//!
//! Needs `node` and `TOOLMARK_NODE_DIR`, a directory whose `node_modules` holds `canonicalize`
//! (`scripts/interop-node` installs it). Without it the test fails under CI and is skipped
//! (loudly) elsewhere.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;
use toolmark_toolset::surface::items::Items;
use toolmark_toolset::surface::{Kind, OK, RawList, RawRead};
use toolmark_toolset::{ToolSet, full};

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `s` as a JSON string literal (controls escaped as `\u00xx`, the rest literal).
fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A tool set whose `_meta` holds `n` doubles of every magnitude, spelled in several ways, and
/// strings with escapes, controls and astral characters.
fn generated(seed: u64, n: usize) -> String {
    let mut s = seed;
    let mut numbers = Vec::with_capacity(n);
    while numbers.len() < n {
        let bits = splitmix(&mut s);
        let f = match bits % 4 {
            0 => f64::from_bits(bits),
            1 => (bits >> 11) as f64 / 1e6,
            2 => (bits % 2_000_001) as f64 - 1e6,
            _ => ((bits >> 12) as f64) * 1e-300,
        };
        if !f.is_finite() {
            continue;
        }
        numbers.push(if bits % 3 == 0 {
            format!("{f:e}")
        } else {
            format!("{f:?}")
        });
    }
    let strings: Vec<String> = (0..200)
        .map(|i| {
            let c = char::from_u32((splitmix(&mut s) % 0x2FFFF) as u32).unwrap_or('\u{FFFD}');
            json_str(&format!("s{i}\u{1}\"\\\t{c}\u{2028}\u{1F600}\u{7f}"))
        })
        .collect();
    format!(
        r#"[{{"name":"n","_meta":{{"numbers":[{}],"strings":[{}]}}}},{{"name":"\ud83d\ude00"}},{{"name":"\uffff"}}]"#,
        numbers.join(","),
        strings.join(",")
    )
}

/// The same entries as a page of another kind: `{"<member>": <entries>}` with every `"name":`
/// member renamed to the kind's key (a textual rename: the generated sets and vectors hold no
/// string with that text, and a renamed schema property is as good an input).
fn as_kind(tools_array: &str, kind: Kind) -> String {
    let (member, key) = match kind {
        Kind::Prompts => ("prompts", "name"),
        Kind::Resources => ("resources", "uri"),
        Kind::Templates => ("resourceTemplates", "uriTemplate"),
        Kind::AppPages => ("contents", "uri"),
        Kind::Card => unreachable!("the card is not a list"),
    };
    format!(
        r#"{{"{member}":{}}}"#,
        tools_array.replace(r#""name":"#, &format!(r#""{key}":"#))
    )
}

/// Our digest of a page of `kind`.
fn kind_digest(kind: Kind, page: String) -> String {
    let items = if kind == Kind::AppPages {
        Items::of_reads(&[RawRead {
            uri: "ui://x".into(),
            status: OK.into(),
            detail: String::new(),
            result: Some(page),
        }])
    } else {
        Items::of_list(
            kind,
            &RawList {
                status: OK.into(),
                detail: String::new(),
                pages: vec![page],
            },
        )
    };
    items.unwrap().digest().to_string()
}

#[test]
fn node_canonicalize_agrees() {
    let Some(node_dir) = std::env::var_os("TOOLMARK_NODE_DIR") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "TOOLMARK_NODE_DIR is not set: CI must run the Node.js interop test (scripts/interop-node)"
        );
        eprintln!(
            "SKIPPED node_canonicalize_agrees: set TOOLMARK_NODE_DIR (see scripts/interop-node)"
        );
        return;
    };
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = std::env::temp_dir().join(format!("toolmark-interop-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["docker-mcp-registry", "mcp-proxy-snapshots"] {
        for e in std::fs::read_dir(manifest.join("tests/fixtures/corpus").join(dir)).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    let vectors = [
        "[]",
        r#"[{"name":"x","v":2},3,{"name":"x","v":1},{"name":"\ud800"},{"description":"no name"}]"#,
        r#"[{"name":"b","annotations":{"readOnlyHint":true},"inputSchema":{"minimum":0.50,"maximum":1E2}},{"name":"a","_meta":{"v":1.0}}]"#,
        r#"[{"name":"big","_meta":{"v":[1e400,-1E400,1e-400,-0,9223372036854775808,-9223372036854775808]}}]"#,
    ];
    for (i, v) in vectors.iter().enumerate() {
        let p = tmp.join(format!("vector-{i}.json"));
        std::fs::write(&p, v).unwrap();
        files.push(p);
    }
    for seed in 1..=8u64 {
        let p = tmp.join(format!("generated-{seed}.json"));
        std::fs::write(&p, generated(seed, 2_000)).unwrap();
        files.push(p);
    }
    // The same arrays as pages of every other kind: the vectors, two generated sets and two
    // corpus sets (their tools' exact texts).
    let corpus = [
        "docker-mcp-registry/okta-mcp-server.tools.json",
        "mcp-proxy-snapshots/server-filesystem.json",
    ]
    .map(|f| {
        let set =
            ToolSet::parse(&std::fs::read(manifest.join("tests/fixtures/corpus").join(f)).unwrap())
                .unwrap();
        let raw: Vec<&str> = set.tools.iter().map(|t| &*t.raw).collect();
        format!("[{}]", raw.join(","))
    });
    let arrays: Vec<String> = vectors
        .iter()
        .map(|v| v.to_string())
        .chain([generated(101, 500), generated(102, 500)])
        .chain(corpus)
        .collect();
    let mut kinds: Vec<(PathBuf, Kind, String)> = Vec::new();
    for (i, array) in arrays.iter().enumerate() {
        for kind in [
            Kind::Prompts,
            Kind::Resources,
            Kind::Templates,
            Kind::AppPages,
        ] {
            let page = as_kind(array, kind);
            let p = tmp.join(format!("{}-{i}.json", kind.as_str()));
            std::fs::write(&p, &page).unwrap();
            kinds.push((p, kind, page));
        }
    }
    let out = Command::new("node")
        .arg(manifest.join("tests/interop/full_digest.cjs"))
        .args(&files)
        .args(kinds.iter().map(|k| &k.0))
        .env("NODE_PATH", Path::new(&node_dir).join("node_modules"))
        .output()
        .expect("node runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "node failed: {}",
        &stderr[stderr.len().saturating_sub(1500)..]
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len() + kinds.len());
    for (file, line) in files.iter().zip(&lines) {
        // "<file> <full digest> <tool index digest>"
        let mut theirs = line.rsplitn(3, ' ');
        let (index, digest) = (theirs.next().unwrap(), theirs.next().unwrap());
        let set = ToolSet::parse(&std::fs::read(file).unwrap()).unwrap();
        assert_eq!(full::digest(&set).to_string(), digest, "{}", file.display());
        assert_eq!(
            full::ToolIndex::of(&set).digest.to_string(),
            index,
            "tool index of {}",
            file.display()
        );
    }
    for ((file, kind, page), line) in kinds.into_iter().zip(&lines[files.len()..]) {
        let theirs = line.rsplit(' ').next().unwrap();
        assert_eq!(kind_digest(kind, page), theirs, "{}", file.display());
    }
    std::fs::remove_dir_all(&tmp).ok();
}
