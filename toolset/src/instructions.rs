//! A server's `initialize.instructions`, diffed and classified like a description.
//!
//! [`change`] compares two observations' instructions (absent text reads as empty in the
//! diff) and fires the same text rules [`crate::classify`] fires on a tool's description, with
//! the same functions: `description-trivial`, `description-small-edit` or
//! `description-rewritten` ([`crate::text::judge_description`]) when both sides are present;
//! `instructions-added` / `instructions-removed` (unsure) when one side is absent;
//! `address-added` for a URL, host, e-mail or IP literal the old instructions did not hold;
//! `format-char-added` and `model-addressing-text` when the new text holds a Cf code point or a
//! model-addressing pattern more often than the old; `pattern-block-added` and
//! `pattern-advise-added` for a rule-set match ([`crate::rules::scan`] of the instructions
//! alone) whose rule code the old instructions' scan did not have. Every signal has tool
//! `None` and path `$['instructions']`. The class is the worst signal's.
//!
//! Bounded: texts up to [`crate::diff::WORD_DIFF_MAX_CHARS`] characters each are word-diffed;
//! longer ones are shown as one removed and one added run, each cut to
//! [`crate::diff::SNIPPET_MAX_CHARS`]. At most [`crate::text::ADDRESS_SCAN_MAX_CHARS`]
//! characters are scanned for addresses.

use std::collections::{BTreeSet, HashSet};

use crate::classify::{self, Class, Signal, Sink, Texts};
use crate::text::{self, Address, AddressScan, EditOp, WordEdit};
use crate::{ToolSet, diff, rules};

/// Where a signal about instructions points.
pub const PATH: &str = "$['instructions']";

/// What changed in a server's instructions between two observations.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstructionsChange {
    /// The worst class of the signals.
    pub class: Class,
    /// A word diff of the old and new text (absent text reads as empty).
    pub diff: Vec<WordEdit>,
    /// Every signal that fired (tool `None`).
    pub signals: Vec<Signal>,
}

/// The word diff, or for texts beyond the word-diff size one removed and one added run, cut.
fn word_diff(o: &str, n: &str) -> Vec<WordEdit> {
    let max = diff::WORD_DIFF_MAX_CHARS;
    if o.chars().count() <= max && n.chars().count() <= max {
        return text::word_diff(o, n);
    }
    [(EditOp::Delete, o), (EditOp::Insert, n)]
        .into_iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(op, t)| WordEdit(op, text::cap(t, diff::SNIPPET_MAX_CHARS)))
        .collect()
}

/// The change between two observations' instructions; `None` when they are equal.
pub fn change(old: Option<&str>, new: Option<&str>) -> Option<InstructionsChange> {
    if old == new {
        return None;
    }
    let (o, n) = (old.unwrap_or(""), new.unwrap_or(""));
    let mut signals = Vec::new();
    let mut sink = Sink {
        tool: None,
        out: &mut signals,
    };
    match (old, new) {
        (None, Some(_)) => sink.emit(
            classify::INSTRUCTIONS_ADDED,
            Some(PATH),
            None,
            Some(classify::shown(n)),
            None,
        ),
        (Some(_), None) => sink.emit(
            classify::INSTRUCTIONS_REMOVED,
            Some(PATH),
            Some(classify::shown(o)),
            None,
            None,
        ),
        _ => classify::judge_text(
            &mut sink,
            PATH,
            o,
            n,
            Some(classify::shown(o)),
            Some(classify::shown(n)),
        ),
    }
    // Cf characters and model-addressing patterns.
    let (mut before, mut after) = (Texts::default(), Texts::default());
    before.add(PATH, o);
    after.add(PATH, n);
    classify::text_signals(&mut sink, &before, &after);
    // Addresses the old text did not hold.
    let mut old_scan: AddressScan<BTreeSet<Address>> =
        AddressScan::new(text::ADDRESS_SCAN_MAX_CHARS);
    old_scan.scan(o);
    let mut scan: AddressScan<Vec<Address>> = AddressScan::new(text::ADDRESS_SCAN_MAX_CHARS);
    classify::new_addresses(
        &mut sink,
        PATH,
        n,
        &old_scan.found,
        &mut scan,
        &mut HashSet::new(),
    );
    // Rule-set matches whose code is new.
    let empty = ToolSet::from_values(Vec::new());
    let (was, now) = (rules::scan(&empty, old), rules::scan(&empty, new));
    let seen = classify::match_keys(&was.matches);
    let text_at = |field: &str| (field == PATH).then(|| n.to_owned());
    classify::pattern_signals(&mut sink, &seen, &now.matches, &text_at);
    let class = signals.iter().map(|s| s.class).max().unwrap_or_default();
    Some(InstructionsChange {
        class,
        diff: word_diff(o, n),
        signals,
    })
}
