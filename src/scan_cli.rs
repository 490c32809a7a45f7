//! `toolmark scan FILE... [--json]`: the rule set (`toolmark-rules/N`) over tool-set files,
//! offline. A file is read in any shape `digest` reads (a `tools/list` result, a bare array, a
//! snapshot wrapper, a JSON-RPC response), or as one bare tool object (`{"name": …}`), or as an
//! `initialize` result (`{"instructions": …}`, also inside a JSON-RPC response). The
//! `instructions` of a snapshot or an `initialize` result are scanned with the tools.

use anyhow::{Context, Result, bail};
use serde_json::json;
use std::path::{Path, PathBuf};
use toolmark_toolset::json::{self, Json};
use toolmark_toolset::rules::{self, Match};
use toolmark_toolset::text::is_format_char;
use toolmark_toolset::{ToolSet, legs};

/// At most this many characters of a match are shown in the text output.
const EXCERPT_MAX_CHARS: usize = 80;

/// A file read for scanning: its tools and the server's instructions, if it holds them.
struct Input {
    set: ToolSet,
    instructions: Option<String>,
}

/// The `instructions` string of an object, of its `result` (JSON-RPC) or of its
/// `server_info`/`server` member (snapshot wrappers).
fn instructions_of(v: &Json) -> Option<String> {
    let direct = |v: &Json| {
        v.get("instructions")
            .and_then(Json::as_str)
            .map(str::to_owned)
    };
    direct(v)
        .or_else(|| v.get("result").and_then(direct))
        .or_else(|| v.get("server_info").and_then(direct))
        .or_else(|| v.get("server").and_then(direct))
}

fn read(path: &Path) -> Result<Input> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let set_error = match ToolSet::parse(&bytes) {
        Ok(set) => {
            let instructions = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|t| json::parse(t.trim_start_matches('\u{feff}')).ok())
                .as_ref()
                .and_then(instructions_of);
            return Ok(Input { set, instructions });
        }
        Err(e) => e,
    };
    // Not a tool set: a bare tool, or an initialize result.
    let text = std::str::from_utf8(&bytes)
        .ok()
        .map(|t| t.trim_start_matches('\u{feff}').trim());
    if let Some(text) = text {
        if let Ok(v @ Json::Object(_)) = json::parse(text) {
            if v.get("name").and_then(Json::as_str).is_some() {
                let set = ToolSet::of_raw(&[text]).with_context(|| path.display().to_string())?;
                return Ok(Input {
                    set,
                    instructions: None,
                });
            }
            if let Some(instructions) = instructions_of(&v) {
                let set = ToolSet::of_raw::<&str>(&[]).expect("an empty set parses");
                return Ok(Input {
                    set,
                    instructions: Some(instructions),
                });
            }
        }
    }
    bail!(
        "{}: {set_error} (nor a tool object with a \"name\", nor an initialize result with \"instructions\")",
        path.display()
    )
}

/// `s` safe for a terminal: control and format characters (escapes, bidi controls, zero-width
/// and tag characters) written as `\u{…}`, everything else as is.
fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || is_format_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The matched characters of `m`, cut at [`EXCERPT_MAX_CHARS`], escaped for a terminal.
fn excerpt(input: &Input, m: &Match) -> Option<String> {
    let text = match &m.tool {
        Some(name) => rules::field_text(input.set.get(name)?, &m.field)?,
        None if m.field == "$['instructions']" => input.instructions.clone()?,
        None => return None,
    };
    let len = m.span[1].saturating_sub(m.span[0]);
    let shown: String = text
        .chars()
        .skip(m.span[0])
        .take(len.min(EXCERPT_MAX_CHARS))
        .collect();
    let more = if len > EXCERPT_MAX_CHARS { "…" } else { "" };
    Some(format!("\"{}\"{more}", printable(&shown)))
}

fn text_report(file: &str, input: &Input, scan: &rules::Scan) -> String {
    let mut out = format!(
        "{file}: {} tools{}, {} block, {} advise ({})\n",
        input.set.tools.len(),
        if input.instructions.is_some() {
            " and instructions"
        } else {
            ""
        },
        scan.block,
        scan.advise,
        scan.rules
    );
    for m in &scan.matches {
        let tool = m
            .tool
            .as_deref()
            .map_or_else(|| "(instructions)".to_owned(), printable);
        out.push_str(&format!(
            "  {:<6} {:<28} {} {} [{}..{}]",
            m.tier.as_str(),
            m.code,
            tool,
            printable(&m.field),
            m.span[0],
            m.span[1]
        ));
        if let Some(x) = excerpt(input, m) {
            out.push_str(&format!(" {x}"));
        }
        out.push('\n');
    }
    if scan.truncated > 0 {
        out.push_str(&format!("  … {} more matches not listed\n", scan.truncated));
    }
    out
}

fn json_report(file: &str, input: &Input, scan: &rules::Scan) -> serde_json::Value {
    let mut legs = serde_json::Map::new();
    for t in legs::set_legs(&input.set) {
        let list: Vec<_> = t
            .legs
            .iter()
            .map(|l| json!({"leg": l.leg, "certainty": l.certainty}))
            .collect();
        legs.insert(t.tool, json!(list));
    }
    json!({
        "file": file,
        "rules": scan.rules,
        "flagged": scan.flagged(),
        "block": scan.block,
        "advise": scan.advise,
        "truncated": scan.truncated,
        "matches": scan.matches,
        "legs": legs,
    })
}

/// Scan every file; a file that cannot be read or parsed is reported on stderr and makes the
/// exit status non-zero, the others are still scanned. A flagged set is not an error. Returns
/// whether every file was read.
pub fn run(files: &[PathBuf], as_json: bool) -> Result<bool> {
    let mut all_ok = true;
    for path in files {
        let input = match read(path) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("toolmark: {e:#}");
                all_ok = false;
                continue;
            }
        };
        let scan = rules::scan(&input.set, input.instructions.as_deref());
        let file = path.display().to_string();
        if as_json {
            println!(
                "{}",
                serde_json::to_string(&json_report(&file, &input, &scan))?
            );
        } else {
            print!("{}", text_report(&file, &input, &scan));
        }
    }
    Ok(all_ok)
}
