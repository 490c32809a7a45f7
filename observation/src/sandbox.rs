//! The package sandbox's facts about one run ([`SandboxFacts`]): one type for the sandbox that
//! reports them (`toolmark_sandbox::observe::Report::facts`, kept whole as the observation
//! document's `package.sandbox`) and the index that reads them into the shape answers show
//! (`toolmark_index::packages::behaviour_of`, [`crate::behaviour::Behaviour`]).
//!
//! The members and their shapes are those the sandbox has written since its facts were first
//! stored (`toolmark-sandbox/1`); members a version did not write yet (`callsGraceMs`, a
//! phase's `home` and `late`, …) read as absent or empty, and members this type does not name
//! are ignored. A value of another shape — a member of another type, a phase or finding of no
//! known phase or severity, an act without `what`, a call without `tool` or `outcome`, an
//! install script without `package`, `script` or `command` — is not read at all: the reader
//! says why ([`SandboxFacts::read`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The phases of one package's observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Install-time code: npm lifecycle scripts (`npm rebuild` in the sandbox), a wheel tree's
    /// `.pth` code and `sitecustomize` (a Python starting with the tree).
    Install,
    /// Start until the tools are listed.
    Startup,
    /// Each tool called once with canary arguments.
    Calls,
}

impl Phase {
    /// The phase's name in the facts and reports: `install`, `startup`, `calls`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Install => "install",
            Phase::Startup => "startup",
            Phase::Calls => "calls",
        }
    }

    /// The phase's name in answers (HISTOR's and WARDEN's): `installScripts`, `startup`,
    /// `calls`.
    pub fn answer_name(self) -> &'static str {
        match self {
            Phase::Install => "installScripts",
            Phase::Startup => "startup",
            Phase::Calls => "calls",
        }
    }
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Low,
    /// Worth a look.
    Medium,
    /// A credential or the host is at stake.
    High,
}

impl Severity {
    /// `low`, `medium` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

/// What the sandbox saw of one run (the observation document's `package.sandbox`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxFacts {
    /// The observer that made them (`toolmark-sandbox/3`, or an older one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer: Option<String>,
    /// `runsc --version`'s first line (empty when gVisor did not run).
    #[serde(default)]
    pub runsc: String,
    /// Status `ok` and every phase run completely seen.
    #[serde(default)]
    pub complete: bool,
    /// How long each step took, in milliseconds (`tree`, `install`, `startup`, `calls`,
    /// `grace`, `teardown`).
    #[serde(default)]
    pub timings_ms: BTreeMap<String, u64>,
    /// The grace the server was given after its last answer, in milliseconds (`null` when no
    /// calls phase ran).
    #[serde(default)]
    pub calls_grace_ms: Option<u64>,
    /// Install-time code found in the tree.
    #[serde(default)]
    pub install_scripts: Vec<InstallScript>,
    /// Each tool's call.
    #[serde(default)]
    pub calls: Vec<CallFacts>,
    /// The phases run, in order.
    #[serde(default)]
    pub behaviour: Vec<PhaseFacts>,
    /// What the phases show.
    #[serde(default)]
    pub findings: Vec<FindingFacts>,
}

/// Install-time code found in the tree: an npm script (package directory, script, text), or a
/// wheel tree's `.pth` line (file, `pth`, line), `sitecustomize` or console script
/// (`.dist-info`, `console_scripts`, `name = module:attr`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallScript {
    /// The package (or file) it belongs to.
    pub package: String,
    /// Which script.
    pub script: String,
    /// Its text.
    pub command: String,
}

/// One tool call's outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFacts {
    /// The tool.
    pub tool: String,
    /// `ok`, `error`, `input-required`, `timeout`, `skipped`, `not-called` or `gone`.
    pub outcome: String,
    /// Why, for anything but `ok` (`null` for `ok`).
    #[serde(default)]
    pub detail: Option<String>,
}

/// One act a trace showed: a program started, a connection, a decoy opened, a file written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Act {
    /// What: a path, a program, an address.
    pub what: String,
    /// The process (pid inside the sandbox).
    #[serde(default)]
    pub pid: u32,
    /// The command name the process had.
    #[serde(default)]
    pub comm: String,
}

/// What one phase showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseFacts {
    /// Which.
    pub phase: Phase,
    /// Everything in it was seen.
    #[serde(default)]
    pub complete: bool,
    /// Why not, when not.
    #[serde(default)]
    pub incomplete: Vec<String>,
    /// Programs started.
    #[serde(default)]
    pub exec: Vec<Act>,
    /// Connections attempted (`host:port (address)`, `unix:<path>`).
    #[serde(default)]
    pub network: Vec<Act>,
    /// Names looked up (`?` for a lookup whose name is unknown).
    #[serde(default)]
    pub lookups: Vec<String>,
    /// Requests the traps took (`https://name`, `smtp://name to recipients`).
    #[serde(default)]
    pub requests: Vec<String>,
    /// Decoys opened.
    #[serde(default)]
    pub decoys: Vec<Act>,
    /// Files written at persistence paths or outside the allowed trees.
    #[serde(default)]
    pub writes: Vec<Act>,
    /// Persistence paths that appeared or changed in the decoy HOME without a traced call
    /// showing it (`created <path>`, `changed <path>`, `symlinked <path>`).
    #[serde(default)]
    pub home: Vec<String>,
    /// Connections and lookups after the last answer with no call in flight (calls phase).
    #[serde(default)]
    pub late: Vec<String>,
    /// Where the decoy canary was seen leaving, with its form when it was encoded.
    #[serde(default)]
    pub exfiltrated: Vec<String>,
    /// Tools whose result carried the decoy canary.
    #[serde(default)]
    pub leaked_by: Vec<String>,
}

/// `toolmark package observe`'s report of one package version (its `--json` output): the
/// observation the log would hold (status, digests, tools, the raw `initialize` result), the
/// sandbox's facts beside them, and the registry's signals when the version was fetched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageReport {
    /// `npm:<name>@<version>` or `pypi:<name>@<version>` as installed (the spec asked for when
    /// nothing was installed).
    pub package: String,
    /// The observation's status.
    pub status: String,
    /// Why, for a status other than `ok`.
    pub detail: String,
    /// The artifact's SHA-256 (SRI; empty when nothing was fetched).
    pub artifact: String,
    /// How long the observation took.
    pub elapsed_ms: u64,
    /// The protocol version the server answered with.
    pub protocol_version: Option<String>,
    /// The tools' names, in the server's order (`null` for a tool without a string name; none
    /// unless the status is `ok`).
    pub tools: Vec<Option<String>>,
    /// The tool set's digests (none unless the status is `ok`).
    pub digests: Option<ReportDigests>,
    /// The server's `initialize` result as it sent it.
    pub initialize: Option<serde_json::Value>,
    /// What the sandbox saw.
    #[serde(flatten)]
    pub facts: SandboxFacts,
    /// The registry's signals for the version (the document's `package.registry`), when it was
    /// fetched from a registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<crate::registry_facts::RegistryFacts>,
}

impl PackageReport {
    /// The report for people (`toolmark package observe` without `--json`): status and
    /// detail, artifact, digests, tools, one line per phase and one per finding.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut out = format!("{}  {}\n", self.package, self.status);
        // Writing to a String cannot fail.
        let mut line = |text: std::fmt::Arguments| {
            let _ = writeln!(out, "  {text}");
        };
        if !self.detail.is_empty() {
            line(format_args!("{}", self.detail));
        }
        line(format_args!("artifact {}", self.artifact));
        if let Some(d) = &self.digests {
            line(format_args!("mtl1 {}", d.mtl1.as_deref().unwrap_or("-")));
            line(format_args!("full {}", d.full));
        }
        let tools: Vec<&str> = self
            .tools
            .iter()
            .map(|t| t.as_deref().unwrap_or(""))
            .collect();
        line(format_args!(
            "tools ({}): {}",
            tools.len(),
            tools.join(", ")
        ));
        for p in &self.facts.behaviour {
            line(format_args!(
                "{:8} {}  exec {} network {} lookups {} decoys {} writes {}",
                p.phase.as_str(),
                if p.complete { "complete" } else { "INCOMPLETE" },
                p.exec.len(),
                p.network.len(),
                p.lookups.len(),
                p.decoys.len(),
                p.writes.len()
            ));
        }
        if self.facts.findings.is_empty() {
            let incomplete = if self.facts.complete {
                ""
            } else {
                " (but the observation is incomplete)"
            };
            line(format_args!("findings: none{incomplete}"));
        }
        for f in &self.facts.findings {
            line(format_args!(
                "{} {} [{}] {}",
                f.severity.as_str(),
                f.code,
                f.phase.as_str(),
                f.evidence.join(", ")
            ));
        }
        out
    }
}

/// A reported tool set's digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportDigests {
    /// MTL/1 (none when the set has no MTL/1 digest).
    pub mtl1: Option<String>,
    /// `toolmark/1`.
    pub full: String,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingFacts {
    /// Its code (`READS_SECRETS`, …).
    pub code: String,
    /// How serious.
    pub severity: Severity,
    /// The phase it was seen in.
    pub phase: Phase,
    /// What was seen (paths, addresses, programs).
    #[serde(default)]
    pub evidence: Vec<String>,
}

/// Facts that are not of [`SandboxFacts`]'s shape.
#[derive(Debug, thiserror::Error)]
#[error("the sandbox's facts are not of their shape: {0}")]
pub struct FactsError(#[from] serde_json::Error);

impl SandboxFacts {
    /// Reads the facts of a stored document (`package.sandbox`).
    ///
    /// # Errors
    ///
    /// [`FactsError`] for a value of another shape (see the module documentation).
    pub fn read(value: &serde_json::Value) -> Result<SandboxFacts, FactsError> {
        Ok(SandboxFacts::deserialize(value)?)
    }

    /// The facts as the document's `package.sandbox` holds them.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("the sandbox's facts serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_package_report_holds_the_facts_beside_the_observation_and_reads_back() {
        let report = PackageReport {
            package: "npm:demo@1.0.0".into(),
            status: "ok".into(),
            detail: String::new(),
            artifact: "sha256-AAAA".into(),
            elapsed_ms: 12,
            protocol_version: Some("2025-06-18".into()),
            tools: vec![Some("echo".into()), None],
            digests: Some(ReportDigests {
                mtl1: None,
                full: "sha256-BBBB".into(),
            }),
            initialize: Some(json!({"serverInfo": {"name": "demo"}})),
            facts: SandboxFacts {
                complete: true,
                runsc: "runsc".into(),
                ..SandboxFacts::default()
            },
            registry: None,
        };
        let v = serde_json::to_value(&report).unwrap();
        // The facts' members stand beside the observation's, as `package.sandbox` would hold
        // them; a version not fetched from a registry has no `registry` member.
        assert_eq!(v["complete"], true);
        assert_eq!(v["runsc"], "runsc");
        assert_eq!(v["tools"], json!(["echo", null]));
        assert_eq!(v["digests"], json!({"mtl1": null, "full": "sha256-BBBB"}));
        assert!(v.get("registry").is_none());
        assert_eq!(serde_json::from_value::<PackageReport>(v).unwrap(), report);
    }

    #[test]
    fn a_package_report_for_people_says_status_digests_tools_phases_and_findings() {
        let mut report: PackageReport = serde_json::from_value(json!({
            "package": "npm:demo@1.0.0", "status": "ok", "detail": "", "artifact": "sha256-AAAA",
            "elapsedMs": 12, "protocolVersion": null, "tools": ["echo", null],
            "digests": {"mtl1": null, "full": "sha256-BBBB"}, "initialize": null,
            "runsc": "runsc", "complete": true,
            "behaviour": [{"phase": "install", "complete": false, "incomplete": ["trace"],
                "exec": [{"what": "/usr/bin/node", "pid": 3, "comm": "node"}], "network": [],
                "lookups": [], "requests": [], "decoys": [], "writes": []}],
        }))
        .unwrap();
        assert_eq!(
            report.text(),
            "npm:demo@1.0.0  ok\n  artifact sha256-AAAA\n  mtl1 -\n  full sha256-BBBB\n  \
             tools (2): echo, \n  install  INCOMPLETE  exec 1 network 0 lookups 0 decoys 0 \
             writes 0\n  findings: none\n"
        );
        report.facts.complete = false;
        report.facts.findings.push(FindingFacts {
            code: "INSTALL_BEHAVIOUR".into(),
            severity: Severity::Medium,
            phase: Phase::Install,
            evidence: vec!["/usr/bin/node".into(), "/bin/sh".into()],
        });
        assert!(
            report
                .text()
                .ends_with("  medium INSTALL_BEHAVIOUR [install] /usr/bin/node, /bin/sh\n"),
            "{}",
            report.text()
        );
    }

    #[test]
    fn facts_written_by_the_first_observer_read_with_later_members_empty() {
        // `toolmark-sandbox/1`'s members: no `callsGraceMs`, no `home` or `late`.
        let v = json!({
            "observer": "toolmark-sandbox/1", "runsc": "runsc version 0.0~20221219.0",
            "complete": true, "timingsMs": {"install": 1200},
            "installScripts": [{"package": "evil", "script": "postinstall", "command": "node x"}],
            "calls": [{"tool": "echo", "outcome": "ok", "detail": null}],
            "behaviour": [{"phase": "install", "complete": true, "incomplete": [],
                "exec": [{"what": "/usr/bin/node", "pid": 3, "comm": "node"}], "network": [],
                "lookups": [], "requests": [], "decoys": [], "writes": [],
                "exfiltrated": [], "leakedBy": []}],
            "findings": [{"code": "INSTALL_BEHAVIOUR", "severity": "medium", "phase": "install",
                "evidence": ["/usr/bin/node"]}],
        });
        let f = SandboxFacts::read(&v).unwrap();
        assert_eq!(f.calls_grace_ms, None);
        assert!(f.behaviour[0].home.is_empty() && f.behaviour[0].late.is_empty());
        assert_eq!(f.behaviour[0].exec[0].what, "/usr/bin/node");
        assert_eq!(f.findings[0].severity, Severity::Medium);
        assert_eq!(f.timings_ms["install"], 1200);
    }

    #[test]
    fn unknown_members_are_ignored_and_facts_of_another_shape_are_refused() {
        let f = SandboxFacts::read(&json!({"complete": true, "newer": [1]})).unwrap();
        assert!(f.complete);
        for bad in [
            json!("nonsense"),
            json!({"complete": "yes"}),
            json!({"behaviour": [{"nophase": 1}]}),
            json!({"behaviour": [{"phase": "uninstall"}]}),
            json!({"behaviour": [{"phase": "startup", "exec": [{"pid": 1}]}]}),
            json!({"findings": [{"code": "X", "severity": "dire", "phase": "startup"}]}),
            json!({"calls": [{"tool": "echo"}]}),
            json!({"installScripts": [{"package": "evil"}]}),
        ] {
            assert!(SandboxFacts::read(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nulls_the_sandbox_writes_are_written_and_read_back() {
        let f = SandboxFacts {
            observer: Some("toolmark-sandbox/2".into()),
            calls: vec![CallFacts {
                tool: "echo".into(),
                outcome: "ok".into(),
                detail: None,
            }],
            ..SandboxFacts::default()
        };
        let v = f.to_value();
        assert_eq!(v["callsGraceMs"], serde_json::Value::Null);
        assert_eq!(v["calls"][0]["detail"], serde_json::Value::Null);
        assert_eq!(SandboxFacts::read(&v).unwrap(), f);
    }
}
