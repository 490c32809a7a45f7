//! The learned score's features of every entry of the labelled corpus, for
//! `scripts/train-scorer`: one JSON line per entry, `{"file", "id", "label", "class", "group",
//! "kind", "counts": [[bucket, count], …]}`.
//!
//! `cargo run --release -p toolmark-toolset --example score_features -- FILE.jsonl…`

use toolmark_toolset::ToolSet;
use toolmark_toolset::json::{self, Json};
use toolmark_toolset::rules;

fn main() {
    let mut out = String::new();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let file = std::path::Path::new(&path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(&path)
            .to_owned();
        let label = u8::from(file.starts_with("poisoned"));
        for (n, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            let members =
                json::parse_members(line, "").unwrap_or_else(|e| panic!("{path}:{}: {e}", n + 1));
            let get = |k: &str| members.iter().rev().find(|m| m.name.as_str() == Some(k));
            let str_of = |k: &str| {
                get(k).and_then(|m| match &m.value {
                    Json::String(s) => Some(s.lossy().into_owned()),
                    _ => None,
                })
            };
            let id = str_of("id").unwrap_or_else(|| format!("line {}", n + 1));
            let (counter, kind) = match get("tool") {
                Some(tool) => {
                    let set = ToolSet::of_raw(&[&line[tool.span.clone()]])
                        .unwrap_or_else(|e| panic!("{path}: {id}: {e}"));
                    (rules::tool_counter(&set.tools[0]), "tool")
                }
                None => (
                    rules::instructions_counter(
                        &str_of("instructions")
                            .unwrap_or_else(|| panic!("{path}: {id} has no tool")),
                    ),
                    "instructions",
                ),
            };
            let group = str_of("server")
                .map(|s| format!("server:{s}"))
                .or_else(|| str_of("source").map(|s| format!("source:{s}")))
                .unwrap_or_else(|| format!("id:{id}"));
            let line = serde_json::json!({
                "file": file, "id": id, "label": label, "class": str_of("class"),
                "group": group, "kind": kind, "counts": counter.counts(),
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    print!("{out}");
}
