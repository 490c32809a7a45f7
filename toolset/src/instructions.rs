//! A server's `initialize.instructions`, diffed and classified like a description.
//!
//! INTERFACE SKELETON (issue #28): the types below are the contract other crates build on.

use crate::classify::{Class, Signal};
use crate::text::WordEdit;

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

/// The change between two observations' instructions; `None` when they are equal.
pub fn change(old: Option<&str>, new: Option<&str>) -> Option<InstructionsChange> {
    if old == new {
        return None;
    }
    let _ = (old, new);
    None
}
