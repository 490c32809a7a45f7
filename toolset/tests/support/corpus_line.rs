//! One line of the labelled rules corpus (`tests/fixtures/rules/*.jsonl`), read as the corpus
//! test and the learned score's feature dump (`examples/score_features.rs`) both read it.

use toolmark_toolset::ToolSet;
use toolmark_toolset::json::{self, Json};

/// A corpus entry: a tool (as a one-tool set) or a server's instructions.
pub struct Line {
    pub id: String,
    pub class: Option<String>,
    /// The entry's server (`server:…`) or else its source (`source:…`): what cross-validation
    /// keeps together.
    pub group: String,
    pub set: ToolSet,
    pub instructions: Option<String>,
}

/// Line `n` (0-based, blank lines skipped) of `file`; panics naming the place on a bad line.
pub fn read(file: &str, n: usize, line: &str) -> Line {
    let members = json::parse_members(line, "").unwrap_or_else(|e| panic!("{file}:{}: {e}", n + 1));
    let get = |k: &str| members.iter().rev().find(|m| m.name.as_str() == Some(k));
    let str_of = |k: &str| {
        get(k).and_then(|m| match &m.value {
            Json::String(s) => Some(s.lossy().into_owned()),
            _ => None,
        })
    };
    let id = str_of("id").unwrap_or_else(|| format!("line {}", n + 1));
    let (set, instructions) = match get("tool") {
        Some(tool) => (
            ToolSet::of_raw(&[&line[tool.span.clone()]])
                .unwrap_or_else(|e| panic!("{file}: {id}: {e}")),
            None,
        ),
        None => (
            ToolSet::of_raw::<&str>(&[]).unwrap(),
            Some(str_of("instructions").unwrap_or_else(|| panic!("{file}: {id} has no tool"))),
        ),
    };
    let group = str_of("server")
        .map(|s| format!("server:{s}"))
        .or_else(|| str_of("source").map(|s| format!("source:{s}")))
        .unwrap_or_else(|| format!("id:{id}"));
    Line {
        id,
        class: str_of("class"),
        group,
        set,
        instructions,
    }
}
