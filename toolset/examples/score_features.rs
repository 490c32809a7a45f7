//! The learned score's features of every entry of the labelled corpus, for
//! `scripts/train-scorer`: one JSON line per entry, `{"file", "id", "label", "class", "group",
//! "kind", "words", "twin", "counts": [[bucket, count], …]}` (`words`: of prose, as the scan's minimum
//! counts them; `twin`: the poisoned entry a clean counterpart was made from).
//!
//! `cargo run --release -p toolmark-toolset --example score_features -- FILE.jsonl…`

use toolmark_toolset::rules;

#[path = "../tests/support/corpus_line.rs"]
mod corpus_line;

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
            let entry = corpus_line::read(&path, n, line);
            let (counter, kind) = match (entry.set.tools.first(), &entry.instructions) {
                (Some(tool), _) => (rules::tool_counter(tool), "tool"),
                (None, Some(text)) => (rules::instructions_counter(text), "instructions"),
                (None, None) => unreachable!("a corpus line is a tool or instructions"),
            };
            // A clean counterpart names the poisoned entry it was made from.
            let twin = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| {
                    v["source"]
                        .as_str()?
                        .strip_prefix("counterpart of ")
                        .map(str::to_owned)
                });
            let line = serde_json::json!({
                "file": file, "id": entry.id, "label": label, "class": entry.class, "twin": twin,
                "group": entry.group, "kind": kind, "words": counter.words(),
                "counts": counter.counts(),
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    print!("{out}");
}
