//! What the package sandbox saw one version do, in the shape answers show it
//! (`target.packageSignals.behaviour` of `/check`, WARDEN's shape): per phase (`installScripts`,
//! `startup`, `calls`) the programs, connections, lookups, decoys read and writes, and the
//! findings. Plain serde types; the index derives them from a package document's
//! `package.sandbox` facts.

use serde::{Deserialize, Serialize};

/// One phase as answers show it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseBehaviour {
    /// Whether everything in it was seen (absent phases are not).
    pub complete: bool,
    /// Decoys opened, relative to HOME (`.ssh/id_rsa`; `.env` is the working directory's).
    pub decoys: Vec<String>,
    /// Programs started.
    pub exec: Vec<String>,
    /// Why it is not complete.
    pub incomplete: Vec<String>,
    /// Names looked up.
    pub lookups: Vec<String>,
    /// Connections attempted (`host:port`, `unix:<path>`).
    pub network: Vec<String>,
    /// The packages whose install scripts ran (install phase).
    pub packages: Vec<String>,
    /// Requests the traps took (`https://name`, `smtp://name to …`).
    pub requests: Vec<String>,
    /// Tools: listed (startup) or called (calls).
    pub tools: Vec<String>,
    /// Files written at persistence paths or outside the allowed trees.
    pub writes: Vec<String>,
}

/// One finding as answers show it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FindingSummary {
    /// HISTOR's code (`READS_SECRETS`, …) or ours (`EXFILTRATION`, `TOOL_OUTPUT_LEAK`).
    pub code: String,
    /// Evidence (paths, addresses, tools).
    pub evidence: Vec<String>,
    /// `installScripts`, `startup` or `calls`.
    pub phase: String,
    /// `low`, `medium`, `high`.
    pub severity: String,
}

/// What the sandbox saw of one package version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Behaviour {
    /// The calls phase.
    pub calls: PhaseBehaviour,
    /// Status `ok` and every phase run completely seen: only then does an absence of
    /// findings mean something.
    pub complete: bool,
    /// The findings.
    pub findings: Vec<FindingSummary>,
    /// The install phase (empty and complete when the package had no install-time code).
    pub install_scripts: PhaseBehaviour,
    /// The observer that made it (`toolmark-sandbox/3`, or an older one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer: Option<String>,
    /// The runsc version it ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runsc: Option<String>,
    /// The startup phase.
    pub startup: PhaseBehaviour,
}
