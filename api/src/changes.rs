//! One typed view of a stored change, read once at the edge and shown by every surface that
//! renders changes: the desk's pages, the JSON change endpoints and the feeds.
//!
//! The index stores a change's diff and classification as the JSON of
//! [`toolmark_toolset::diff::Diff`] and [`toolmark_toolset::classify::Classification`];
//! [`ChangeView::parse`] reads them back into those types (and the class into
//! [`Class`]). A change of a remote's authorization servers (`kind` = `authorization`) carries
//! no diff: its old and new servers are read into [`ChangeView::authorization`]. A record that
//! does not parse is a [`ChangeError`], which every surface answers as an internal error
//! (logged), never as a page or item with empty fields.

use std::collections::HashMap;

use toolmark_index::BecameFlagged;
use toolmark_index::index::ChangeRow;
use toolmark_toolset::classify::{self, Class, Classification, Signal};
use toolmark_toolset::diff::Diff;
use toolmark_toolset::instructions::InstructionsChange;
use toolmark_toolset::surface::Kind;
use toolmark_toolset::surface::diff::{KindClassification, KindDiff, KindSignal};

use crate::ApiError;

/// What a signal's `message` says when its rule is not one of [`classify::RULES`] (cannot
/// happen for a record that parsed: the rule id is checked when it is read).
pub const UNKNOWN_RULE: &str = "A rule this version does not know.";

/// Why a stored change record cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The stored class is not `benign`, `unsure` or `dangerous`.
    #[error("change {id}: the stored class {class:?} is not benign, unsure or dangerous")]
    Class {
        /// The change id.
        id: i64,
        /// The class as stored.
        class: String,
    },
    /// The stored diff is not the JSON of a [`Diff`].
    #[error("change {id}: the stored diff does not parse: {source}")]
    Diff {
        /// The change id.
        id: i64,
        /// What the reader refused.
        source: serde_json::Error,
    },
    /// The stored classification is not the JSON of a [`Classification`].
    #[error("change {id}: the stored classification does not parse: {source}")]
    Classification {
        /// The change id.
        id: i64,
        /// What the reader refused.
        source: serde_json::Error,
    },
    /// An `instructions` or `scan` change without its facts.
    #[error("change {id}: the {what} change has no stored facts")]
    Facts {
        /// The change id.
        id: i64,
        /// The kind.
        what: &'static str,
    },
    /// The stored kind is not `tools`, `authorization`, `behaviour`, `registry`,
    /// `instructions`, `scan`, a kind of the surface (`prompts`, `resources`,
    /// `resourceTemplates`, `appPages`, `card`), `card-mismatch` or `cloaking`.
    #[error(
        "change {id}: the stored kind {kind:?} is not tools, authorization, behaviour, registry, \
         instructions, scan, prompts, resources, resourceTemplates, appPages, card, card-mismatch \
         or cloaking"
    )]
    Kind {
        /// The change id.
        id: i64,
        /// The kind as stored.
        kind: String,
    },
    /// An `authorization` change whose old or new servers are not a JSON array of strings.
    #[error("change {id}: the stored authorization servers do not parse")]
    Authorization {
        /// The change id.
        id: i64,
    },
    /// A `behaviour` change whose versions or differences do not parse.
    #[error("change {id}: the stored behaviour change does not parse")]
    Behaviour {
        /// The change id.
        id: i64,
    },
    /// A `registry` change whose versions or flags do not parse.
    #[error("change {id}: the stored registry change does not parse")]
    Registry {
        /// The change id.
        id: i64,
    },
    /// A change of a kind of the surface whose diff or classification does not parse.
    #[error("change {id}: the stored surface change does not parse: {source}")]
    Surface {
        /// The change id.
        id: i64,
        /// What the reader refused.
        source: serde_json::Error,
    },
    /// A `card-mismatch` change whose comparison is missing or does not parse.
    #[error("change {id}: the stored card comparison does not parse")]
    CardMismatch {
        /// The change id.
        id: i64,
    },
    /// Only one of the diff and the classification is stored (the index writes both or
    /// neither).
    #[error(
        "change {id}: a diff is stored without a classification, or a classification without a diff"
    )]
    Incomplete {
        /// The change id.
        id: i64,
    },
}

impl From<ChangeError> for ApiError {
    fn from(e: ChangeError) -> Self {
        ApiError::internal(e)
    }
}

/// What was worked out about a change whose two tool sets are both stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// The diff of the old set to the new one.
    pub diff: Diff,
    /// The verdict on it.
    pub classification: Classification,
}

/// A change as every surface shows it: the indexed row, its class, and its analysis.
#[derive(Debug, Clone)]
pub struct ChangeView {
    /// The row as indexed (ids, entries, digests, exact counts). Its `diff` and
    /// `classification` texts are what [`ChangeView::analysis`] was read from.
    pub row: ChangeRow,
    /// The class (the row's `class`, read).
    pub class: Class,
    /// The diff and classification; `None` when a document of the change is not stored, and
    /// for an authorization change.
    pub analysis: Option<Analysis>,
    /// For a change of the authorization servers (`kind` = `authorization`): the servers
    /// before and after.
    pub authorization: Option<AuthorizationChange>,
    /// For a package whose newer version behaved differently in the sandbox (`kind` =
    /// `behaviour`): the two versions and what differs.
    pub behaviour: Option<BehaviourChangeView>,
    /// For a package whose newer version's registry signals raise flags (`kind` =
    /// `registry`): the two versions and the flags.
    pub registry: Option<RegistryChangeView>,
    /// For a change of the server's instructions (`kind` = `instructions`): the word diff and
    /// the signals.
    pub instructions: Option<InstructionsChange>,
    /// For a target the rule set newly flags (`kind` = `scan`): the scan.
    pub scan: Option<BecameFlagged>,
    /// For a change of one kind of the surface (`kind` = `prompts`, `resources`,
    /// `resourceTemplates`, `appPages` or `card`): the kind, and its diff and classification.
    pub surface: Option<SurfaceChangeView>,
    /// For a card that lists tools other than the ones served (`kind` = `card-mismatch`): the
    /// comparison.
    pub card_mismatch: Option<CardMismatchView>,
}

/// A change of one kind of the surface beyond `tools/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceChangeView {
    /// The kind.
    pub kind: Kind,
    /// Its diff and classification (`toolmark_toolset::surface::diff`); `None` when a document
    /// of the change is not stored.
    pub analysis: Option<(KindDiff, KindClassification)>,
}

impl SurfaceChangeView {
    /// The change as text ([`toolmark_toolset::surface::diff::render`]: the kind and its
    /// class, every signal, the entries added, removed and changed); `None` when not analysed.
    pub fn render(&self) -> Option<String> {
        self.analysis
            .as_ref()
            .map(|(d, c)| toolmark_toolset::surface::diff::render(d, c))
    }

    /// The signals the classification lists (none when not analysed).
    pub fn signals(&self) -> &[KindSignal] {
        self.analysis.as_ref().map_or(&[], |(_, c)| &c.signals)
    }
}

/// A card's tools against the tools served (the stored
/// `toolmark_toolset::surface::card::CardComparison`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CardMismatchView {
    /// Tools the card lists that were not served (at most the comparison's cap).
    pub only_card: Vec<String>,
    /// How many.
    pub only_card_total: usize,
    /// Tools served that the card does not list.
    pub only_served: Vec<String>,
    /// How many.
    pub only_served_total: usize,
    /// Tools in both whose definitions on the card differ from the served ones.
    pub differing: Vec<CardDifferenceView>,
    /// How many.
    pub differing_total: usize,
}

/// A tool the card defines otherwise than the endpoint serves it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CardDifferenceView {
    /// The tool's name.
    pub tool: String,
    /// The members that differ (`description`, `inputSchema`, …).
    pub members: Vec<String>,
}

impl CardMismatchView {
    /// Its lists, labelled: `Only on the card`, `Served, not on the card`, `Defined otherwise
    /// on the card` (`name (members)`), each with its total.
    pub fn lists(&self) -> [(&'static str, Vec<String>, usize); 3] {
        [
            (
                "Only on the card",
                self.only_card.clone(),
                self.only_card_total,
            ),
            (
                "Served, not on the card",
                self.only_served.clone(),
                self.only_served_total,
            ),
            (
                "Defined otherwise on the card",
                self.differing
                    .iter()
                    .map(|d| format!("{} ({})", d.tool, d.members.join(", ")))
                    .collect(),
                self.differing_total,
            ),
        ]
    }
}

/// The kinds of the surface a change may be of, by their stored name.
fn surface_kind(kind: &str) -> Option<Kind> {
    Kind::from_name(kind)
}

/// A package's registry signals raising flags between two versions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryChangeView {
    /// The older version.
    pub old_version: String,
    /// The newer version.
    pub new_version: String,
    /// The flags (`provenance-lost`, `publisher-changed`, …; the informational
    /// `install-scripts` too when the version has install scripts).
    pub flags: Vec<String>,
    /// The older version's publisher, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_publisher: Option<String>,
    /// Install-time scripts added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_scripts_added: Vec<String>,
    /// New dependencies (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_dependencies: Vec<String>,
    /// Dependencies whose spec changed (`name: old → new`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependency_specs_changed: Vec<String>,
    /// `bin` commands added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_bins: Vec<String>,
}

impl RegistryChangeView {
    /// The flags that made the change (without the informational `install-scripts`), as a
    /// summary says them: `registry signals changed: provenance-lost, new-dependencies`.
    pub fn summary(&self) -> String {
        let flags: Vec<&str> = self
            .flags
            .iter()
            .map(String::as_str)
            .filter(|f| *f != "install-scripts")
            .collect();
        format!("registry signals changed: {}", flags.join(", "))
    }
}

/// A package's behaviour change between two versions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BehaviourChangeView {
    /// The older version.
    pub old_version: String,
    /// The newer version.
    pub new_version: String,
    /// Findings (`<phase> <CODE>`) the newer version has and the older had not.
    pub findings_added: Vec<String>,
    /// Findings the older had and the newer has not.
    pub findings_removed: Vec<String>,
    /// Acts (`<phase> <what> <item>`) the newer version did and the older did not.
    pub acts_added: Vec<String>,
    /// Acts the older did and the newer did not.
    pub acts_removed: Vec<String>,
}

/// The authorization servers a remote's protected-resource metadata named before and after a
/// change (each sorted, deduplicated).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AuthorizationChange {
    /// Before.
    pub old: Vec<String>,
    /// After.
    pub new: Vec<String>,
}

impl ChangeView {
    /// Read a stored change: its class, diff and classification.
    pub fn parse(row: ChangeRow) -> Result<ChangeView, ChangeError> {
        let id = row.id;
        let class = match row.class.as_str() {
            "benign" => Class::Benign,
            "unsure" => Class::Unsure,
            "dangerous" => Class::Dangerous,
            other => {
                return Err(ChangeError::Class {
                    id,
                    class: other.to_owned(),
                });
            }
        };
        let behaviour = match row.kind.as_str() {
            "behaviour" => Some(behaviour_of(&row).ok_or(ChangeError::Behaviour { id })?),
            _ => None,
        };
        let registry = match row.kind.as_str() {
            "registry" => Some(registry_of(&row).ok_or(ChangeError::Registry { id })?),
            _ => None,
        };
        let facts = |what: &'static str| -> Result<&str, ChangeError> {
            row.classification
                .as_deref()
                .ok_or(ChangeError::Facts { id, what })
        };
        let instructions = match row.kind.as_str() {
            "instructions" => Some(
                serde_json::from_str(facts("instructions")?)
                    .map_err(|source| ChangeError::Classification { id, source })?,
            ),
            _ => None,
        };
        let scan = match row.kind.as_str() {
            "scan" => Some(
                serde_json::from_str(facts("scan")?)
                    .map_err(|source| ChangeError::Classification { id, source })?,
            ),
            _ => None,
        };
        let surface = match surface_kind(&row.kind) {
            Some(kind) => Some(SurfaceChangeView {
                kind,
                analysis: match (row.diff.as_deref(), row.classification.as_deref()) {
                    (None, None) => None,
                    (Some(d), Some(c)) => Some((
                        serde_json::from_str(d)
                            .map_err(|source| ChangeError::Surface { id, source })?,
                        serde_json::from_str(c)
                            .map_err(|source| ChangeError::Surface { id, source })?,
                    )),
                    _ => return Err(ChangeError::Incomplete { id }),
                },
            }),
            None => None,
        };
        let card_mismatch = match row.kind.as_str() {
            "card-mismatch" => Some(
                row.diff
                    .as_deref()
                    .and_then(|d| serde_json::from_str(d).ok())
                    .ok_or(ChangeError::CardMismatch { id })?,
            ),
            _ => None,
        };
        let authorization = match row.kind.as_str() {
            "tools" | "behaviour" | "registry" | "instructions" | "scan" | "card-mismatch"
            | "cloaking" => None,
            _ if surface.is_some() => None,
            "authorization" => {
                let read = |v: &Option<String>| -> Option<Vec<String>> {
                    serde_json::from_str(v.as_deref()?).ok()
                };
                match (read(&row.old_auth), read(&row.new_auth)) {
                    (Some(old), Some(new)) => Some(AuthorizationChange { old, new }),
                    _ => return Err(ChangeError::Authorization { id }),
                }
            }
            other => {
                return Err(ChangeError::Kind {
                    id,
                    kind: other.to_owned(),
                });
            }
        };
        let analysis = match (row.diff.as_deref(), row.classification.as_deref()) {
            _ if instructions.is_some()
                || scan.is_some()
                || surface.is_some()
                || card_mismatch.is_some() =>
            {
                None
            }
            (None, None) => None,
            (Some(d), Some(c)) => Some(Analysis {
                diff: serde_json::from_str(d).map_err(|source| ChangeError::Diff { id, source })?,
                classification: serde_json::from_str(c)
                    .map_err(|source| ChangeError::Classification { id, source })?,
            }),
            _ => return Err(ChangeError::Incomplete { id }),
        };
        Ok(ChangeView {
            row,
            class,
            analysis,
            authorization,
            behaviour,
            registry,
            instructions,
            scan,
            surface,
            card_mismatch,
        })
    }

    /// What changed, as titles say it: `tool definitions changed`, `authorization server
    /// changed`, `behaviour changed`, `registry signals changed`, `prompts changed`, `server
    /// card disagrees with the tools served`, `another client was listed other tools
    /// (cloaking)`, ….
    pub fn headline(&self) -> &'static str {
        if self.authorization.is_some() {
            "authorization server changed"
        } else if self.behaviour.is_some() {
            "behaviour changed"
        } else if self.registry.is_some() {
            "registry signals changed"
        } else if self.instructions.is_some() {
            "server instructions changed"
        } else if self.scan.is_some() {
            "flagged by the rule set"
        } else if let Some(s) = &self.surface {
            match s.kind {
                Kind::Prompts => "prompts changed",
                Kind::Resources => "resources changed",
                Kind::Templates => "resource templates changed",
                Kind::AppPages => "app pages changed",
                Kind::Card => "server card changed",
            }
        } else if self.card_mismatch.is_some() {
            "server card disagrees with the tools served"
        } else if self.row.kind == "cloaking" {
            "another client was listed other tools (cloaking)"
        } else {
            "tool definitions changed"
        }
    }

    /// The change's desk page under `base` (also its feed item id).
    pub fn page(&self, base: &str) -> String {
        format!("{base}/changes/{}", self.row.id)
    }

    /// The diff, when analysed.
    pub fn diff(&self) -> Option<&Diff> {
        self.analysis.as_ref().map(|a| &a.diff)
    }

    /// Names the diff lists as added (at most the diff's own cap; none when not analysed).
    pub fn added(&self) -> &[String] {
        self.diff().map_or(&[], |d| &d.added)
    }

    /// Names the diff lists as removed.
    pub fn removed(&self) -> &[String] {
        self.diff().map_or(&[], |d| &d.removed)
    }

    /// Names of the modified tools the diff details.
    pub fn modified(&self) -> impl Iterator<Item = &str> {
        self.diff()
            .into_iter()
            .flat_map(|d| &d.modified)
            .map(|t| t.name.as_str())
    }

    /// The signals the classification lists (an instructions change's own; none when not
    /// analysed).
    pub fn signals(&self) -> &[Signal] {
        if let Some(i) = &self.instructions {
            return &i.signals;
        }
        self.analysis
            .as_ref()
            .map_or(&[], |a| &a.classification.signals)
    }

    /// How many signals fired, including the ones the classification left out.
    pub fn signals_total(&self) -> usize {
        if let Some(i) = &self.instructions {
            return i.signals.len();
        }
        self.analysis.as_ref().map_or(0, |a| {
            a.classification
                .signals
                .len()
                .saturating_add(a.classification.signals_truncated)
        })
    }

    /// The class of each tool the classification names.
    pub fn tool_classes(&self) -> HashMap<&str, Class> {
        self.analysis
            .iter()
            .flat_map(|a| &a.classification.tools)
            .map(|t| (t.tool.as_str(), t.class))
            .collect()
    }
}

/// A stored behaviour change read back: its two versions and what differs.
fn behaviour_of(row: &ChangeRow) -> Option<BehaviourChangeView> {
    use toolmark_index::packages::BehaviourSide;
    let old: BehaviourSide = serde_json::from_str(row.old_behaviour.as_deref()?).ok()?;
    let new: BehaviourSide = serde_json::from_str(row.new_behaviour.as_deref()?).ok()?;
    let change = new.change?;
    Some(BehaviourChangeView {
        old_version: old.version,
        new_version: new.version,
        findings_added: change.findings_added,
        findings_removed: change.findings_removed,
        acts_added: change.acts_added,
        acts_removed: change.acts_removed,
    })
}

/// A stored registry change read back: its two versions and the flags.
fn registry_of(row: &ChangeRow) -> Option<RegistryChangeView> {
    use toolmark_index::packages::RegistrySide;
    let old: RegistrySide = serde_json::from_str(row.old_registry.as_deref()?).ok()?;
    let new: RegistrySide = serde_json::from_str(row.new_registry.as_deref()?).ok()?;
    let c = new.comparison?;
    Some(RegistryChangeView {
        old_version: old.version,
        new_version: new.version,
        flags: c.flags,
        previous_publisher: c.previous_publisher,
        install_scripts_added: c.install_scripts_added,
        new_dependencies: c.new_dependencies,
        dependency_specs_changed: c.dependency_specs_changed,
        new_bins: c.new_bins,
    })
}

/// A signal with its rule's one-line meaning, as the JSON endpoints and feeds list it.
#[derive(serde::Serialize)]
pub struct SignalView<'a> {
    /// The signal, as the classification stored it.
    #[serde(flatten)]
    pub signal: &'a Signal,
    /// What the rule means ([`rule_meaning`]).
    pub message: &'static str,
}

impl<'a> SignalView<'a> {
    /// The signal with its meaning.
    pub fn new(signal: &'a Signal) -> SignalView<'a> {
        SignalView {
            signal,
            message: rule_meaning(signal.rule),
        }
    }
}

/// The one-line meaning of a rule id ([`classify::RULES`]), [`UNKNOWN_RULE`] for another id.
pub fn rule_meaning(rule: &str) -> &'static str {
    classify::RULES
        .iter()
        .find(|r| r.id == rule)
        .map_or(UNKNOWN_RULE, |r| r.meaning)
}

/// A surface signal with its rule's one-line meaning, as the JSON endpoints list it.
#[derive(serde::Serialize)]
pub struct KindSignalView<'a> {
    /// The signal, as the classification stored it.
    #[serde(flatten)]
    pub signal: &'a KindSignal,
    /// What the rule means ([`kind_rule_meaning`]).
    pub message: &'static str,
}

/// The one-line meaning of a rule a surface change's signal names: the surface's own rules
/// (`toolmark_toolset::surface::diff::KIND_RULES`), then the tool classification's.
pub fn kind_rule_meaning(rule: &str) -> &'static str {
    toolmark_toolset::surface::diff::KIND_RULES
        .iter()
        .find(|r| r.id == rule)
        .map_or_else(|| rule_meaning(rule), |r| r.meaning)
}

/// What the change JSON (`crate::servers::change_json`, already built into `out`) adds for the
/// kinds it does not know itself: a surface kind's `surface` (`{kind, class}`), its `signals`
/// and `signalsTotal` (the kind's own) and, when `whole`, its `diff` and `classification`
/// (`KindDiff`, `KindClassification`); a `card-mismatch`'s `cardMismatch` (the comparison);
/// and a tool-set diff's renames as `names.renamed` (`{from, to}`, at most `names_cap`).
pub fn extend_json(
    c: &ChangeView,
    whole: bool,
    (names_cap, signals_cap): (usize, usize),
    out: &mut serde_json::Value,
) -> Result<(), ApiError> {
    if let Some(s) = &c.surface {
        out["analysed"] = s.analysis.is_some().into();
        out["surface"] = serde_json::json!({
            "kind": s.kind.as_str(),
            "class": c.class,
        });
        let signals: Vec<KindSignalView> = s
            .signals()
            .iter()
            .take(signals_cap)
            .map(|signal| KindSignalView {
                signal,
                message: kind_rule_meaning(signal.rule),
            })
            .collect();
        out["signals"] = to_json(&signals)?;
        out["signalsTotal"] = s
            .analysis
            .as_ref()
            .map_or(0, |(_, k)| {
                k.signals.len().saturating_add(k.signals_truncated)
            })
            .into();
        if whole {
            let (d, k) = match &s.analysis {
                Some((d, k)) => (to_json(d)?, to_json(k)?),
                None => (serde_json::Value::Null, serde_json::Value::Null),
            };
            out["diff"] = d;
            out["classification"] = k;
        }
    }
    if let Some(m) = &c.card_mismatch {
        out["cardMismatch"] = to_json(m)?;
    }
    if let Some(d) = c.diff().filter(|d| !d.renames.is_empty()) {
        let renamed: Vec<serde_json::Value> = d
            .renames
            .iter()
            .take(names_cap)
            .map(|r| serde_json::json!({"from": r.from, "to": r.to}))
            .collect();
        out["names"]["renamed"] = renamed.into();
        out["renamed"] = d.renames_total.into();
    }
    Ok(())
}

/// A value as JSON (an internal error when it cannot be).
fn to_json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(v).map_err(ApiError::internal)
}
