//! Data-flow legs per tool: does a tool read private data, take in untrusted text, or send data
//! out? Three legs on one server make a toxic flow.
//!
//! INTERFACE SKELETON (issue #28): the types below are the contract other crates build on; the
//! judgement itself is being written. Until then no tool has a leg.

use crate::ToolSet;
use crate::model::Tool;

/// A data-flow leg.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Leg {
    /// Reads files, mail, messages, databases, credentials …
    PrivateData,
    /// Fetches web pages, issues, mail, search results … (text others wrote).
    UntrustedInput,
    /// Sends, posts, uploads, writes to places others read.
    Outbound,
}

/// How sure the judgement is. Ordered: `Possible < Confirmed`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    /// Some evidence.
    Possible,
    /// Strong evidence.
    Confirmed,
}

/// Why a leg was given.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Evidence {
    /// `name`, `description`, `schema` or `annotation`.
    pub kind: String,
    /// What was seen (a word, a property name, `openWorldHint: true` …).
    pub detail: String,
}

/// One leg of a tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolLeg {
    /// The leg.
    pub leg: Leg,
    /// How sure.
    pub certainty: Certainty,
    /// Why.
    pub evidence: Vec<Evidence>,
}

/// The legs of one named tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolLegs {
    /// The tool's name.
    pub tool: String,
    /// Its legs, in [`Leg`] order (only those it has).
    pub legs: Vec<ToolLeg>,
}

/// The legs of one tool.
pub fn tool_legs(tool: &Tool) -> Vec<ToolLeg> {
    let _ = tool;
    Vec::new()
}

/// The legs of every named tool of a set, in the set's order (tools without legs left out).
pub fn set_legs(set: &ToolSet) -> Vec<ToolLegs> {
    set.tools
        .iter()
        .filter_map(|t| {
            let name = t.name()?;
            let legs = tool_legs(t);
            (!legs.is_empty()).then(|| ToolLegs {
                tool: name.to_owned(),
                legs,
            })
        })
        .collect()
}

/// Whether the set holds all three legs (a toxic flow), and how sure: `Confirmed` when every
/// leg is confirmed on some tool, `None` when a leg is missing.
pub fn toxic_flow(legs: &[ToolLegs]) -> Option<Certainty> {
    let mut best = [None::<Certainty>; 3];
    for t in legs {
        for l in &t.legs {
            let i = l.leg as usize;
            best[i] = best[i].max(Some(l.certainty));
        }
    }
    best.iter().copied().min().flatten()
}
