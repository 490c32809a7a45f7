//! The rule set (`toolmark-rules/N`): a static scan of every text a model sees in a tool set
//! and in the server's `instructions`, for poisoning.
//!
//! INTERFACE SKELETON (issue #28): the types below are the contract other crates build on; the
//! rules themselves are being written. Until then [`scan`] finds nothing.

use crate::ToolSet;
use crate::sri::Sri;

/// The rule set's id; its number changes whenever a rule's behaviour changes.
pub const RULES_ID: &str = "toolmark-rules/1";

/// At most this many matches are listed ([`Scan::truncated`] counts the rest).
pub const MAX_MATCHES: usize = 200;

/// What kind of poisoning a rule looks for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum RuleClass {
    /// Instructions addressed to the model that the user is not meant to see.
    HiddenInstructions,
    /// Text that changes how another tool is used.
    CrossToolShadowing,
    /// Requests for secrets, keys or files as parameters.
    SecretRequest,
    /// Exfiltration addresses and encodings.
    Exfiltration,
    /// Invisible and bidirectional Unicode, tag characters, homoglyph tricks.
    InvisibleUnicode,
    /// Destructive commands.
    DestructiveCommand,
    /// Text that overrides safety or the system prompt.
    SafetyOverride,
    /// Tool-preference manipulation.
    ToolPreference,
    /// A tool that quietly gathers more than its stated job needs.
    CovertCollection,
    /// A tool whose stated purpose is itself harmful.
    HarmfulPurpose,
}

impl RuleClass {
    /// Every class, in declaration order.
    pub const ALL: [RuleClass; 10] = [
        RuleClass::HiddenInstructions,
        RuleClass::CrossToolShadowing,
        RuleClass::SecretRequest,
        RuleClass::Exfiltration,
        RuleClass::InvisibleUnicode,
        RuleClass::DestructiveCommand,
        RuleClass::SafetyOverride,
        RuleClass::ToolPreference,
        RuleClass::CovertCollection,
        RuleClass::HarmfulPurpose,
    ];

    /// The kebab-case name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleClass::HiddenInstructions => "hidden-instructions",
            RuleClass::CrossToolShadowing => "cross-tool-shadowing",
            RuleClass::SecretRequest => "secret-request",
            RuleClass::Exfiltration => "exfiltration",
            RuleClass::InvisibleUnicode => "invisible-unicode",
            RuleClass::DestructiveCommand => "destructive-command",
            RuleClass::SafetyOverride => "safety-override",
            RuleClass::ToolPreference => "tool-preference",
            RuleClass::CovertCollection => "covert-collection",
            RuleClass::HarmfulPurpose => "harmful-purpose",
        }
    }
}

/// How strongly a match counts: `block` (poisoning) or `advise` (a person should look).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Worth a look.
    Advise,
    /// Poisoning.
    Block,
}

/// One rule that matched.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Match {
    /// The rule's stable code.
    pub code: String,
    /// The rule's class.
    pub class: RuleClass,
    /// The rule's tier.
    pub tier: Tier,
    /// The tool's name; `None` for the server's `instructions` or an entry without a name.
    pub tool: Option<String>,
    /// Where the text is: an RFC 9535 normalized path relative to the tool (`$['description']`,
    /// `$['inputSchema']['properties']['path']['description']`), or `$['instructions']`.
    pub field: String,
    /// The matched characters of that text, `[start, end)` in Unicode scalar values.
    pub span: [usize; 2],
}

/// A tool set's scan.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scan {
    /// The rule set's id ([`RULES_ID`]).
    pub rules: String,
    /// The matches, by tool in the set's order, then the instructions; at most [`MAX_MATCHES`].
    pub matches: Vec<Match>,
    /// How many matches were left out of [`Scan::matches`].
    pub truncated: usize,
    /// Block-tier matches, all of them counted.
    pub block: usize,
    /// Advise-tier matches, all of them counted.
    pub advise: usize,
}

impl Scan {
    /// Whether anything matched.
    pub fn flagged(&self) -> bool {
        self.block + self.advise > 0
    }
}

/// Scan a tool set and the server's `instructions`.
pub fn scan(set: &ToolSet, instructions: Option<&str>) -> Scan {
    let _ = (set, instructions);
    Scan {
        rules: RULES_ID.to_owned(),
        matches: Vec::new(),
        truncated: 0,
        block: 0,
        advise: 0,
    }
}

/// The rule set's canonical bytes (RFC 8785), as `/api/v1/rules` serves them.
pub fn canonical_bytes() -> Vec<u8> {
    format!("{{\"id\":\"{RULES_ID}\",\"rules\":[]}}").into_bytes()
}

/// The SRI digest of [`canonical_bytes`].
pub fn digest() -> Sri {
    Sri::of(&canonical_bytes())
}
