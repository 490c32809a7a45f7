//! Registry signals of one version, read at the edge into
//! [`toolmark_observation::registry_facts::RegistryFacts`] (issue #15).
//!
//! **npm** (the packument's version entry; the packument's top-level `maintainers` and
//! `repository` when the entry has none). The public registry signs every version
//! (`dist.signatures`) and serves `_npmUser`, `maintainers` and `dist.attestations` beside it; a
//! mirror that strips them strips the signatures too (the mirror reachable from the build
//! machines serves none of the four). So:
//! - provenance: `dist.attestations` served → present (its `provenance.predicateType`);
//!   not served on an entry that carries `dist.signatures` → known absent; on an entry without
//!   signatures → **unknown** (a stripping mirror never makes provenance look lost);
//! - publisher: `_npmUser` (`trustedPublisher.id` → a trusted publisher, else the account
//!   `name`); not served → unknown;
//! - maintainers: the entry's, else the packument's; neither → unknown;
//! - repository and `deprecated`: served → known; not served → known "none" on a signed entry,
//!   unknown otherwise;
//! - install scripts (`preinstall`/`install`/`postinstall`, and `install` implied by
//!   `gypfile`), `dependencies` and `bin`: known (every registry serves the manifest's own
//!   fields).
//!
//! **PyPI** (the project JSON, and PEP 740's integrity API through the PEP 691 simple JSON):
//! - `requires_dist` (names PEP 503-normalised) and `yanked` from `info` only when `info` is the
//!   version's (the project JSON describes the latest release; the mirror here has no
//!   per-version JSON), else unknown; a `null` `requires_dist` (PyPI did not read the
//!   metadata) is unknown, not "no dependencies"; yanked also from the release's files, known
//!   only when every file says;
//! - maintainers: `ownership.roles`' users; no `ownership` → unknown;
//! - install scripts: none (only wheels are installed, and a wheel runs no code at install);
//! - provenance and publisher: the simple JSON's file entry names its `provenance` (upstream
//!   serves the member on every file, `null` when it has none). A `null` → known absent; a URL →
//!   `GET {index}/integrity/{project}/{version}/{file}/provenance`: 200 → present, with the
//!   first bundle's publisher (`kind`, `repository`, `workflow`); anything else (404 included:
//!   the listing said there is one) → unknown. A simple JSON without the member (the mirror here), or none at all, → unknown:
//!   a 404 from an index that serves no PEP 740 at all is not "no provenance".
//!
//! Bounded: lists over [`MAX_DEPENDENCIES`], [`MAX_MAINTAINERS`] or [`MAX_BINS`] are unknown
//! (named in `capped`); strings are cut at `MAX_FACT_CHARS`; at most
//! [`MAX_ATTESTATION_BUNDLES`] bundles are read. Nothing here verifies a signature or an
//! attestation: presence is reported, not proof.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use toolmark_observation::registry_facts::{
    MAX_BINS, MAX_DEPENDENCIES, MAX_MAINTAINERS, Provenance, Publisher, RegistryFacts, bounded,
};

use super::{PackageError, pep503};

/// Attestation bundles read from one PEP 740 provenance object at most.
pub const MAX_ATTESTATION_BUNDLES: usize = 64;

/// `map` with bounded keys and values, or `None` (and `field` noted as capped) over `cap`.
fn capped_map(
    map: BTreeMap<String, String>,
    cap: usize,
    field: &str,
    capped: &mut Vec<String>,
) -> Option<BTreeMap<String, String>> {
    if map.len() > cap {
        capped.push(field.to_owned());
        return None;
    }
    Some(
        map.into_iter()
            .map(|(k, v)| (bounded(&k), bounded(&v)))
            .collect(),
    )
}

/// Sorted, deduplicated, bounded names, or `None` (noted) over `cap`.
fn capped_names(
    names: impl Iterator<Item = String>,
    cap: usize,
    field: &str,
    capped: &mut Vec<String>,
) -> Option<Vec<String>> {
    let set: BTreeSet<String> = names
        .take(cap.saturating_add(1))
        .map(|n| bounded(&n))
        .collect();
    if set.len() > cap {
        capped.push(field.to_owned());
        return None;
    }
    Some(set.into_iter().collect())
}

/// The names of an npm `maintainers` array (objects with `name`, or `"name <email>"` strings);
/// `None` when it is not an array.
fn npm_people(v: Option<&Value>) -> Option<Vec<String>> {
    let list = v?.as_array()?;
    Some(
        list.iter()
            .filter_map(|m| match m {
                Value::Object(o) => o.get("name")?.as_str().map(str::to_owned),
                Value::String(s) => s.split(" <").next().map(|n| n.trim().to_owned()),
                _ => None,
            })
            .filter(|n| !n.is_empty())
            .collect(),
    )
}

/// An npm `repository`: a string, or an object's `url`.
fn npm_repository(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(bounded(s)),
        Value::Object(o) => o
            .get("url")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(bounded),
        _ => None,
    }
}

/// The registry facts of an npm version `entry` (a packument's `versions[v]`) whose packument
/// has `top` (its top level: `maintainers` and `repository` are read from it when the entry
/// has none); `install_scripts`, `dependencies` and `bin` as [`super::npm_version`] read them.
pub(super) fn npm_facts(
    entry: &Value,
    top: &Value,
    install_scripts: &BTreeMap<String, String>,
    dependencies: &BTreeMap<String, String>,
    bin: &BTreeMap<String, String>,
) -> RegistryFacts {
    let mut capped = Vec::new();
    let dist = &entry["dist"];
    // A signed entry: the registry serves its full metadata (see the module documentation).
    let signed = dist["signatures"].as_array().is_some_and(|s| !s.is_empty());
    let attestations = dist.get("attestations").filter(|a| {
        a.get("provenance").is_some_and(Value::is_object)
            || a.get("url").is_some_and(Value::is_string)
    });
    let provenance = match attestations {
        Some(a) => Some(Provenance {
            present: true,
            kind: a["provenance"]["predicateType"].as_str().map(bounded),
        }),
        None if signed => Some(Provenance {
            present: false,
            kind: None,
        }),
        None => None,
    };
    let publisher = entry.get("_npmUser").filter(|u| u.is_object()).map(|user| {
        let trusted = user["trustedPublisher"]["id"].as_str();
        Some(Publisher {
            trusted: trusted.is_some(),
            id: trusted.map(bounded),
            name: user["name"].as_str().map(bounded),
            repository: None,
            workflow: None,
        })
    });
    let maintainers = npm_people(entry.get("maintainers"))
        .or_else(|| npm_people(top.get("maintainers")))
        .and_then(|names| {
            capped_names(
                names.into_iter(),
                MAX_MAINTAINERS,
                "maintainers",
                &mut capped,
            )
        });
    let repository = match npm_repository(entry.get("repository"))
        .or_else(|| npm_repository(top.get("repository")))
    {
        Some(url) => Some(Some(url)),
        None if signed => Some(None),
        None => None,
    };
    let deprecated = match entry.get("deprecated").and_then(Value::as_str) {
        Some(message) if !message.is_empty() => Some(Some(bounded(message))),
        _ if signed || entry.get("deprecated").is_some() => Some(None),
        _ => None,
    };
    RegistryFacts {
        ecosystem: "npm".into(),
        provenance,
        publisher,
        install_scripts: capped_map(
            install_scripts.clone(),
            MAX_DEPENDENCIES,
            "installScripts",
            &mut capped,
        ),
        dependencies: capped_map(
            dependencies.clone(),
            MAX_DEPENDENCIES,
            "dependencies",
            &mut capped,
        ),
        maintainers,
        repository,
        bins: capped_map(bin.clone(), MAX_BINS, "bins", &mut capped),
        deprecated,
        yanked: None,
        capped,
    }
}

/// A PEP 508 requirement split into its PEP 503-normalised name and the rest (version
/// specifiers, extras, markers), trimmed; `None` when it does not start with a name.
fn requirement(text: &str) -> Option<(String, String)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        .unwrap_or(text.len());
    if end == 0 {
        return None;
    }
    Some((pep503(&text[..end]), text[end..].trim().to_owned()))
}

/// The registry facts of PyPI `version` read from its project JSON (no provenance: see
/// [`pypi_provenance`]): `requires_dist` and `yanked` when `info` is the version's, the
/// release's files' `yanked`, and the project's `ownership`.
pub fn pypi_facts(project_json: &[u8], version: &str) -> Result<RegistryFacts, PackageError> {
    let p: Value = serde_json::from_slice(project_json)
        .map_err(|e| PackageError::Metadata(format!("project JSON: {e}")))?;
    let mut capped = Vec::new();
    let info = &p["info"];
    let own = info["version"].as_str() == Some(version);
    let dependencies = if !own {
        None
    } else if let Some(list) = info["requires_dist"].as_array() {
        if list.len() > MAX_DEPENDENCIES {
            capped.push("dependencies".to_owned());
            None
        } else {
            let mut deps: BTreeMap<String, String> = BTreeMap::new();
            for (name, spec) in list
                .iter()
                .filter_map(Value::as_str)
                .filter_map(requirement)
            {
                let spec = bounded(&spec);
                deps.entry(bounded(&name))
                    .and_modify(|s| {
                        if *s != spec {
                            *s = bounded(&format!("{s} | {spec}"));
                        }
                    })
                    .or_insert(spec);
            }
            Some(deps)
        }
    } else {
        None
    };
    let files = p["releases"][version].as_array();
    let yanked = match files {
        // Known only when every file says (a file without `yanked` leaves it unknown).
        Some(files) if !files.is_empty() => files
            .iter()
            .map(|f| f["yanked"].as_bool())
            .collect::<Option<Vec<bool>>>()
            .map(|y| y.iter().all(|&y| y)),
        _ if own => info["yanked"].as_bool(),
        _ => None,
    };
    let maintainers = p["ownership"]["roles"].as_array().and_then(|roles| {
        capped_names(
            roles
                .iter()
                .filter_map(|r| r["user"].as_str().map(str::to_owned)),
            MAX_MAINTAINERS,
            "maintainers",
            &mut capped,
        )
    });
    Ok(RegistryFacts {
        ecosystem: "pypi".into(),
        provenance: None,
        publisher: None,
        // Only wheels are installed: nothing runs at install time.
        install_scripts: Some(BTreeMap::new()),
        dependencies,
        maintainers,
        repository: None,
        bins: None,
        deprecated: None,
        yanked,
        capped,
    })
}

/// What a PEP 691 simple JSON page says of `filename`'s provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProvenanceListing {
    /// The file's entry has no `provenance` member (an index without PEP 740), the file is not
    /// listed, or the page is not PEP 691 JSON: unknown.
    NotServed,
    /// `provenance: null`: the file has none.
    None,
    /// A provenance URL: the integrity API has it.
    Listed,
}

/// Read `filename`'s `provenance` member from a PEP 691 simple JSON page.
pub fn pypi_provenance_listing(simple_json: &[u8], filename: &str) -> ProvenanceListing {
    let Ok(page) = serde_json::from_slice::<Value>(simple_json) else {
        return ProvenanceListing::NotServed;
    };
    let file = page["files"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["filename"].as_str() == Some(filename));
    match file.and_then(|f| f.get("provenance")) {
        None => ProvenanceListing::NotServed,
        Some(Value::Null) => ProvenanceListing::None,
        Some(Value::String(_)) => ProvenanceListing::Listed,
        Some(_) => ProvenanceListing::NotServed,
    }
}

/// The provenance and publisher a PEP 740 provenance object (the integrity API's 200 body)
/// gives: present when it has attestation bundles (their publisher kinds as `kind`), the first
/// bundle's publisher as the trusted publisher.
pub fn pypi_provenance(body: &[u8]) -> Result<(Provenance, Option<Publisher>), PackageError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| PackageError::Metadata(format!("provenance: {e}")))?;
    let bundles: Vec<&Value> = v["attestation_bundles"]
        .as_array()
        .ok_or_else(|| PackageError::Metadata("provenance: no attestation_bundles".into()))?
        .iter()
        .take(MAX_ATTESTATION_BUNDLES)
        .collect();
    let kinds: BTreeSet<&str> = bundles
        .iter()
        .filter_map(|b| b["publisher"]["kind"].as_str())
        .collect();
    let publisher = bundles
        .first()
        .map(|b| &b["publisher"])
        .filter(|p| p.is_object())
        .map(|p| Publisher {
            trusted: true,
            id: p["kind"].as_str().map(bounded),
            name: p["email"].as_str().map(bounded),
            repository: p["repository"].as_str().map(bounded),
            workflow: p["workflow"].as_str().map(bounded),
        });
    Ok((
        Provenance {
            present: !bundles.is_empty(),
            kind: (!kinds.is_empty())
                .then(|| bounded(&kinds.into_iter().collect::<Vec<_>>().join(","))),
        },
        publisher,
    ))
}

/// The integrity API URL of `filename` of `project` at `version` under `index`.
pub fn pypi_provenance_url(index: &str, project: &str, version: &str, filename: &str) -> String {
    format!(
        "{}/integrity/{}/{}/{}/provenance",
        index.trim_end_matches('/'),
        pep503(project),
        version,
        filename
    )
}

/// The PEP 691 simple JSON media type.
pub const SIMPLE_JSON: &str = "application/vnd.pypi.simple.v1+json";

/// The PEP 740 integrity API's media type.
pub const INTEGRITY_JSON: &str = "application/vnd.pypi.integrity.v1+json";

#[cfg(test)]
mod tests {
    use super::*;

    /// PEP 740's documented shape of a GitHub trusted publisher (no recorded one is in the
    /// fixtures: see `tests/fixtures/registry/SOURCES.md`).
    #[test]
    fn a_github_publishers_repository_and_workflow_are_its_identity() {
        let body = br#"{"version":1,"attestation_bundles":[{"publisher":{"kind":"GitHub",
            "repository":"owner/repo","workflow":"publish.yml","environment":null},"attestations":[]}]}"#;
        let (p, publisher) = pypi_provenance(body).unwrap();
        assert!(p.present);
        assert_eq!(
            publisher.unwrap().label(),
            "trusted publisher: GitHub owner/repo publish.yml"
        );
        assert!(pypi_provenance(b"{}").is_err());
        assert!(
            !pypi_provenance(br#"{"attestation_bundles":[]}"#)
                .unwrap()
                .0
                .present
        );
    }

    #[test]
    fn requirements_split_into_normalised_names_and_the_rest() {
        assert_eq!(
            requirement("Typing_Extensions >=4.6 ; python_version<'3.11'"),
            Some((
                "typing-extensions".into(),
                ">=4.6 ; python_version<'3.11'".into()
            ))
        );
        assert_eq!(requirement("  ; nothing"), None);
    }
}
