//! Witness policies: which cosigners a checkpoint needs before anyone should trust it.
//!
//! A [`WitnessPolicy`] is a set of witnesses (name, cosignature key, optional submission URL),
//! groups (`k` of their members, `any` = 1, `all`), and one quorum: a witness, a group or
//! `none`. It is read from C2SP `tlog-policy` text ([`WitnessPolicy::parse`]):
//!
//! ```text
//! log <vkey> [<url>]
//! witness <name> <vkey> [<url>]
//! group <name> all|any|<k> <member>...
//! quorum <name>|none
//! ```
//!
//! or built from a list of witnesses and a count ([`WitnessPolicy::k_of`], what
//! `--witness VKEY@URL … --witness-quorum N` means). [`WitnessPolicy::check`] verifies a note's
//! cosignatures against it at a given time, with an optional maximum age: a cosignature counts
//! toward the quorum only if it verifies, is not older than the maximum age and is not dated more
//! than [`MAX_FUTURE_SECONDS`] ahead.
//!
//! It does not verify the log's own signature (that is [`crate::note::open_checkpoint`]'s job,
//! and the `log` lines are only parsed and kept), read a clock or dial a witness.

use crate::cosignature::{Found, WitnessKey, note_cosignatures};
use crate::merkle::{FormatError, truncate_for_error};
use crate::note::is_valid_name;

/// How far ahead of the verifier's clock a cosignature may be dated and still count (a witness's
/// clock may run a little fast); as `aics-tlog`'s default.
pub const MAX_FUTURE_SECONDS: u64 = 30;

/// The most witnesses, groups or logs one policy may name (the spec asks implementations to
/// support at least 32).
pub const MAX_POLICY_ITEMS: usize = 256;

/// The longest policy text read, in bytes.
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// A policy that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The policy text breaks the format; the line number is 1-based.
    #[error("policy line {line}: {reason}")]
    Syntax {
        /// The line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The policy as a whole cannot be used (no quorum line, a quorum above the witnesses…).
    #[error("policy: {0}")]
    Invalid(String),
    /// The note or one of its cosignatures is malformed, or a cosignature does not verify.
    #[error(transparent)]
    Note(#[from] FormatError),
}

/// One witness of a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    /// Its name in the policy (for `--witness` lists, the key's name).
    pub name: String,
    /// Its cosignature verifier key.
    pub key: WitnessKey,
    /// Its submission prefix (`<url>/add-checkpoint`), if the policy gives one.
    pub url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Witness(usize),
    Group(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    name: String,
    threshold: usize,
    members: Vec<Member>,
}

/// A witness policy (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessPolicy {
    logs: Vec<(String, Option<String>)>,
    witnesses: Vec<Witness>,
    groups: Vec<Group>,
    quorum: Option<Member>,
}

/// One cosigner that signed a note, per [`WitnessPolicy::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosigned {
    /// The witness's policy name.
    pub witness: String,
    /// Its key's name (the name on the signature line).
    pub key_name: String,
    /// When it cosigned (POSIX seconds).
    pub timestamp: u64,
    /// Whether it counts: not older than the maximum age, not too far in the future.
    pub fresh: bool,
}

/// What [`WitnessPolicy::check`] found in a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witnessed {
    /// Every policy witness whose cosignature verified, in policy order.
    pub cosigned: Vec<Cosigned>,
    /// Whether the fresh cosignatures satisfy the quorum.
    pub satisfied: bool,
    /// The newest timestamp of a fresh cosignature, if any.
    pub newest: Option<u64>,
}

impl WitnessPolicy {
    /// A policy that needs no witness (`quorum none`).
    pub fn none() -> WitnessPolicy {
        WitnessPolicy {
            logs: Vec::new(),
            witnesses: Vec::new(),
            groups: Vec::new(),
            quorum: None,
        }
    }

    /// `k` of the given witnesses (`k` = 0: none needed, though the witnesses are still
    /// submitted to and reported).
    ///
    /// # Errors
    ///
    /// [`PolicyError::Invalid`] if `k` is above the number of witnesses, a key is given twice,
    /// or there are more than [`MAX_POLICY_ITEMS`] witnesses.
    pub fn k_of(witnesses: Vec<Witness>, k: usize) -> Result<WitnessPolicy, PolicyError> {
        if witnesses.len() > MAX_POLICY_ITEMS {
            return Err(PolicyError::Invalid(format!(
                "{} witnesses, more than {MAX_POLICY_ITEMS}",
                witnesses.len()
            )));
        }
        if k > witnesses.len() {
            return Err(PolicyError::Invalid(format!(
                "a quorum of {k} needs at least {k} witnesses; {} configured",
                witnesses.len()
            )));
        }
        for (i, w) in witnesses.iter().enumerate() {
            if witnesses[..i]
                .iter()
                .any(|o| o.key.public_key() == w.key.public_key() || o.name == w.name)
            {
                return Err(PolicyError::Invalid(format!(
                    "witness {} is configured twice",
                    w.name
                )));
            }
        }
        let mut p = WitnessPolicy::none();
        if k > 0 {
            p.groups.push(Group {
                name: "quorum".into(),
                threshold: k,
                members: (0..witnesses.len()).map(Member::Witness).collect(),
            });
            p.quorum = Some(Member::Group(0));
        }
        p.witnesses = witnesses;
        Ok(p)
    }

    /// Reads C2SP `tlog-policy` text.
    ///
    /// Rules: `#` starts a comment; fields are separated by spaces or tabs; witness and group
    /// names share one namespace (and `none` is reserved); members must be defined on earlier
    /// lines and appear once per group; `k` is between 1 and the member count; exactly one
    /// `quorum` line; a key (compared on its public key) appears once.
    ///
    /// # Errors
    ///
    /// [`PolicyError::Syntax`] naming the line, or [`PolicyError::Invalid`].
    pub fn parse(text: &str) -> Result<WitnessPolicy, PolicyError> {
        if text.len() > MAX_POLICY_BYTES {
            return Err(PolicyError::Invalid(format!(
                "{} bytes, more than {MAX_POLICY_BYTES}",
                text.len()
            )));
        }
        let mut p = WitnessPolicy::none();
        let mut quorum_seen = false;
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |reason: String| PolicyError::Syntax { line, reason };
            let content = raw.split('#').next().unwrap_or_default();
            let f: Vec<&str> = content
                .split([' ', '\t'])
                .filter(|s| !s.is_empty())
                .collect();
            let Some((&kw, args)) = f.split_first() else {
                continue;
            };
            if p.logs.len() + p.witnesses.len() + p.groups.len() >= 3 * MAX_POLICY_ITEMS {
                return Err(err("too many items".into()));
            }
            match kw {
                "log" => {
                    let (vkey, url) = match args {
                        [v] => (*v, None),
                        [v, u] => (*v, Some((*u).to_owned())),
                        _ => return Err(err("expected: log <vkey> [<url>]".into())),
                    };
                    let parsed = crate::note::VerifierKey::parse(vkey)?;
                    if keys.contains(&parsed.public_key) {
                        return Err(err("this key is already in the policy".into()));
                    }
                    keys.push(parsed.public_key);
                    p.logs.push((vkey.to_owned(), url));
                }
                "witness" => {
                    let (name, vkey, url) = match args {
                        [n, v] => (*n, *v, None),
                        [n, v, u] => (*n, *v, Some((*u).to_owned())),
                        _ => return Err(err("expected: witness <name> <vkey> [<url>]".into())),
                    };
                    p.check_new_name(name).map_err(err)?;
                    let key = WitnessKey::parse(vkey)?;
                    let pk = key.public_key().to_vec();
                    if keys.contains(&pk) {
                        return Err(err("this key is already in the policy".into()));
                    }
                    keys.push(pk);
                    p.witnesses.push(Witness {
                        name: name.to_owned(),
                        key,
                        url,
                    });
                }
                "group" => {
                    let [name, k, members @ ..] = args else {
                        return Err(err("expected: group <name> all|any|<k> <member>...".into()));
                    };
                    p.check_new_name(name).map_err(err)?;
                    if members.is_empty() {
                        return Err(err("a group needs members".into()));
                    }
                    let mut ms = Vec::new();
                    for m in members {
                        let member = p
                            .lookup(m)
                            .ok_or_else(|| err(format!("{m:?} is not defined above")))?;
                        if ms.contains(&member) {
                            return Err(err(format!("{m:?} is listed twice")));
                        }
                        ms.push(member);
                    }
                    let threshold = match *k {
                        "all" => ms.len(),
                        "any" => 1,
                        n => n
                            .parse::<usize>()
                            .ok()
                            .filter(|n| (1..=ms.len()).contains(n))
                            .ok_or_else(|| {
                                err(format!(
                                    "{:?} is not all, any or a number from 1 to {}",
                                    truncate_for_error(n),
                                    ms.len()
                                ))
                            })?,
                    };
                    p.groups.push(Group {
                        name: (*name).to_owned(),
                        threshold,
                        members: ms,
                    });
                }
                "quorum" => {
                    if quorum_seen {
                        return Err(err("a second quorum line".into()));
                    }
                    quorum_seen = true;
                    let [name] = args else {
                        return Err(err("expected: quorum <name>|none".into()));
                    };
                    p.quorum = if *name == "none" {
                        None
                    } else {
                        Some(
                            p.lookup(name)
                                .ok_or_else(|| err(format!("{name:?} is not defined above")))?,
                        )
                    };
                }
                other => {
                    return Err(err(format!(
                        "unknown keyword {:?}",
                        truncate_for_error(other)
                    )));
                }
            }
        }
        if !quorum_seen {
            return Err(PolicyError::Invalid("no quorum line".into()));
        }
        Ok(p)
    }

    fn check_new_name(&self, name: &str) -> Result<(), String> {
        if name == "none" || !is_valid_name(name) {
            return Err(format!("{:?} cannot be a name", truncate_for_error(name)));
        }
        if self.lookup(name).is_some() {
            return Err(format!("{name:?} is already defined"));
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<Member> {
        if let Some(i) = self.witnesses.iter().position(|w| w.name == name) {
            return Some(Member::Witness(i));
        }
        self.groups
            .iter()
            .position(|g| g.name == name)
            .map(Member::Group)
    }

    /// The witnesses, in policy order.
    pub fn witnesses(&self) -> &[Witness] {
        &self.witnesses
    }

    /// The log verifier keys (and URLs) of `log` lines.
    pub fn logs(&self) -> &[(String, Option<String>)] {
        &self.logs
    }

    /// Whether a quorum is needed at all (`quorum none` and `k_of(_, 0)`: no).
    pub fn needs_cosignatures(&self) -> bool {
        self.quorum.is_some()
    }

    /// Whether the witnesses marked `true` (indexed as [`WitnessPolicy::witnesses`]) satisfy
    /// the quorum.
    pub fn satisfied_by(&self, signed: &[bool]) -> bool {
        // Groups only name members defined on earlier lines, so one forward pass decides every
        // group once (recursing instead would cost exponential time on a policy of groups that
        // each name the two before them).
        let mut groups: Vec<bool> = Vec::with_capacity(self.groups.len());
        let member = |m: Member, groups: &[bool]| match m {
            Member::Witness(i) => signed.get(i).copied().unwrap_or(false),
            Member::Group(g) => groups.get(g).copied().unwrap_or(false),
        };
        for g in &self.groups {
            let met = g.members.iter().filter(|&&m| member(m, &groups)).count() >= g.threshold;
            groups.push(met);
        }
        match self.quorum {
            None => true,
            Some(m) => member(m, &groups),
        }
    }

    /// A short description of the quorum, for messages: `2 of 3 witnesses`, `none`, or the
    /// policy's quorum name.
    pub fn describe(&self) -> String {
        match self.quorum {
            None => "none".into(),
            Some(Member::Witness(i)) => format!("witness {}", self.witnesses[i].name),
            Some(Member::Group(g)) => {
                let g = &self.groups[g];
                if g.name == "quorum"
                    && g.members.len() == self.witnesses.len()
                    && g.members.iter().all(|m| matches!(m, Member::Witness(_)))
                {
                    format!("{} of {} witnesses", g.threshold, self.witnesses.len())
                } else {
                    format!("group {}", g.name)
                }
            }
        }
    }

    /// Verifies the cosignatures of the policy's witnesses on a signed note (the log signature
    /// is not checked here) at time `now`, counting only those not older than `max_age`
    /// seconds (if given) and not dated more than [`MAX_FUTURE_SECONDS`] after `now`.
    ///
    /// # Errors
    ///
    /// [`PolicyError::Note`] if the note is malformed or a witness's line does not verify (a
    /// bad signature by a known key rejects the note, as signed-note says).
    pub fn check(
        &self,
        note: &[u8],
        now: u64,
        max_age: Option<u64>,
    ) -> Result<Witnessed, PolicyError> {
        let keys: Vec<WitnessKey> = self.witnesses.iter().map(|w| w.key.clone()).collect();
        let found = note_cosignatures(note, &keys)?;
        Ok(self.evaluate(&found, now, max_age))
    }

    /// The part of [`WitnessPolicy::check`] after the signatures: which of the verified
    /// cosignatures `found` (from [`note_cosignatures`] with the keys of
    /// [`WitnessPolicy::witnesses`], in that order) are fresh at `now`, and whether they satisfy
    /// the quorum. A reader that verified a note once (a server caching its published
    /// checkpoint) evaluates it again as time passes without verifying again. `found` entries
    /// whose key index is not a witness of this policy are ignored.
    pub fn evaluate(&self, found: &[Found], now: u64, max_age: Option<u64>) -> Witnessed {
        let mut signed = vec![false; self.witnesses.len()];
        let mut cosigned = Vec::new();
        let mut newest = None;
        for f in found.iter().filter(|f| f.key < self.witnesses.len()) {
            let too_old = max_age.is_some_and(|a| f.timestamp.saturating_add(a) < now);
            let too_new = f.timestamp > now.saturating_add(MAX_FUTURE_SECONDS);
            let fresh = !too_old && !too_new;
            if fresh {
                signed[f.key] = true;
                newest = newest.max(Some(f.timestamp));
            }
            cosigned.push((
                f.key,
                Cosigned {
                    witness: self.witnesses[f.key].name.clone(),
                    key_name: self.witnesses[f.key].key.name().to_owned(),
                    timestamp: f.timestamp,
                    fresh,
                },
            ));
        }
        cosigned.sort_by_key(|(k, _)| *k);
        Witnessed {
            cosigned: cosigned.into_iter().map(|(_, c)| c).collect(),
            satisfied: self.satisfied_by(&signed),
            newest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosignature::{CosignerKey, add_signature_lines};
    use crate::note::LogKey;

    const TEXT: &str = "log.example/a\n5\nSxW8F837m/62CCoS0C+o01aQWMa9xVArUXLHuPzoa+A=\n";

    fn cosigner(i: u8) -> CosignerKey {
        CosignerKey::from_seed(&format!("w.example/{i}"), &[i; 32]).unwrap()
    }

    fn witness(i: u8) -> Witness {
        Witness {
            name: format!("w.example/{i}"),
            key: cosigner(i).witness_key(),
            url: None,
        }
    }

    fn note_signed_by(ws: &[(u8, u64)]) -> Vec<u8> {
        let log = LogKey::from_seed("log.example/a", &[1; 32]).unwrap();
        let lines: Vec<String> = ws
            .iter()
            .map(|&(i, t)| cosigner(i).cosign(TEXT, t).unwrap().to_line())
            .collect();
        add_signature_lines(&log.sign_note(TEXT).unwrap(), &lines)
    }

    #[test]
    fn two_of_three_needs_two_fresh_cosignatures() {
        let p = WitnessPolicy::k_of(vec![witness(1), witness(2), witness(3)], 2).unwrap();
        assert_eq!(p.describe(), "2 of 3 witnesses");
        let one = p.check(&note_signed_by(&[(1, 1000)]), 1000, None).unwrap();
        assert!(!one.satisfied);
        let two = p
            .check(&note_signed_by(&[(1, 1000), (3, 990)]), 1000, None)
            .unwrap();
        assert!(two.satisfied);
        assert_eq!(two.newest, Some(1000));
        assert_eq!(two.cosigned.len(), 2);
    }

    #[test]
    fn old_and_future_cosignatures_do_not_count() {
        let p = WitnessPolicy::k_of(vec![witness(1), witness(2)], 1).unwrap();
        let old = p
            .check(&note_signed_by(&[(1, 1000)]), 5000, Some(3600))
            .unwrap();
        assert!(!old.satisfied);
        assert!(!old.cosigned[0].fresh);
        let ahead = p
            .check(&note_signed_by(&[(2, 5000 + 31)]), 5000, Some(3600))
            .unwrap();
        assert!(!ahead.satisfied);
        let ok = p
            .check(&note_signed_by(&[(2, 5000 + 30)]), 5000, Some(3600))
            .unwrap();
        assert!(ok.satisfied);
    }

    #[test]
    fn a_tlog_policy_with_nested_groups_is_evaluated() {
        let text = format!(
            "# two groups\nlog {log}\nwitness a {w1}\nwitness b {w2} https://b.example/\n\
             witness c {w3}\ngroup ab any a b\ngroup all2 all ab c\nquorum all2\n",
            log = LogKey::from_seed("log.example/a", &[7; 32]).unwrap().vkey(),
            w1 = cosigner(1).witness_key().vkey(),
            w2 = cosigner(2).witness_key().vkey(),
            w3 = cosigner(3).witness_key().vkey(),
        );
        let p = WitnessPolicy::parse(&text).unwrap();
        assert_eq!(p.witnesses()[1].url.as_deref(), Some("https://b.example/"));
        assert_eq!(p.describe(), "group all2");
        assert!(p.satisfied_by(&[false, true, true]));
        assert!(!p.satisfied_by(&[true, true, false]));
    }

    #[test]
    fn a_deep_chain_of_groups_is_decided_once_per_group() {
        // Each group names the two before it: evaluated recursively this is ~2^90 calls.
        let mut text = format!(
            "witness a {}\nwitness b {}\ngroup g0 any a\ngroup g1 any b\n",
            cosigner(1).witness_key().vkey(),
            cosigner(2).witness_key().vkey()
        );
        for i in 2..92 {
            text.push_str(&format!("group g{i} all g{} g{}\n", i - 1, i - 2));
        }
        text.push_str("quorum g91\n");
        let p = WitnessPolicy::parse(&text).unwrap();
        assert!(p.satisfied_by(&[true, true]));
        assert!(!p.satisfied_by(&[true, false]));
    }

    #[test]
    fn policy_text_errors_name_the_line() {
        let w1 = cosigner(1).witness_key().vkey();
        for (text, line) in [
            (format!("witness a {w1}\nwitness b {w1}\nquorum a\n"), 2),
            (format!("witness a {w1}\ngroup g 2 a\nquorum g\n"), 2),
            (format!("witness a {w1}\ngroup g any a a\nquorum g\n"), 2),
            (format!("witness a {w1}\nquorum b\n"), 2),
            ("quorum none\nquorum none\n".to_owned(), 2),
            (format!("witness none {w1}\nquorum none\n"), 1),
            ("bogus x\nquorum none\n".to_owned(), 1),
        ] {
            match WitnessPolicy::parse(&text) {
                Err(PolicyError::Syntax { line: l, .. }) => assert_eq!(l, line, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(
            WitnessPolicy::parse(&format!("witness a {w1}\n")),
            Err(PolicyError::Invalid(_))
        ));
    }

    #[test]
    fn evaluating_verified_cosignatures_later_ages_them_without_verifying_again() {
        let p = WitnessPolicy::k_of(vec![witness(1), witness(2)], 1).unwrap();
        let keys: Vec<WitnessKey> = p.witnesses().iter().map(|w| w.key.clone()).collect();
        let found = note_cosignatures(&note_signed_by(&[(2, 1000)]), &keys).unwrap();
        let now = p.evaluate(&found, 1000, Some(60));
        assert!(now.satisfied);
        assert_eq!(now.cosigned[0].witness, "w.example/2");
        let later = p.evaluate(&found, 1061, Some(60));
        assert!(!later.satisfied);
        assert_eq!(later.newest, None);
        // A key index outside the policy is ignored, not a panic.
        let stray = [Found {
            key: 7,
            timestamp: 1000,
        }];
        assert!(p.evaluate(&stray, 1000, None).cosigned.is_empty());
    }

    #[test]
    fn a_quorum_above_the_witness_count_is_refused() {
        assert!(matches!(
            WitnessPolicy::k_of(vec![witness(1)], 2),
            Err(PolicyError::Invalid(_))
        ));
        assert!(
            !WitnessPolicy::k_of(vec![witness(1)], 0)
                .unwrap()
                .needs_cosignatures()
        );
    }
}
