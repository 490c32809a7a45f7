//! A change as text for a terminal (what `toolmark diff` prints without `--json`): the class and
//! every signal that fired, then the changes tool by tool (added, removed, renamed, modified),
//! word-diff runs marked `[-old-]` and
//! `{+new+}`. A pure function of the [`Diff`] and the [`Classification`]. A change of a
//! server's instructions the same way ([`instructions_text`]). And a tool set's digests as
//! `toolmark digest` reports them ([`DigestReport`]).

use std::fmt::Write as _;

use crate::classify::{Class, Classification, Signal};
use crate::diff::{DescriptionDiff, Diff, SchemaDiff, ToolDiff};
use crate::instructions::InstructionsChange;
use crate::text::{EditOp, WordEdit};
use crate::{ToolSet, full, mtl1};

/// What `toolmark digest` says of one tool set: its tool count and both digests. Serialised
/// (its `--json` line), its members are in alphabetical order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestReport {
    /// The file it was read from, as given.
    pub file: String,
    /// The `toolmark/1` full digest.
    pub full: String,
    /// The MTL/1 digest, when the set has one.
    pub mtl1: Option<String>,
    /// The code of the MTL/1 error that left the set without one.
    pub mtl1_error: Option<String>,
    /// Number of tools.
    pub tools: usize,
    /// That MTL/1 error for people.
    #[serde(skip)]
    pub mtl1_message: Option<String>,
    /// Whether the listing is complete (no later page is missing), as the caller judged it.
    #[serde(skip)]
    pub complete: bool,
}

impl DigestReport {
    /// The report of `set`, read from `file`; `complete` says whether it is the last page.
    pub fn of(file: &str, set: &ToolSet, complete: bool) -> DigestReport {
        let mtl = mtl1::tool_set_digest(set);
        DigestReport {
            file: file.to_owned(),
            full: full::digest(set).to_string(),
            mtl1: mtl.as_ref().ok().map(ToString::to_string),
            mtl1_error: mtl.as_ref().err().map(|e| e.code.as_str().to_owned()),
            tools: set.tools.len(),
            mtl1_message: mtl.as_ref().err().map(ToString::to_string),
            complete,
        }
    }

    /// For a terminal: the file, then one line each for the tools, MTL/1 (digest or error) and
    /// the full digest, and a note when later pages are missing.
    pub fn text(&self) -> String {
        let mut out = format!("{}\n  tools  {}\n", self.file, self.tools);
        let mtl = self.mtl1.as_ref().or(self.mtl1_message.as_ref());
        let _ = writeln!(out, "  mtl1   {}", mtl.map_or("", String::as_str));
        let _ = writeln!(out, "  full   {}", self.full);
        if !self.complete {
            out.push_str("  note   the result carries a nextCursor: later pages are missing\n");
        }
        out
    }
}

/// The diff and classification as text for a terminal: the class and its signals first, then the
/// changes tool by tool. Word-diff runs are marked `[-old-]` and `{+new+}`.
pub fn text(d: &Diff, c: &Classification) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "class: {}", c.class.as_str());
    for s in &c.signals {
        signal_line(&mut out, s);
    }
    if c.signals_truncated > 0 {
        let _ = writeln!(out, "  … {} more signals", c.signals_truncated);
    }
    let list = |out: &mut String, label: &str, names: &[String], total: usize| {
        if total > 0 {
            let _ = writeln!(out, "{label} ({total}): {}", names.join(", "));
        }
    };
    list(&mut out, "added", &d.added, d.added_total);
    list(&mut out, "removed", &d.removed, d.removed_total);
    if d.renames_total > 0 {
        let _ = writeln!(out, "renamed ({}):", d.renames_total);
    }
    for r in &d.renames {
        let how = if r.identical {
            "identical but for the name".to_owned()
        } else {
            format!("description {}% similar", r.similarity)
        };
        let _ = writeln!(out, "  {} -> {}  ({how})", r.from, r.to);
        if let Some(t) = &r.changes {
            tool_lines(&mut out, t);
        }
    }
    if d.modified_total > 0 {
        let _ = writeln!(out, "modified ({}):", d.modified_total);
    }
    for t in &d.modified {
        let _ = writeln!(out, "  {}", t.name);
        tool_lines(&mut out, t);
    }
    if d.new_addresses_total > 0 {
        let values: Vec<&str> = d.new_addresses.iter().map(|a| a.value.as_str()).collect();
        let _ = writeln!(
            out,
            "new outside addresses ({}): {}",
            d.new_addresses_total,
            values.join(", ")
        );
    }
    if d.truncated {
        out.push_str("(output truncated: see the caps in toolset::diff)\n");
    }
    out
}

/// The changes of one tool (a modified one, or a renamed one beside its old definition), one
/// indented line each.
fn tool_lines(out: &mut String, t: &ToolDiff) {
    match &t.description {
        Some(DescriptionDiff::Words { ops }) => {
            let _ = writeln!(out, "    description: {}", word_runs(ops));
        }
        Some(DescriptionDiff::Snippets { old, new, .. }) => {
            let _ = writeln!(out, "    description (long): {old:?} -> {new:?}");
        }
        None => {}
    }
    let schema = |out: &mut String, label: &str, s: &Option<SchemaDiff>| {
        for ch in s.iter().flat_map(|s| &s.changes) {
            let _ = writeln!(
                out,
                "    {label} {}: {} -> {}",
                ch.path,
                ch.old.as_deref().unwrap_or("(absent)"),
                ch.new.as_deref().unwrap_or("(absent)")
            );
        }
    };
    schema(out, "inputSchema", &t.input_schema);
    schema(out, "outputSchema", &t.output_schema);
    for h in t.annotations.iter().flat_map(|a| &a.hints) {
        let how = |explicit: bool| if explicit { "" } else { " (default)" };
        let _ = writeln!(
            out,
            "    {}: {}{} -> {}{}",
            h.hint,
            h.old,
            how(h.old_explicit),
            h.new,
            how(h.new_explicit)
        );
    }
    let members = t
        .annotations
        .iter()
        .flat_map(|a| &a.members)
        .chain(&t.members);
    for m in members {
        let _ = writeln!(
            out,
            "    {}: {} -> {}",
            m.member,
            m.old.as_deref().unwrap_or("(absent)"),
            m.new.as_deref().unwrap_or("(absent)")
        );
    }
}

/// One signal as an indented line: class, rule, tool, path, old and new, detail.
fn signal_line(out: &mut String, s: &Signal) {
    SignalLine {
        class: s.class,
        rule: s.rule,
        subject: s.tool.as_ref().map(|t| format!("tool {t}")),
        path: s.path.as_deref(),
        old: s.old.as_deref(),
        new: s.new.as_deref(),
        detail: s.detail.as_deref(),
    }
    .write(out);
}

/// A signal's fields as one indented line writes them (a tool's signal here, an entry's in
/// `surface::diff::render`): class, rule, what it is about, path, old and new, detail.
pub(crate) struct SignalLine<'a> {
    /// The rule's class.
    pub(crate) class: Class,
    /// The rule's id.
    pub(crate) rule: &'a str,
    /// What it is about, as written (`tool read_file`, a prompt's name).
    pub(crate) subject: Option<String>,
    /// Where.
    pub(crate) path: Option<&'a str>,
    /// The old value.
    pub(crate) old: Option<&'a str>,
    /// The new value.
    pub(crate) new: Option<&'a str>,
    /// More about why it fired.
    pub(crate) detail: Option<&'a str>,
}

impl SignalLine<'_> {
    /// Append the line (with its newline) to `out`.
    pub(crate) fn write(&self, out: &mut String) {
        let _ = write!(out, "  {:<9} {}", self.class.as_str(), self.rule);
        if let Some(t) = &self.subject {
            let _ = write!(out, "  {t}");
        }
        if let Some(p) = self.path {
            let _ = write!(out, "  at {p}");
        }
        match (self.old, self.new) {
            (Some(o), Some(n)) => {
                let _ = write!(out, "  {o} -> {n}");
            }
            (None, Some(n)) => {
                let _ = write!(out, "  + {n}");
            }
            (Some(o), None) => {
                let _ = write!(out, "  - {o}");
            }
            (None, None) => {}
        }
        if let Some(detail) = self.detail {
            let _ = write!(out, "  ({detail})");
        }
        out.push('\n');
    }
}

/// A word diff as one line, removed runs as `[-old-]`, added runs as `{+new+}`.
pub(crate) fn word_runs(ops: &[WordEdit]) -> String {
    let mut line = String::new();
    for op in ops {
        match op.0 {
            EditOp::Equal => line.push_str(&op.1),
            EditOp::Delete => {
                let _ = write!(line, "[-{}-]", op.1);
            }
            EditOp::Insert => {
                let _ = write!(line, "{{+{}+}}", op.1);
            }
        }
    }
    line
}

/// A change of a server's instructions as text for a terminal: its class and signals (as
/// [`text`] prints them), then the word diff.
pub fn instructions_text(c: &InstructionsChange) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "instructions: {}", c.class.as_str());
    for s in &c.signals {
        signal_line(&mut out, s);
    }
    let _ = writeln!(out, "  diff: {}", word_runs(&c.diff));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolSet, classify, diff};

    fn change(old: &str, new: &str) -> String {
        let (old, new) = (
            ToolSet::parse(old.as_bytes()).unwrap(),
            ToolSet::parse(new.as_bytes()).unwrap(),
        );
        text(&diff::diff(&old, &new), &classify::classify(&old, &new))
    }

    #[test]
    fn a_digest_report_has_both_digests_or_the_mtl1_error_and_notes_missing_pages() {
        let set =
            ToolSet::parse(br#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#).unwrap();
        let r = DigestReport::of("a.json", &set, true);
        assert_eq!(r.tools, 1);
        assert!(r.mtl1.as_deref().unwrap().starts_with("sha256-"));
        assert_eq!(r.mtl1_error, None);
        let text = r.text();
        assert!(
            text.starts_with("a.json\n  tools  1\n  mtl1   sha256-"),
            "{text}"
        );
        assert!(!text.contains("note"));
        let fractional = br#"[{"name":"a","inputSchema":{"type":"object","maximum":1.5}}]"#;
        let r = DigestReport::of("b.json", &ToolSet::parse(fractional).unwrap(), false);
        assert_eq!(r.mtl1, None);
        assert!(r.mtl1_error.as_deref().unwrap().starts_with("MTL-"));
        assert!(r.text().contains("later pages are missing"));
    }

    #[test]
    fn a_description_edit_is_a_word_diff_under_its_tool() {
        let out = change(
            r#"[{"name":"read","description":"Read a file.","inputSchema":{"type":"object"}}]"#,
            r#"[{"name":"read","description":"Read a small file.","inputSchema":{"type":"object"}},{"name":"write","inputSchema":{"type":"object"}}]"#,
        );
        assert!(out.starts_with("class: "), "{out}");
        assert!(out.contains("added (1): write\n"), "{out}");
        assert!(out.contains("modified (1):\n  read\n"), "{out}");
        assert!(
            out.contains("    description: Read a {+small +}file."),
            "{out}"
        );
    }

    #[test]
    fn an_instructions_change_shows_its_signals_and_word_diff() {
        let c = crate::instructions::change(Some("Read files."), Some("Read all files.")).unwrap();
        assert_eq!(
            instructions_text(&c),
            "instructions: unsure\n  unsure    description-rewritten  at $['instructions']  \
             Read files. -> Read all files.  (a negation, modal, quantifier or number \
             changed)\n  diff: Read {+all +}files.\n"
        );
    }

    #[test]
    fn no_change_is_benign_and_lists_nothing() {
        let set = r#"[{"name":"read","inputSchema":{"type":"object"}}]"#;
        assert_eq!(change(set, set), "class: benign\n");
    }
}
