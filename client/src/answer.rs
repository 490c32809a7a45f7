//! The `/check` answer on the wire (`toolmark.check/v1`), one definition for both sides: the
//! api serialises it, a client deserialises it.
//!
//! Members are declared in the order RFC 8785 sorts them (and serde_json's map writes them), so
//! serialising a value gives the same bytes whether it goes through a `serde_json::Value` or
//! not. Absent optional members are left out, except in [`Target`], whose `lastObserved`,
//! `lastStatus` and `skipReason` are written as `null` when unknown. Member names are HISTOR's
//! where HISTOR has the member (`match`, `target`, `observed`, `seenBefore` with its snake_case
//! members, `note`, `log`).

use serde::{Deserialize, Serialize};
use toolmark_log::entry::TargetId;
/// What the sandbox saw a package version do (`packageSignals.behaviour`): defined with the
/// observation model, where the index derives it.
pub use toolmark_observation::behaviour::{Behaviour, FindingSummary, PhaseBehaviour};
use toolmark_toolset::Sri;

/// The answer's `type`: inside the signed bytes, so an answer cannot be replayed as anything
/// else the key signs.
pub const ANSWER_TYPE: &str = "toolmark.check/v1";

/// The verdict (`match`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Match {
    /// The set is the one of toolmark's latest successful observation of the target.
    Same,
    /// Not the latest, but an earlier successful observation of the target had it.
    PreviouslyObserved,
    /// No successful observation of the target had it.
    Different,
    /// No listed server has this endpoint, package or name.
    NotListed,
    /// The target is listed but toolmark never read its tool set (or, for a kind of the
    /// surface, never read that kind; for one tool, never observed a tool with that digest or
    /// name at the target).
    NotObserved,
    /// The request carried nothing to compare (no `tools`, `toolSetDigest` or `fullDigest`).
    NoDigest,
    /// One side has no digest of the kind compared (the tools sent could not be digested, or
    /// the observed set has no MTL/1 digest).
    Undigestible,
}

impl Match {
    /// Whether the answer rests on a log entry it proves (`same`, `previously-observed`).
    pub fn is_proved(self) -> bool {
        matches!(self, Match::Same | Match::PreviouslyObserved)
    }
}

/// A signed `/check` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// When the answer was made (`YYYY-MM-DDTHH:MM:SSZ`).
    #[serde(rename = "checkedAt")]
    pub checked_at: String,
    /// Only when the request asked to contribute (`"contribute": true`, HISTOR's member):
    /// whether its report of the compared digest is counted for the target today (docs/api.md
    /// "Client reports"); `false` with the reason in `note`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contributed: Option<bool>,
    /// The URL of `/api/v1/issuer`, which publishes the answer key.
    pub issuer: String,
    /// The data-flow legs of the set the scan read ([`Legs`]), when `patternScan` is
    /// `scanned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legs: Option<Legs>,
    /// The log the answer was decided against.
    pub log: LogState,
    /// The verdict.
    #[serde(rename = "match")]
    pub verdict: Match,
    /// Why, in words.
    pub note: String,
    /// What toolmark observed at the target, when it ever read its tool set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    /// For a `package` asked, listed or not: the popular package its name imitates
    /// (HISTOR's member and rules, docs/api.md "Look-alike names").
    #[serde(
        rename = "packageLookalike",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub package_lookalike: Option<PackageLookalike>,
    /// The rule set's scan of the tool set the answer is about (HISTOR's member, plus the
    /// rule set's digest): the tools sent, else toolmark's current set when it is the one
    /// compared (`same`) or nothing was compared.
    #[serde(
        rename = "patternScan",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub pattern_scan: Option<PatternScan>,
    /// The entry a `same` or `previously-observed` answer rests on, with its proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
    /// What was asked.
    pub query: Query,
    /// For `previously-observed`: when the set was seen.
    #[serde(
        rename = "seenBefore",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub seen_before: Option<SeenBefore>,
    /// For a `name` the registry does not list: the listed server name it reads like (ours;
    /// docs/api.md "Look-alike names").
    #[serde(
        rename = "serverLookalike",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_lookalike: Option<ServerLookalike>,
    /// The answer key's signature over the rest (absent only while signing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signature>,
    /// The target the question was matched to, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// Always [`ANSWER_TYPE`].
    #[serde(rename = "type")]
    pub kind: String,
}

/// `packageLookalike`: HISTOR's `{of, weekly, how, ownWeekly}`, plus the day `weekly` was
/// counted (`weeklyAsOf`, ours: counts come from a dated snapshot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageLookalike {
    /// How the name imitates it (HISTOR's phrases: "the same name under another scope", "the
    /// same name with other separators or look-alike characters", "one character away"; ours:
    /// "the same name with look-alike characters from another script").
    pub how: String,
    /// The imitated package (`npm:@scope/name`, `pypi:name`).
    pub of: String,
    /// The asked package's weekly downloads (0 when the snapshot does not list it).
    #[serde(rename = "ownWeekly")]
    pub own_weekly: u64,
    /// The imitated package's weekly downloads.
    pub weekly: u64,
    /// The day `weekly` was counted (`YYYY-MM-DD`).
    #[serde(rename = "weeklyAsOf")]
    pub weekly_as_of: String,
}

/// `serverLookalike`: the listed server name an unlisted `name` reads like (no counts exist for
/// server names; being listed stands in for popularity).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerLookalike {
    /// How (the phrases of [`PackageLookalike::how`] but the scope one).
    pub how: String,
    /// The server name it looks like: one the registry lists or listed (delisted names are
    /// kept).
    pub of: String,
}

/// How the client's set was compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ComparedBy {
    /// By the `toolmark/1` full digest (`tools` or `fullDigest` sent).
    #[serde(rename = "toolmark/1")]
    Full,
    /// By the MTL/1 digest (`toolSetDigest` alone, as HISTOR does).
    #[serde(rename = "MTL/1")]
    Mtl1,
    /// The prompts sent (`prompts`), by their `toolmark/1` digest (`surfaceDigest`).
    #[serde(rename = "prompts")]
    Prompts,
    /// The resources sent (`resources`), by their digest.
    #[serde(rename = "resources")]
    Resources,
    /// The resource templates sent (`resourceTemplates`), by their digest.
    #[serde(rename = "resourceTemplates")]
    ResourceTemplates,
    /// One tool (`tool`, or `toolDigest`), by its `toolmark-tool/1` digest (`toolDigest`),
    /// matched against the tool digests of the target's entries (`proof.toolDigests`).
    #[serde(rename = "tool")]
    Tool,
}

impl ComparedBy {
    /// The kind of the surface compared, when it is not the tool set.
    pub fn kind(self) -> Option<toolmark_toolset::surface::Kind> {
        use toolmark_toolset::surface::Kind;
        match self {
            ComparedBy::Full | ComparedBy::Mtl1 | ComparedBy::Tool => None,
            ComparedBy::Prompts => Some(Kind::Prompts),
            ComparedBy::Resources => Some(Kind::Resources),
            ComparedBy::ResourceTemplates => Some(Kind::Templates),
        }
    }
}

/// Why MTL/1 gave the tools sent no digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestError {
    /// The MTL/1 error code (`MTL-NUM-001`, …), or `PARSE`.
    pub code: String,
    /// What it says.
    pub detail: String,
}

/// What was asked, with the digests computed from `tools` when tools were sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// How the set was compared.
    #[serde(rename = "comparedBy")]
    pub compared_by: ComparedBy,
    /// Why the tools sent have no MTL/1 digest.
    #[serde(
        rename = "digestError",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub digest_error: Option<DigestError>,
    /// The endpoint asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The client set's full digest.
    #[serde(
        rename = "fullDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub full_digest: Option<Sri>,
    /// The server name asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The package asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// The digest of the kind of the surface sent (`prompts`, `resources`,
    /// `resourceTemplates`; [`ComparedBy`] names it), by toolmark's per-kind `toolmark/1`
    /// definition.
    #[serde(
        rename = "surfaceDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub surface_digest: Option<Sri>,
    /// The `toolmark-tool/1` digest of the one tool sent (`tool`), or the one sent
    /// (`toolDigest`).
    #[serde(
        rename = "toolDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_digest: Option<Sri>,
    /// The tool's name: the `name` of the tool sent, else the name the tool with that digest
    /// has in the entry the answer proves (a digest covers the name, so it has one name);
    /// absent when neither is known.
    #[serde(rename = "toolName", default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The client set's MTL/1 digest.
    #[serde(
        rename = "toolSetDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_set_digest: Option<Sri>,
}

/// The checkpoint the answer was decided against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogState {
    /// The signed checkpoint note, verbatim.
    pub checkpoint: String,
    /// The cosignatures on that checkpoint by the service's configured witnesses that verified
    /// (the service's view; a client checks the checkpoint's lines itself:
    /// [`crate::verify_answer_with`]); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cosignatures: Vec<LogCosignature>,
    /// The newest of those cosignatures' times not dated in the service's future; absent when
    /// there is none.
    #[serde(
        rename = "cosignedAt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cosigned_at: Option<String>,
    /// The log's origin line.
    pub origin: String,
    /// The tree's root hash (base64).
    #[serde(rename = "rootHash")]
    pub root_hash: String,
    /// The tree's size.
    #[serde(rename = "treeSize")]
    pub tree_size: u64,
    /// The log's verifier key.
    pub vkey: String,
}

/// One witness cosignature on the answer's checkpoint (`log.cosignatures`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogCosignature {
    /// When the witness cosigned (`YYYY-MM-DDTHH:MM:SSZ`, from the cosignature's timestamp).
    pub timestamp: String,
    /// The witness's key name, as on its signature line.
    pub witness: String,
}

/// The target the question was matched to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The URL, or `npm:<name>` / `pypi:<name>`.
    pub endpoint: String,
    /// The target id.
    #[serde(with = "text")]
    pub id: TargetId,
    /// When it was last observed (`null` if never).
    #[serde(rename = "lastObserved")]
    pub last_observed: Option<String>,
    /// How the last observation ended (`null` if never observed).
    #[serde(rename = "lastStatus")]
    pub last_status: Option<String>,
    /// Whether the registry still lists the server.
    pub listed: bool,
    /// The registry server name.
    pub name: String,
    /// For a package: its observed version's behaviour and findings.
    #[serde(
        rename = "packageSignals",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub package_signals: Option<PackageSignals>,
    /// For a package: the version whose tool set is the target's current one (its latest
    /// successful observation).
    #[serde(
        rename = "packageVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub package_version: Option<String>,
    /// The target's page on the service.
    pub page: String,
    /// Why toolmark does not observe it (`null` if it does).
    #[serde(rename = "skipReason")]
    pub skip_reason: Option<String>,
    /// The headers the registry declares for it that toolmark dials it without (secrets,
    /// templates, values a user supplies); absent when there are none or it is not dialled.
    #[serde(
        rename = "withheldHeaders",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub withheld_headers: Vec<String>,
}

/// What toolmark observed at the target, from the latest successful observation's entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// How many times the tool set changed.
    pub changes: u64,
    /// The first successful observation.
    #[serde(
        rename = "firstObserved",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub first_observed: Option<String>,
    /// The observed set's full digest.
    #[serde(
        rename = "fullDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub full_digest: Option<Sri>,
    /// The latest successful observation.
    #[serde(rename = "lastObserved")]
    pub last_observed: String,
    /// How many successful observations there are.
    pub observations: u64,
    /// How many tools the observed set has.
    #[serde(rename = "toolCount", default, skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<u64>,
    /// The observed set's MTL/1 digest.
    #[serde(
        rename = "toolSetDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_set_digest: Option<Sri>,
    /// Why the observed set has no MTL/1 digest.
    #[serde(
        rename = "toolSetDigestError",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_set_digest_error: Option<String>,
    /// Since when the observed set has been observed unchanged: the first successful
    /// observation of the current run of successful observations with this full digest
    /// (failed observations in between do not end a run; a different set does). HISTOR's
    /// member name.
    #[serde(
        rename = "unchangedSince",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub unchanged_since: Option<String>,
}

/// Whether a scan is reported (`patternScan.status`, HISTOR's values that apply here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScanStatus {
    /// The scan of the set named by `toolSetDigest`/`fullDigest` is reported.
    Scanned,
    /// The set compared is not one toolmark keeps a scan of (an earlier or unknown set sent by
    /// digest only).
    NotScanned,
}

/// `patternScan`: the rule set's matches over a tool set (and, for toolmark's current set, the
/// server's instructions). Members in RFC 8785 order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternScan {
    /// Advise-tier matches (all counted).
    pub advise: u64,
    /// Block-tier matches (all counted).
    pub block: u64,
    /// Whether anything matched.
    pub flagged: bool,
    /// The scanned set's full digest.
    #[serde(
        rename = "fullDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub full_digest: Option<Sri>,
    /// The matches (at most `toolset::rules::MAX_MATCHES`).
    pub matches: Vec<toolmark_toolset::rules::Match>,
    /// What was scanned, in words.
    pub note: String,
    /// The SRI digest of the rule set's canonical bytes (`/api/v1/rules`; HISTOR's member,
    /// which names its pattern set by digest too).
    #[serde(rename = "patternSet")]
    pub pattern_set: String,
    /// The rule set's id (`toolmark-rules/4`).
    pub rules: String,
    /// Whether a scan is reported.
    pub status: ScanStatus,
    /// The scanned set's MTL/1 digest.
    #[serde(
        rename = "toolSetDigest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_set_digest: Option<Sri>,
    /// Matches left out of `matches`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `legs`: per tool of the scanned set, its data-flow legs, and whether the set holds all
/// three (a toxic flow).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Legs {
    /// The tools with a leg (at most [`MAX_ANSWER_LEG_TOOLS`]).
    pub tools: Vec<toolmark_toolset::legs::ToolLegs>,
    /// All three legs on this set, and how sure (`null`: not all three).
    #[serde(rename = "toxicFlow")]
    pub toxic_flow: Option<toolmark_toolset::legs::Certainty>,
    /// Tools with a leg left out of `tools`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated: u64,
}

/// Most tools an answer's [`Legs`] lists.
pub const MAX_ANSWER_LEG_TOOLS: usize = 100;

/// The log entry an answer rests on, and its proof.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proof {
    /// The entry's canonical JSON.
    pub entry: String,
    /// Its index in the log.
    #[serde(rename = "entryIndex")]
    pub entry_index: u64,
    /// A `c2sp.org/tlog-proof@v1` bundle: the entry, its inclusion proof, the checkpoint.
    #[serde(rename = "tlogProof")]
    pub tlog_proof: String,
    /// For an answer about one tool (`comparedBy` `tool`): the entry's tool index, every tool's
    /// `toolmark-tool/1` digest in the index's order, so a client recomputes the entry's
    /// `toolIndex` from them and finds the tool's digest among them.
    #[serde(
        rename = "toolDigests",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_digests: Option<Vec<Sri>>,
}

/// When a `previously-observed` set was seen (HISTOR's member names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenBefore {
    /// The first observation that had it.
    pub first_seen: String,
    /// The last observation that had it.
    pub last_seen: String,
    /// How many observations had it.
    pub observations: u64,
}

/// The answer key's signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// Always `Ed25519`.
    pub alg: String,
    /// The first 16 hex digits of SHA-256(public key).
    #[serde(rename = "keyId")]
    pub key_id: String,
    /// The public key, 64 hex digits.
    #[serde(rename = "publicKeyHex")]
    pub public_key_hex: String,
    /// The signature, base64url without padding, over RFC 8785 of the answer without
    /// `signature`.
    pub value: String,
}

/// A value written as its `Display` text and read back with `FromStr`.
mod text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::fmt::Display;
    use std::str::FromStr;

    pub fn serialize<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(value)
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// What toolmark knows of a package target's observed version (`target.packageSignals`, the
/// member WARDEN reads): the version, what the sandbox saw it do, and what its registry says of
/// it compared with the previous observed version (HISTOR's registry signals: `provenance`,
/// `publisher`, `previousPublisher`, `installScripts`, `newDependencies`, `flags`). A field
/// the registry does not serve is unknown (`null` or absent), never "lost". Members are
/// declared in RFC 8785 order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSignals {
    /// What the sandbox saw the version do, per phase, and the findings.
    pub behaviour: Behaviour,
    /// The log entry whose observation document holds these facts (`package.sandbox`,
    /// `package.registry`).
    #[serde(rename = "behaviourEntry")]
    pub behaviour_entry: u64,
    /// The version's `bin` commands; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<Vec<String>>,
    /// Dependencies both versions have with another spec (`name: old → new`, at most 20).
    #[serde(
        rename = "dependencySpecsChanged",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub dependency_specs_changed: Vec<String>,
    /// The registry's deprecation message; absent when not deprecated or unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<String>,
    /// The flags raised against the previous observed version (`provenance-lost`,
    /// `publisher-changed`, `install-scripts-added`, `new-dependencies`,
    /// `dependency-specs-changed`, `repository-changed`, `maintainers-changed`, `new-bin`), and
    /// `install-scripts` whenever the version has install scripts.
    #[serde(default)]
    pub flags: Vec<String>,
    /// The install-time scripts the version has (`preinstall`, `install`, `postinstall`);
    /// `null` when the registry's metadata was not read.
    #[serde(rename = "installScripts", default)]
    pub install_scripts: Option<Vec<String>>,
    /// The maintainers' account names; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintainers: Option<Vec<String>>,
    /// Dependencies the previous observed version did not have (at most 20); `null` when they
    /// could not be compared (no previous version with registry facts, or either version's
    /// dependencies unknown).
    #[serde(rename = "newDependencies", default)]
    pub new_dependencies: Option<Vec<String>>,
    /// The previous observed version's publisher; `null` when unknown or none.
    #[serde(rename = "previousPublisher", default)]
    pub previous_publisher: Option<String>,
    /// The version observed before it, when another was.
    #[serde(
        rename = "previousVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub previous_version: Option<String>,
    /// Whether the registry serves provenance for the version (presence, not verification);
    /// `null` when the registry does not say.
    #[serde(default)]
    pub provenance: Option<bool>,
    /// Who published it (`trusted publisher: <id>…` or the account); `null` when unknown.
    #[serde(default)]
    pub publisher: Option<String>,
    /// The source repository the registry names; absent when none or unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// The version.
    pub version: String,
    /// PyPI: the release is yanked; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yanked: Option<bool>,
}
