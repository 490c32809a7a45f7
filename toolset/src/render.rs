//! A change as text for a terminal (what `toolmark diff` prints without `--json`): the class and
//! every signal that fired, then the changes tool by tool, word-diff runs marked `[-old-]` and
//! `{+new+}`. A pure function of the [`Diff`] and the [`Classification`].

use std::fmt::Write as _;

use crate::classify::Classification;
use crate::diff::{DescriptionDiff, Diff, SchemaDiff};
use crate::text::EditOp;

/// The diff and classification as text for a terminal: the class and its signals first, then the
/// changes tool by tool. Word-diff runs are marked `[-old-]` and `{+new+}`.
pub fn text(d: &Diff, c: &Classification) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "class: {}", c.class.as_str());
    for s in &c.signals {
        let _ = write!(out, "  {:<9} {}", s.class.as_str(), s.rule);
        if let Some(t) = &s.tool {
            let _ = write!(out, "  tool {t}");
        }
        if let Some(p) = &s.path {
            let _ = write!(out, "  at {p}");
        }
        match (&s.old, &s.new) {
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
        if let Some(detail) = &s.detail {
            let _ = write!(out, "  ({detail})");
        }
        out.push('\n');
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
    if d.modified_total > 0 {
        let _ = writeln!(out, "modified ({}):", d.modified_total);
    }
    for t in &d.modified {
        let _ = writeln!(out, "  {}", t.name);
        match &t.description {
            Some(DescriptionDiff::Words { ops }) => {
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
                let _ = writeln!(out, "    description: {line}");
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
        schema(&mut out, "inputSchema", &t.input_schema);
        schema(&mut out, "outputSchema", &t.output_schema);
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
    fn no_change_is_benign_and_lists_nothing() {
        let set = r#"[{"name":"read","inputSchema":{"type":"object"}}]"#;
        assert_eq!(change(set, set), "class: benign\n");
    }
}
