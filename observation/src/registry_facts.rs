//! What a package registry says about one published version ([`RegistryFacts`]: provenance,
//! publisher, install scripts, dependencies, maintainers, repository, `bin` entries,
//! deprecation, yanked), and how two observed versions' facts differ ([`compare`]: HISTOR's
//! flags `provenance-lost`, `publisher-changed`, `install-scripts-added`, `new-dependencies`,
//! `dependency-specs-changed`, and ours `repository-changed`, `maintainers-changed`, `new-bin`).
//!
//! Every field a registry may not serve is tri-state: absent from the JSON (`None`) means
//! **unknown** — the registry (or the mirror in front of it) did not serve it — and a known
//! value says what the registry served, including "none" (`provenance.present: false`, a
//! `repository` of `null`, an empty map). An unknown field never yields a flag: only two known
//! values are compared, so a stripping mirror can never make provenance look "lost". How the
//! crawler tells "absent" from "unknown" per registry is documented with its parser
//! (`toolmark_crawler::packages::npm_facts`, `pypi_facts`).
//!
//! Lists are bounded ([`MAX_DEPENDENCIES`], [`MAX_MAINTAINERS`], [`MAX_BINS`]) and strings cut
//! at [`MAX_FACT_CHARS`]: a list over its cap is recorded as unknown and named in
//! [`RegistryFacts::capped`], never compared partially.
//!
//! Pure: no I/O. The facts are extracted at the edge (the crawler) and stored in the package's
//! observation document (`package.registry`), from which the index derives the flags.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Deserializer, Serialize};

/// Dependencies kept per version at most (HISTOR keeps 300 names); more: unknown.
pub const MAX_DEPENDENCIES: usize = 300;

/// Maintainers kept per version at most; more: unknown.
pub const MAX_MAINTAINERS: usize = 100;

/// `bin` entries kept per version at most; more: unknown.
pub const MAX_BINS: usize = 100;

/// Characters kept of any one string (names, specs, scripts, URLs, messages); longer ones are
/// cut at a character boundary and end in `…`.
pub const MAX_FACT_CHARS: usize = 512;

/// New dependencies an answer lists at most (HISTOR: 20); the flag counts them all.
pub const MAX_NEW_DEPENDENCIES_SHOWN: usize = 20;

/// The flag: the previous version had provenance and this one has none.
pub const PROVENANCE_LOST: &str = "provenance-lost";
/// The flag: both versions name a publisher, and they differ.
pub const PUBLISHER_CHANGED: &str = "publisher-changed";
/// The flag: install-time scripts this version has and the previous had not.
pub const INSTALL_SCRIPTS_ADDED: &str = "install-scripts-added";
/// The flag: dependencies this version has and the previous had not.
pub const NEW_DEPENDENCIES: &str = "new-dependencies";
/// The flag: a dependency both versions have, with another spec.
pub const DEPENDENCY_SPECS_CHANGED: &str = "dependency-specs-changed";
/// The flag: the source repository both versions name differs.
pub const REPOSITORY_CHANGED: &str = "repository-changed";
/// The flag: the set of maintainers differs.
pub const MAINTAINERS_CHANGED: &str = "maintainers-changed";
/// The flag: `bin` entries this version has and the previous had not.
pub const NEW_BIN: &str = "new-bin";
/// The informational flag (HISTOR's): the version has install-time scripts, new or not. It
/// alone never makes a `registry` change.
pub const INSTALL_SCRIPTS: &str = "install-scripts";

/// The flags that make a change `dangerous` (the others make it `unsure`).
pub const DANGEROUS_FLAGS: [&str; 3] = [PROVENANCE_LOST, PUBLISHER_CHANGED, INSTALL_SCRIPTS_ADDED];

/// A member present in the JSON, `null` included, is known: `Some(value)`; an absent member is
/// `None` (unknown). For `Option<Option<T>>` fields.
fn known<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// What the registry says about one published version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryFacts {
    /// `npm` or `pypi`.
    pub ecosystem: String,
    /// Provenance (npm `dist.attestations`, PyPI PEP 740); absent: unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Who published it: `Some(None)` (JSON `null`) when known to be nobody in particular (a
    /// PyPI file without a trusted publisher); absent: unknown.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "known"
    )]
    pub publisher: Option<Option<Publisher>>,
    /// Install-time scripts by name (npm `preinstall`/`install`/`postinstall`, and `install`
    /// implied by `gypfile`; a wheel has none); absent: unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_scripts: Option<BTreeMap<String, String>>,
    /// Dependencies, name → spec (npm `dependencies`; PyPI `requires_dist`, names PEP 503
    /// normalised, the rest of the requirement as the spec); absent: unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<BTreeMap<String, String>>,
    /// Maintainers' account names, sorted (npm `maintainers`; PyPI `ownership.roles`);
    /// absent: unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintainers: Option<Vec<String>>,
    /// The source repository URL (npm `repository`); `null` when known to name none; absent:
    /// unknown.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "known"
    )]
    pub repository: Option<Option<String>>,
    /// `bin` entries, command → path; absent: unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<BTreeMap<String, String>>,
    /// npm `deprecated`: the message, `null` when known not deprecated; absent: unknown.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "known"
    )]
    pub deprecated: Option<Option<String>>,
    /// PyPI: every file of the release is yanked; absent: unknown (and for npm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yanked: Option<bool>,
    /// The fields recorded as unknown because they were over their cap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capped: Vec<String>,
}

/// A version's provenance as its registry serves it (presence, not verification: nothing here
/// checks a signature).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// The registry serves an attestation of provenance for the version.
    pub present: bool,
    /// npm: the provenance `predicateType`; PyPI: the publisher kinds of the attestation
    /// bundles (`GitHub`, `GitLab`, `Google`, …), comma-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// Who published a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Publisher {
    /// Published through a trusted publisher (OIDC from CI), not by an account's token.
    pub trusted: bool,
    /// npm: `_npmUser.trustedPublisher.id` (`github`, `gitlab`); PyPI: the attestation
    /// publisher's `kind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// npm: `_npmUser.name`; PyPI: the publisher's `email` when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// PyPI: the trusted publisher's `repository`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// PyPI: the trusted publisher's `workflow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
}

impl Publisher {
    /// The publisher as answers show it and as versions are compared by: `trusted publisher:
    /// <id>[ <repository>][ <workflow>]` for a trusted publisher (npm's OIDC configuration id
    /// is not part of it: it names the configuration, not who), else the account name.
    pub fn label(&self) -> String {
        if self.trusted {
            let mut out = format!("trusted publisher: {}", self.id.as_deref().unwrap_or("?"));
            for part in [&self.repository, &self.workflow].into_iter().flatten() {
                out.push(' ');
                out.push_str(part);
            }
            out
        } else {
            self.name.clone().unwrap_or_else(|| "?".to_owned())
        }
    }
}

impl RegistryFacts {
    /// Provenance as HISTOR answers it: `Some(true)` present, `Some(false)` known absent,
    /// `None` unknown.
    pub fn provenance_present(&self) -> Option<bool> {
        self.provenance.as_ref().map(|p| p.present)
    }

    /// The publisher's [`Publisher::label`], when one is known.
    pub fn publisher_label(&self) -> Option<String> {
        self.publisher.as_ref()?.as_ref().map(Publisher::label)
    }

    /// The install-time script names (empty when unknown or none).
    pub fn install_script_names(&self) -> Vec<String> {
        self.install_scripts
            .iter()
            .flat_map(|m| m.keys().cloned())
            .collect()
    }
}

/// `text` cut to [`MAX_FACT_CHARS`] characters (ending in `…` when cut).
pub fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_FACT_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => {
            let mut out = text[..at].to_owned();
            out.push('…');
            out
        }
    }
}

/// How a version's registry facts differ from the previous observed version's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryComparison {
    /// The flags, in the order of the constants above; [`INSTALL_SCRIPTS`] last when the
    /// version has install scripts at all.
    pub flags: Vec<String>,
    /// The previous version's publisher label, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_publisher: Option<String>,
    /// Install-time scripts added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_scripts_added: Vec<String>,
    /// New dependencies, at most [`MAX_NEW_DEPENDENCIES_SHOWN`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_dependencies: Vec<String>,
    /// How many new dependencies there are in all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub new_dependencies_total: usize,
    /// Dependencies whose spec changed: `name: old → new`, at most
    /// [`MAX_NEW_DEPENDENCIES_SHOWN`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependency_specs_changed: Vec<String>,
    /// `bin` entries added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_bins: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl RegistryComparison {
    /// The flags that make a `registry` change: every flag but [`INSTALL_SCRIPTS`].
    pub fn change_flags(&self) -> Vec<&str> {
        self.flags
            .iter()
            .map(String::as_str)
            .filter(|f| *f != INSTALL_SCRIPTS)
            .collect()
    }

    /// The class of the change these flags make: `dangerous` when one of
    /// [`DANGEROUS_FLAGS`] is raised, `unsure` when another is, `None` when no flag but the
    /// informational one is.
    pub fn class(&self) -> Option<&'static str> {
        let flags = self.change_flags();
        if flags.is_empty() {
            None
        } else if flags.iter().any(|f| DANGEROUS_FLAGS.contains(f)) {
            Some("dangerous")
        } else {
            Some("unsure")
        }
    }
}

/// Compare the previous observed version's facts with this version's; `previous` `None` (no
/// earlier version with facts) gives only the informational flag.
pub fn compare(previous: Option<&RegistryFacts>, current: &RegistryFacts) -> RegistryComparison {
    let mut out = RegistryComparison::default();
    if let Some(prev) = previous {
        out.previous_publisher = prev.publisher_label();
        // Provenance: known present before, known absent now.
        if prev.provenance_present() == Some(true) && current.provenance_present() == Some(false) {
            out.flags.push(PROVENANCE_LOST.into());
        }
        // Publisher: both known and named, and different.
        if let (Some(a), Some(b)) = (prev.publisher_label(), current.publisher_label())
            && a != b
        {
            out.flags.push(PUBLISHER_CHANGED.into());
        }
        if let (Some(a), Some(b)) = (&prev.install_scripts, &current.install_scripts) {
            out.install_scripts_added = b.keys().filter(|k| !a.contains_key(*k)).cloned().collect();
            if !out.install_scripts_added.is_empty() {
                out.flags.push(INSTALL_SCRIPTS_ADDED.into());
            }
        }
        if let (Some(a), Some(b)) = (&prev.dependencies, &current.dependencies) {
            let new: Vec<String> = b.keys().filter(|k| !a.contains_key(*k)).cloned().collect();
            out.new_dependencies_total = new.len();
            out.new_dependencies = new.into_iter().take(MAX_NEW_DEPENDENCIES_SHOWN).collect();
            if out.new_dependencies_total > 0 {
                out.flags.push(NEW_DEPENDENCIES.into());
            }
            out.dependency_specs_changed = b
                .iter()
                .filter_map(|(name, spec)| {
                    let old = a.get(name)?;
                    (old != spec).then(|| format!("{name}: {old} → {spec}"))
                })
                .take(MAX_NEW_DEPENDENCIES_SHOWN)
                .collect();
            if !out.dependency_specs_changed.is_empty() {
                out.flags.push(DEPENDENCY_SPECS_CHANGED.into());
            }
        }
        if let (Some(Some(a)), Some(Some(b))) = (&prev.repository, &current.repository)
            && normalise_repository(a) != normalise_repository(b)
        {
            out.flags.push(REPOSITORY_CHANGED.into());
        }
        if let (Some(a), Some(b)) = (&prev.maintainers, &current.maintainers) {
            let (a, b): (BTreeSet<&String>, BTreeSet<&String>) =
                (a.iter().collect(), b.iter().collect());
            if a != b {
                out.flags.push(MAINTAINERS_CHANGED.into());
            }
        }
        if let (Some(a), Some(b)) = (&prev.bins, &current.bins) {
            out.new_bins = b.keys().filter(|k| !a.contains_key(*k)).cloned().collect();
            if !out.new_bins.is_empty() {
                out.flags.push(NEW_BIN.into());
            }
        }
    }
    if current
        .install_scripts
        .as_ref()
        .is_some_and(|s| !s.is_empty())
    {
        out.flags.push(INSTALL_SCRIPTS.into());
    }
    out
}

/// A repository URL as compared: `git+`, a trailing `.git` and `/` dropped, lower case (the
/// same repository spelled as npm's tools write it is not a change).
fn normalise_repository(url: &str) -> String {
    let url = url.trim();
    let url = url.strip_prefix("git+").unwrap_or(url);
    let url = url.trim_end_matches('/');
    let url = url.strip_suffix(".git").unwrap_or(url);
    url.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npm() -> RegistryFacts {
        RegistryFacts {
            ecosystem: "npm".into(),
            ..RegistryFacts::default()
        }
    }

    #[test]
    fn unknown_fields_are_absent_and_known_none_is_null_on_the_wire() {
        let mut f = npm();
        f.repository = Some(None);
        f.publisher = None;
        let wire = serde_json::to_value(&f).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({"ecosystem": "npm", "repository": null})
        );
        let back: RegistryFacts = serde_json::from_value(wire).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.publisher, None, "absent stays unknown");
    }

    #[test]
    fn unknown_on_either_side_raises_no_flag() {
        let mut known = npm();
        known.provenance = Some(Provenance {
            present: true,
            kind: None,
        });
        known.repository = Some(Some("https://x/a".into()));
        known.maintainers = Some(vec!["a".into()]);
        let unknown = npm();
        assert!(compare(Some(&known), &unknown).flags.is_empty());
        assert!(compare(Some(&unknown), &known).flags.is_empty());
    }

    #[test]
    fn a_repository_spelled_otherwise_is_the_same() {
        let mut a = npm();
        a.repository = Some(Some(
            "git+https://github.com/Microsoft/playwright.git".into(),
        ));
        let mut b = npm();
        b.repository = Some(Some("https://github.com/microsoft/playwright/".into()));
        assert!(compare(Some(&a), &b).flags.is_empty());
    }

    #[test]
    fn long_strings_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_FACT_CHARS + 5);
        let cut = bounded(&long);
        assert_eq!(cut.chars().count(), MAX_FACT_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(bounded("short"), "short");
    }
}
