//! Findings: what a package's observed behaviour says, with HISTOR's codes where they exist
//! (`../shared/reference/histor-peer.md` §6) and three it has not.
//!
//! | code | severity | rule |
//! |---|---|---|
//! | `READS_SECRETS` | high | a phase opened a decoy (a `.env` in the working directory does not count: servers read their `.env` by design) |
//! | `PERSISTENCE` | high | a phase wrote a persistence path or outside the trees it may write (opened for writing, renamed or linked onto, a directory made), or a persistence path appeared or changed in the decoy HOME the trace did not show |
//! | `STARTUP_NETWORK` | medium | the startup phase connected anywhere or looked a name up (network during calls is what many tools are for: not a finding) |
//! | `LATE_NETWORK` | medium | connected or looked a name up after its last answer, with no call in flight (the calls' grace, which is the calls phase's: a beacon fired at stdin's close or by a timer after the last call) |
//! | `STARTS_PROGRAMS` | low | the startup or calls phase started a program |
//! | `INSTALL_BEHAVIOUR` | medium | an install script (or a wheel's `.pth` code or `sitecustomize`) connected, looked a name up or started a program beyond the shell npm runs it in |
//! | `EXFILTRATION` | high | the run's decoy canary — as written or encoded ([`crate::canary`]) — left through a connection the trace or a trap saw |
//! | `TOOL_OUTPUT_LEAK` | high | the run's decoy canary, as written or encoded, came back in a tool result |
//!
//! A finding is a fact about what was seen; a phase that was not completely seen is said so
//! beside the findings (`complete`), never read as clean.

use crate::behaviour::Behaviour;

// The phases and severities are the facts' own: one definition with the type the index reads.
pub use toolmark_observation::sandbox::{Phase, Severity};

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its code (`READS_SECRETS`, …).
    pub code: &'static str,
    /// How serious.
    pub severity: Severity,
    /// The phase it was seen in.
    pub phase: Phase,
    /// What was seen (paths, addresses, programs), at most [`MAX_EVIDENCE`].
    pub evidence: Vec<String>,
}

/// Most evidence items a finding lists.
pub const MAX_EVIDENCE: usize = 20;

/// What one phase showed, as the findings read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseFacts {
    /// The trace's reading of the phase.
    pub behaviour: Behaviour,
    /// Names looked up (or `?` for a lookup whose name is unknown).
    pub lookups: Vec<String>,
    /// Requests the traps took (`https://name`, `smtp://name to recipients`).
    pub requests: Vec<String>,
    /// Where the decoy canary was seen leaving (connections, trap payloads), with its form
    /// when it was encoded (`tcp://collect.example:4444 (hex)`).
    pub exfiltrated: Vec<String>,
    /// Tools whose result carried the decoy canary (with its form when it was encoded).
    pub leaked_by: Vec<String>,
    /// Persistence paths that appeared or changed in the decoy HOME during the phase without a
    /// traced call showing it (the second witness, [`crate::home`]): `created <path>`,
    /// `changed <path>`, `symlinked <path>` (a directory on the way to one made a link).
    pub home: Vec<String>,
    /// Connections and lookups after the last answer with no call in flight (the calls'
    /// grace; calls phase only), as `network` and `dns:<name>` read: `collect.example:443
    /// (127.128.0.1)`, `dns:collect.example`.
    pub late: Vec<String>,
}

/// The findings for the phases seen, in phase order.
pub fn of(phases: &[(Phase, &PhaseFacts)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (phase, f) in phases {
        let b = &f.behaviour;
        let mut add = |code, severity, evidence: Vec<String>| {
            if !evidence.is_empty() {
                let mut evidence = evidence;
                evidence.sort();
                evidence.dedup();
                evidence.truncate(MAX_EVIDENCE);
                out.push(Finding {
                    code,
                    severity,
                    phase: *phase,
                    evidence,
                });
            }
        };
        let secrets = b
            .decoys
            .iter()
            .filter(|a| !a.what.ends_with("/.env"))
            .map(|a| a.what.clone())
            .collect();
        add("READS_SECRETS", Severity::High, secrets);
        // Each item says its witness: the trace's act as it is, the HOME's `home: …`.
        add(
            "PERSISTENCE",
            Severity::High,
            b.writes
                .iter()
                .map(|a| a.what.clone())
                .chain(f.home.iter().map(|h| format!("home: {h}")))
                .collect(),
        );
        let network = || {
            b.network
                .iter()
                .map(|a| a.what.clone())
                .chain(f.lookups.iter().map(|l| format!("dns:{l}")))
                .collect::<Vec<_>>()
        };
        let programs = || b.exec.iter().map(|a| a.what.clone()).collect::<Vec<_>>();
        match phase {
            Phase::Install => {
                let mut e = network();
                e.extend(programs());
                add("INSTALL_BEHAVIOUR", Severity::Medium, e);
            }
            Phase::Startup => {
                add("STARTUP_NETWORK", Severity::Medium, network());
                add("STARTS_PROGRAMS", Severity::Low, programs());
            }
            Phase::Calls => {
                add("STARTS_PROGRAMS", Severity::Low, programs());
                // Network within a call is what the tool is for; after the last answer, with
                // nothing asked, it is the package's own.
                add("LATE_NETWORK", Severity::Medium, f.late.clone());
            }
        }
        add("EXFILTRATION", Severity::High, f.exfiltrated.clone());
        add("TOOL_OUTPUT_LEAK", Severity::High, f.leaked_by.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::Act;

    fn act(what: &str) -> Act {
        Act {
            what: what.into(),
            pid: 2,
            comm: "node".into(),
            at: "1202 01:40:15.124174".into(),
        }
    }

    fn codes(found: &[Finding]) -> Vec<(&str, &str)> {
        found.iter().map(|f| (f.code, f.phase.as_str())).collect()
    }

    #[test]
    fn each_rule_fires_in_its_phase_only() {
        let mut startup = PhaseFacts::default();
        startup.behaviour.network.push(act("192.0.2.1:443"));
        startup.behaviour.exec.push(act("/usr/bin/sh"));
        let mut calls = PhaseFacts::default();
        calls.behaviour.network.push(act("192.0.2.1:443"));
        calls.leaked_by.push("get-env".into());
        let mut install = PhaseFacts::default();
        install.lookups.push("exfil.example".into());
        install.behaviour.decoys.push(act("/home/decoy/.npmrc"));
        install.behaviour.writes.push(act("/home/decoy/.bashrc"));
        let found = of(&[
            (Phase::Install, &install),
            (Phase::Startup, &startup),
            (Phase::Calls, &calls),
        ]);
        assert_eq!(
            codes(&found),
            [
                ("READS_SECRETS", "install"),
                ("PERSISTENCE", "install"),
                ("INSTALL_BEHAVIOUR", "install"),
                ("STARTUP_NETWORK", "startup"),
                ("STARTS_PROGRAMS", "startup"),
                ("TOOL_OUTPUT_LEAK", "calls"),
            ]
        );
        assert_eq!(found[2].evidence, ["dns:exfil.example"]);
    }

    #[test]
    fn network_after_the_last_answer_with_no_call_in_flight_is_late_network_in_calls() {
        let mut calls = PhaseFacts::default();
        // Within a call: what the tool is for. In the grace: both kept in the phase's facts,
        // and the late ones found.
        calls
            .behaviour
            .network
            .push(act("collect.example:443 (127.128.0.1)"));
        calls.lookups.push("collect.example".into());
        calls
            .late
            .extend(["collect.example:443 (127.128.0.1)", "dns:collect.example"].map(String::from));
        let found = of(&[(Phase::Calls, &calls)]);
        assert_eq!(codes(&found), [("LATE_NETWORK", "calls")]);
        assert_eq!(found[0].severity, Severity::Medium);
        assert_eq!(
            found[0].evidence,
            ["collect.example:443 (127.128.0.1)", "dns:collect.example"]
        );
        // Network within the calls only: nothing.
        calls.late.clear();
        assert!(of(&[(Phase::Calls, &calls)]).is_empty());
    }

    #[test]
    fn reading_the_working_directorys_env_file_is_not_reading_secrets() {
        let mut f = PhaseFacts::default();
        f.behaviour.decoys.push(act("/home/decoy/.env"));
        assert!(of(&[(Phase::Startup, &f)]).is_empty());
    }

    #[test]
    fn a_phase_with_nothing_seen_has_no_findings() {
        let f = PhaseFacts::default();
        assert!(
            of(&[
                (Phase::Install, &f),
                (Phase::Startup, &f),
                (Phase::Calls, &f)
            ])
            .is_empty()
        );
    }

    #[test]
    fn a_persistence_path_only_the_home_witness_saw_is_persistence_saying_so() {
        let mut f = PhaseFacts::default();
        f.home.push("created /home/decoy/.config/autostart".into());
        let found = of(&[(Phase::Calls, &f)]);
        assert_eq!(codes(&found), [("PERSISTENCE", "calls")]);
        assert_eq!(
            found[0].evidence,
            ["home: created /home/decoy/.config/autostart"]
        );
    }
}
