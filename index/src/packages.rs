//! What the package sandbox saw of each package entry, read from its observation document's
//! `package.sandbox` facts into the shape answers and pages show ([`Behaviour`], WARDEN's
//! `packageSignals.behaviour`: per phase `exec`, `network`, `lookups`, `decoys`, `writes`,
//! `packages`, `tools`), and whether two versions behave differently ([`compare`]).
//!
//! Pure: the facts are the sandbox's [`SandboxFacts`] (one type, `toolmark_observation::sandbox`),
//! parsed from the document at the edge ([`behaviour_of`]); facts not of their shape are read as
//! nothing seen, and a behaviour read from them is not `complete`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;
// The shapes answers show: one definition, with the observation model.
pub use toolmark_observation::behaviour::{Behaviour, FindingSummary, PhaseBehaviour};
// The facts the sandbox writes: one definition, shared with the sandbox.
pub use toolmark_observation::registry_facts::{RegistryComparison, RegistryFacts};
pub use toolmark_observation::sandbox::{Act, Phase, SandboxFacts};

/// Where the sandbox's decoy HOME is inside; decoy and write paths are shown relative to it
/// (`.ssh/id_rsa`), as WARDEN reads them.
const HOME: &str = "/home/decoy/";

/// The `what` of each act, deduplicated in order.
fn acts(v: &[Act]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    v.iter()
        .map(|a| a.what.as_str())
        .filter(|w| seen.insert(*w))
        .map(str::to_owned)
        .collect()
}

fn relative(path: String) -> String {
    match path.strip_prefix(HOME) {
        Some(rest) => rest.to_owned(),
        None => path,
    }
}

/// Read the sandbox's facts (the document's `package.sandbox`, parsed at the edge:
/// [`SandboxFacts::read`]). Tools listed come from the observation, not the facts: pass them as
/// `listed`.
pub fn from_facts(facts: &SandboxFacts, listed: &[String]) -> Behaviour {
    let mut out = Behaviour {
        complete: facts.complete,
        observer: facts.observer.clone(),
        runsc: Some(facts.runsc.clone()).filter(|s| !s.is_empty()),
        ..Behaviour::default()
    };
    // A phase that was not run is complete only when nothing needed running it: the
    // install phase without install-time code. Startup and calls not run are not.
    out.install_scripts.complete = true;
    for phase in &facts.behaviour {
        let shown = PhaseBehaviour {
            complete: phase.complete,
            incomplete: phase.incomplete.clone(),
            exec: acts(&phase.exec),
            network: acts(&phase.network),
            lookups: phase.lookups.clone(),
            requests: phase.requests.clone(),
            decoys: acts(&phase.decoys).into_iter().map(relative).collect(),
            writes: acts(&phase.writes).into_iter().map(relative).collect(),
            packages: Vec::new(),
            tools: Vec::new(),
        };
        match phase.phase {
            Phase::Install => out.install_scripts = shown,
            Phase::Startup => out.startup = shown,
            Phase::Calls => out.calls = shown,
        }
    }
    let mut packages: Vec<String> = facts
        .install_scripts
        .iter()
        .map(|s| s.package.clone())
        .collect();
    packages.dedup();
    out.install_scripts.packages = packages;
    out.startup.tools = listed.to_vec();
    out.calls.tools = facts
        .calls
        .iter()
        .filter(|c| matches!(c.outcome.as_str(), "ok" | "error" | "timeout"))
        .map(|c| c.tool.clone())
        .collect();
    out.findings = facts
        .findings
        .iter()
        .map(|f| FindingSummary {
            code: f.code.clone(),
            severity: f.severity.as_str().to_owned(),
            phase: f.phase.answer_name().to_owned(),
            evidence: f.evidence.clone(),
        })
        .collect();
    out
}

/// What the sandbox saw, from a package document's `package.sandbox` (`None`: a document
/// without facts, a version never run). Facts not of their shape ([`SandboxFacts::read`]) are
/// read as nothing seen, so never as complete: an absence of findings from them means nothing.
pub fn behaviour_of(facts: Option<&Value>, listed: &[String]) -> Behaviour {
    match facts.map(SandboxFacts::read) {
        Some(Ok(facts)) => from_facts(&facts, listed),
        Some(Err(_)) | None => Behaviour::default(),
    }
}

/// What a comparison of two versions looks at: the findings (code and phase) and, per phase,
/// the programs, destinations (without the sandbox's per-run addresses), names, decoys and
/// writes — sorted, so order and repetition do not count.
pub fn profile(b: &Behaviour) -> Profile {
    let phase = |name: &str, p: &PhaseBehaviour| {
        let mut out = BTreeSet::new();
        let mut put = |what: &str, items: &[String]| {
            for i in items {
                // `collect.example:443 (127.128.0.1)`: the address is the run's own.
                let i = i.split(" (").next().unwrap_or(i);
                out.insert(format!("{name} {what} {i}"));
            }
        };
        put("exec", &p.exec);
        put("network", &p.network);
        put("lookup", &p.lookups);
        put("decoy", &p.decoys);
        put("write", &p.writes);
        out
    };
    let mut acts = phase("installScripts", &b.install_scripts);
    acts.extend(phase("startup", &b.startup));
    acts.extend(phase("calls", &b.calls));
    Profile {
        findings: b
            .findings
            .iter()
            .map(|f| format!("{} {}", f.phase, f.code))
            .collect(),
        acts,
    }
}

/// What two versions' behaviour is compared by ([`profile`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// `<phase> <CODE>`, sorted.
    pub findings: BTreeSet<String>,
    /// `<phase> <what> <item>`, sorted.
    pub acts: BTreeSet<String>,
}

/// How a version's behaviour differs from the previous version's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BehaviourChange {
    /// `dangerous` when a finding of high severity appeared; `unsure` when another
    /// finding appeared, acts were added, or either side was not completely seen; `benign`
    /// when only findings or acts went away.
    pub class: String,
    /// Findings the newer version has and the older had not.
    pub findings_added: Vec<String>,
    /// Findings the older version had and the newer has not.
    pub findings_removed: Vec<String>,
    /// Acts the newer version did and the older did not.
    pub acts_added: Vec<String>,
    /// Acts the older version did and the newer did not.
    pub acts_removed: Vec<String>,
}

/// One side of a stored `behaviour` change (`changes.old_behaviour`, `changes.new_behaviour`):
/// the version, and on the newer side what differs. One type for the index that writes it and
/// the API that shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BehaviourSide {
    /// The version.
    pub version: String,
    /// What differs (the newer side only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<BehaviourChange>,
}

/// One side of a stored `registry` change (`changes.old_registry`, `changes.new_registry`): the
/// version, and on the newer side its comparison with the older. One type for the index that
/// writes it and the API that shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistrySide {
    /// The version.
    pub version: String,
    /// The comparison (the newer side only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<RegistryComparison>,
}

/// A change side as the `changes` row stores it: compact JSON, members in code-point order (the
/// text it has always had).
pub(crate) fn side_text(side: &impl Serialize) -> Result<String, serde_json::Error> {
    Ok(serde_json::to_value(side)?.to_string())
}

/// Compare an older version's behaviour with a newer one's; `None` when they behave the same.
pub fn compare(old: &Behaviour, new: &Behaviour) -> Option<BehaviourChange> {
    let (a, b) = (profile(old), profile(new));
    if a == b {
        return None;
    }
    let diff = |x: &BTreeSet<String>, y: &BTreeSet<String>| -> Vec<String> {
        x.difference(y).cloned().collect()
    };
    let findings_added = diff(&b.findings, &a.findings);
    let acts_added = diff(&b.acts, &a.acts);
    // The severity is the sandbox's (its finding rules), carried with each finding.
    let high_added = new.findings.iter().any(|f| {
        f.severity == "high" && findings_added.contains(&format!("{} {}", f.phase, f.code))
    });
    let class = if high_added {
        "dangerous"
    } else if !findings_added.is_empty() || !acts_added.is_empty() || !old.complete || !new.complete
    {
        "unsure"
    } else {
        "benign"
    };
    Some(BehaviourChange {
        class: class.to_owned(),
        findings_removed: diff(&a.findings, &b.findings),
        findings_added,
        acts_removed: diff(&a.acts, &b.acts),
        acts_added,
    })
}

/// Version 5 (registry signals, issue #15): each package observation's registry facts
/// (`registry`: the document's `package.registry`, JSON), the entry of the previous observed
/// version it was compared with (`registry_previous`) and the comparison
/// (`registry_comparison`: a [`RegistryComparison`], JSON); and `changes` rebuilt (same ids
/// and rows) so that it holds `registry` changes, with their two sides in `old_registry`
/// (`{"version"}`) and `new_registry` (`{"version", "comparison"}`). Rows indexed before have no
/// facts (their documents have none); [`Index::rebuild`](crate::Index::rebuild) re-derives
/// everything from the log. Rebuilding `changes` drops its indexes, so every index on it is
/// created again here, the stats' `changes_observed_at` (another version-5 piece) included:
/// the merged migration may run the pieces in either order.
pub(crate) const REGISTRY_SIGNAL_TABLES: &str = "
ALTER TABLE package_observations ADD COLUMN registry TEXT;
ALTER TABLE package_observations ADD COLUMN registry_previous INTEGER;
ALTER TABLE package_observations ADD COLUMN registry_comparison TEXT;
CREATE TABLE changes_v5 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    target_id TEXT NOT NULL,
    server TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    old_entry INTEGER NOT NULL,
    new_entry INTEGER NOT NULL,
    old_full TEXT NOT NULL,
    new_full TEXT NOT NULL,
    old_mtl1 TEXT,
    new_mtl1 TEXT,
    class TEXT NOT NULL CHECK (class IN ('benign', 'unsure', 'dangerous')),
    added INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    diff TEXT,
    classification TEXT,
    kind TEXT NOT NULL DEFAULT 'tools'
        CHECK (kind IN ('tools', 'authorization', 'behaviour', 'registry')),
    old_auth TEXT,
    new_auth TEXT,
    old_behaviour TEXT,
    new_behaviour TEXT,
    old_registry TEXT,
    new_registry TEXT,
    UNIQUE (new_entry, kind)
) STRICT;
INSERT INTO changes_v5 (id, target_id, server, endpoint, observed_at, old_entry, new_entry,
    old_full, new_full, old_mtl1, new_mtl1, class, added, removed, modified, diff,
    classification, kind, old_auth, new_auth, old_behaviour, new_behaviour)
SELECT id, target_id, server, endpoint, observed_at, old_entry, new_entry, old_full, new_full,
    old_mtl1, new_mtl1, class, added, removed, modified, diff, classification, kind, old_auth,
    new_auth, old_behaviour, new_behaviour FROM changes;
DROP TABLE changes;
ALTER TABLE changes_v5 RENAME TO changes;
CREATE INDEX IF NOT EXISTS changes_target ON changes (target_id, id);
CREATE INDEX IF NOT EXISTS changes_server ON changes (server, id);
CREATE INDEX IF NOT EXISTS changes_class ON changes (class, id);
CREATE INDEX IF NOT EXISTS changes_new_entry ON changes (new_entry);
CREATE INDEX IF NOT EXISTS changes_observed_at ON changes (observed_at, kind, class);
";

/// The version of `package` (`npm:<name>@<version>`, `pypi:<name>@<version>`): what follows
/// the last `@` after the ecosystem's prefix and a scope's leading `@`.
pub fn version_of(package: &str) -> &str {
    let rest = package.split_once(':').map_or(package, |(_, r)| r);
    let skip = usize::from(rest.starts_with('@'));
    match rest[skip..].rfind('@') {
        Some(i) => &rest[skip + i + 1..],
        None => "",
    }
}

/// One indexed observation of a package version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageObservation {
    /// The log entry.
    pub entry: u64,
    /// `npm:<name>@<version>`.
    pub package: String,
    /// The version.
    pub version: String,
    /// How it ended.
    pub status: String,
    /// When (the entry's `observedAt`).
    pub observed_at: String,
    /// The observer that made it.
    pub observer: Option<String>,
    /// `ok` and every phase completely seen.
    pub complete: bool,
    /// What the sandbox saw.
    pub behaviour: Behaviour,
    /// What the registry said of the version, when its metadata was read.
    pub registry: Option<RegistryFacts>,
    /// The log entry of the previous observed version its facts were compared with.
    pub registry_previous: Option<u64>,
    /// How its facts differ from that version's (the flags).
    pub registry_comparison: Option<RegistryComparison>,
}

/// The columns [`package_row`] reads, joined with the entry's observation row.
const PACKAGE_SELECT: &str = "SELECT p.entry, p.package, p.version, p.status, o.observed_at,
         p.observer, p.complete, p.behaviour, p.registry, p.registry_previous,
         p.registry_comparison
     FROM package_observations p JOIN observations o ON o.entry = p.entry";

/// Column `i`, JSON the index wrote, read back (one that does not read back is an error).
fn json_column<T: serde::de::DeserializeOwned>(
    r: &rusqlite::Row,
    i: usize,
) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = r.get(i)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

fn package_row(r: &rusqlite::Row) -> rusqlite::Result<PackageObservation> {
    let behaviour: String = r.get(7)?;
    Ok(PackageObservation {
        entry: crate::rows::unsigned(r, 0)?.unwrap_or_default(),
        package: r.get(1)?,
        version: r.get(2)?,
        status: r.get(3)?,
        observed_at: r.get(4)?,
        observer: r.get(5)?,
        complete: r.get(6)?,
        // The index wrote it; one that does not read back is an error, never an empty
        // behaviour in an answer.
        behaviour: serde_json::from_str(&behaviour).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(7, rusqlite::types::Type::Text, Box::new(e))
        })?,
        registry: json_column(r, 8)?,
        registry_previous: crate::rows::unsigned(r, 9)?,
        registry_comparison: json_column(r, 10)?,
    })
}

impl crate::Index {
    /// The indexed observations of target `target_id`'s package versions, oldest first: the
    /// newest `limit` of them.
    pub fn package_observations(
        &self,
        target_id: &str,
        limit: usize,
    ) -> Result<Vec<PackageObservation>, crate::IndexError> {
        let mut st = self.conn.prepare_cached(&format!(
            "{PACKAGE_SELECT} WHERE p.target_id = ?1 ORDER BY p.entry DESC LIMIT ?2"
        ))?;
        let rows = st.query_map(
            rusqlite::params![target_id, i64::try_from(limit).unwrap_or(i64::MAX)],
            package_row,
        )?;
        let mut out: Vec<PackageObservation> = rows.collect::<Result<_, _>>()?;
        out.reverse();
        Ok(out)
    }

    /// The indexed observation of log entry `entry`, if it is a package's.
    pub fn package_observation(
        &self,
        entry: u64,
    ) -> Result<Option<PackageObservation>, crate::IndexError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .prepare_cached(&format!("{PACKAGE_SELECT} WHERE p.entry = ?1"))?
            .query_row([crate::rows::int(entry)?], package_row)
            .optional()?)
    }

    /// The newest version of target `target_id` observed before log entry `entry` that is not
    /// `version`.
    pub fn package_version_before(
        &self,
        target_id: &str,
        entry: u64,
        version: &str,
    ) -> Result<Option<String>, crate::IndexError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .prepare_cached(
                "SELECT version FROM package_observations
                 WHERE target_id = ?1 AND entry < ?2 AND version <> ?3
                 ORDER BY entry DESC LIMIT 1",
            )?
            .query_row(
                rusqlite::params![target_id, crate::rows::int(entry)?, version],
                |r| r.get(0),
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The facts as a stored document holds them, read at the edge as the index reads them.
    fn from_facts(facts: &Value, listed: &[String]) -> Behaviour {
        behaviour_of(Some(facts), listed)
    }

    fn facts(startup_decoys: &[&str], findings: Value, complete: bool) -> Value {
        json!({
            "observer": "toolmark-sandbox/1",
            "runsc": "runsc version 0.0~20221219.0",
            "complete": complete,
            "installScripts": [{"package": "evil", "script": "postinstall", "command": "node x"}],
            "calls": [{"tool": "echo", "outcome": "ok"}, {"tool": "big", "outcome": "skipped"}],
            "behaviour": [
                {"phase": "install", "complete": true, "incomplete": [], "exec": [{"what": "/usr/bin/node", "pid": 3, "comm": "node"}],
                 "network": [], "lookups": [], "requests": [], "decoys": [], "writes": [{"what": "/home/decoy/.bashrc", "pid": 3, "comm": "node"}]},
                {"phase": "startup", "complete": complete, "incomplete": if complete { json!([]) } else { json!(["phase-cut"]) },
                 "exec": [], "network": [{"what": "collect.example:443 (127.128.0.1)", "pid": 2, "comm": "node"}],
                 "lookups": ["collect.example"], "requests": ["https://collect.example"],
                 "decoys": startup_decoys.iter().map(|d| json!({"what": d, "pid": 2, "comm": "node"})).collect::<Vec<_>>(),
                 "writes": []},
                {"phase": "calls", "complete": true, "incomplete": [], "exec": [], "network": [], "lookups": [],
                 "requests": [], "decoys": [], "writes": []}
            ],
            "findings": findings,
        })
    }

    #[test]
    fn facts_read_into_wardens_phases_with_home_relative_decoys() {
        let f = facts(
            &["/home/decoy/.ssh/id_rsa", "/home/decoy/.ssh/id_rsa"],
            json!([{"code": "READS_SECRETS", "severity": "high", "phase": "startup", "evidence": ["/home/decoy/.ssh/id_rsa"]}]),
            true,
        );
        let b = from_facts(&f, &["echo".into(), "big".into()]);
        assert!(b.complete);
        assert_eq!(b.observer.as_deref(), Some("toolmark-sandbox/1"));
        assert_eq!(b.startup.decoys, [".ssh/id_rsa"]);
        assert_eq!(b.install_scripts.writes, [".bashrc"]);
        assert_eq!(b.install_scripts.packages, ["evil"]);
        assert_eq!(b.startup.tools, ["echo", "big"]);
        assert_eq!(b.calls.tools, ["echo"]);
        assert_eq!(b.findings[0].phase, "startup");
        let wire = serde_json::to_value(&b).unwrap();
        assert!(wire["installScripts"]["exec"].is_array());
        assert_eq!(wire["startup"]["lookups"], json!(["collect.example"]));
    }

    #[test]
    fn facts_not_shaped_as_the_sandbox_writes_them_are_not_complete() {
        let b = from_facts(
            &json!({"complete": true, "behaviour": [{"nophase": 1}]}),
            &[],
        );
        assert!(!b.complete);
        let b = from_facts(&json!("nonsense"), &[]);
        assert!(!b.complete);
        assert!(!b.startup.complete);
    }

    #[test]
    fn the_same_behaviour_with_other_run_addresses_is_no_change() {
        let a = from_facts(&facts(&[], json!([]), true), &[]);
        let mut f = facts(&[], json!([]), true);
        f["behaviour"][1]["network"][0]["what"] = json!("collect.example:443 (127.128.0.9)");
        let b = from_facts(&f, &["other".into()]);
        assert_eq!(compare(&a, &b), None);
    }

    #[test]
    fn a_new_secret_read_is_a_dangerous_change() {
        let old = from_facts(&facts(&[], json!([]), true), &[]);
        let new = from_facts(
            &facts(
                &["/home/decoy/.aws/credentials"],
                json!([{"code": "READS_SECRETS", "severity": "high", "phase": "startup", "evidence": []}]),
                true,
            ),
            &[],
        );
        let change = compare(&old, &new).unwrap();
        assert_eq!(change.class, "dangerous");
        assert_eq!(change.findings_added, ["startup READS_SECRETS"]);
        assert_eq!(change.acts_added, ["startup decoy .aws/credentials"]);
        // The other way round, only something went away.
        let back = compare(&new, &old).unwrap();
        assert_eq!(back.class, "benign");
        assert_eq!(back.findings_removed, ["startup READS_SECRETS"]);
    }

    #[test]
    fn a_change_involving_an_incomplete_observation_is_unsure() {
        let old = from_facts(&facts(&[], json!([]), true), &[]);
        let mut f = facts(&[], json!([]), false);
        f["behaviour"][1]["lookups"] = json!([]);
        let new = from_facts(&f, &[]);
        assert_eq!(compare(&old, &new).unwrap().class, "unsure");
    }

    #[test]
    fn change_sides_keep_the_text_they_had_as_untyped_json() {
        let old = from_facts(&facts(&[], json!([]), true), &[]);
        let new = from_facts(
            &facts(&["/home/decoy/.aws/credentials"], json!([]), false),
            &[],
        );
        let change = compare(&old, &new).unwrap();
        let side = BehaviourSide {
            version: "0.2.0".into(),
            change: Some(change.clone()),
        };
        assert_eq!(
            side_text(&side).unwrap(),
            json!({"version": "0.2.0", "change": change}).to_string()
        );
        let read: BehaviourSide = serde_json::from_str(&side_text(&side).unwrap()).unwrap();
        assert_eq!(read, side);
        let older = RegistrySide {
            version: "0.1.0".into(),
            comparison: None,
        };
        assert_eq!(
            side_text(&older).unwrap(),
            json!({"version": "0.1.0"}).to_string()
        );
    }

    #[test]
    fn versions_are_read_after_the_scope() {
        assert_eq!(version_of("npm:@scope/name@1.2.3"), "1.2.3");
        assert_eq!(version_of("npm:left-pad@1.3.0"), "1.3.0");
        assert_eq!(version_of("pypi:mcp-server-time@2026.10.19"), "2026.10.19");
        assert_eq!(version_of("npm:@scope/name"), "");
    }
}
