//! The log monitor (`toolmark log verify`): which source a target names, which verifier key is
//! trusted, the streaming audit against the remembered checkpoint, the witness policy's check,
//! and when the remembered checkpoint moves. The binary parses flags and prints what
//! [`audit`] returns.

use std::path::{Path, PathBuf};

use toolmark_log::cosignature::WitnessKey;
use toolmark_log::objects::{Objects, S3Options};
use toolmark_log::policy::{Witness, WitnessPolicy, Witnessed};
use toolmark_log::store::ObjectsSpec;
use toolmark_log::verify::{self, AuditState, DirSource, Report, Source};

use crate::RoleError;

/// What to audit and against what.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    /// A log directory, its `public/` directory, an `http(s)://` base URL, or an `s3://` URL
    /// (an objects root as `--objects` names it, or the tlog-tiles base itself).
    pub target: String,
    /// The file remembering the last verified checkpoint (a shrink, a fork or a key change
    /// against it is refused).
    pub state: Option<PathBuf>,
    /// The verifier key to trust, if given.
    pub vkey: Option<String>,
    /// The witnesses whose cosignatures the checkpoint needs, if any.
    pub policy: Option<WitnessPolicy>,
    /// Count only cosignatures at most this many seconds old.
    pub max_age: Option<u64>,
}

/// Where the trusted verifier key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFrom {
    /// [`Monitor::vkey`].
    Given,
    /// The state file.
    Remembered,
    /// The policy's first `log` line.
    Policy,
    /// The log's own published `vkey`, trusted on first use.
    Published,
}

/// What an audit found.
#[derive(Debug)]
pub struct Audited {
    /// The verified checkpoint and what was read.
    pub report: Report,
    /// The verifier key trusted, and where it came from.
    pub vkey: (String, KeyFrom),
    /// The size of the remembered checkpoint the log was proven consistent with.
    pub consistent_with: Option<u64>,
    /// The witness policy's verdict on the checkpoint's cosignatures (when a policy is given),
    /// with the time it was judged at.
    pub witnessed: Option<(Witnessed, u64)>,
    /// Whether the state file was moved to this checkpoint: only when the checkpoint met the
    /// policy (an unwitnessed one is not remembered, so the next audit starts from the last one
    /// that did).
    pub remembered: bool,
}

/// The source `target` names.
pub fn source(target: &str) -> Result<Box<dyn Source>, RoleError> {
    if target.starts_with("http://") || target.starts_with("https://") {
        let log = toolmark_crawler::remote_log::HttpLog::new(target).map_err(RoleError::Refused)?;
        return Ok(Box::new(log));
    }
    if target.starts_with("s3://") {
        let root = Objects::s3(target, &S3Options::from_env())
            .map_err(RoleError::doing(target.to_owned()))?;
        let has_checkpoint = root
            .get("checkpoint")
            .map_err(RoleError::doing(target.to_owned()))?
            .is_some();
        return Ok(if has_checkpoint {
            Box::new(root)
        } else {
            Box::new(root.sub("log/public"))
        });
    }
    let dir = Path::new(target);
    let public = if dir.join("public/checkpoint").exists() {
        dir.join("public")
    } else {
        dir.to_owned()
    };
    Ok(Box::new(DirSource(public)))
}

/// The k-of-n policy of witness verifier keys given one by one (`VKEY`, or `VKEY@URL` as
/// `toolmark run` takes them: the URL is not needed to verify and is ignored); `quorum`
/// defaults to all of them. `None` for no key.
pub fn key_policy(
    keys: &[String],
    quorum: Option<usize>,
) -> Result<Option<WitnessPolicy>, RoleError> {
    if keys.is_empty() {
        return Ok(None);
    }
    let witnesses = keys
        .iter()
        .map(|v| {
            // A vkey's base64 never holds an `@`.
            let key = WitnessKey::parse(v.split_once('@').map_or(v.as_str(), |(k, _)| k))?;
            Ok(Witness {
                name: key.name().to_owned(),
                key,
                url: None,
            })
        })
        .collect::<Result<Vec<_>, toolmark_log::FormatError>>()
        .map_err(RoleError::doing("a witness key"))?;
    let k = quorum.unwrap_or(witnesses.len());
    if k == 0 {
        return Err(RoleError::Refused("the quorum must be at least 1".into()));
    }
    WitnessPolicy::k_of(witnesses, k)
        .map(Some)
        .map_err(RoleError::doing("the quorum"))
}

/// Audits `m.target`: the key trusted is `m.vkey`, else the remembered one, else the policy's
/// first log key, else the log's published one (trusted on first use; the caller says so);
/// the policy's log keys, when it names any, must include it. Then the streaming audit
/// (consistent with the remembered checkpoint), the witness check, and the state file moved
/// forward when the checkpoint passes all of them.
pub fn audit(m: &Monitor, now: u64) -> Result<Audited, RoleError> {
    let source = source(&m.target)?;
    let prior = match &m.state {
        Some(p) if p.exists() => {
            let text =
                std::fs::read_to_string(p).map_err(RoleError::doing(format!("{}", p.display())))?;
            Some(AuditState::parse(&text).map_err(RoleError::doing(format!("{}", p.display())))?)
        }
        _ => None,
    };
    let policy_logs: Vec<String> = m
        .policy
        .as_ref()
        .map(|p| p.logs().iter().map(|(v, _)| v.clone()).collect())
        .unwrap_or_default();
    let vkey = match (&m.vkey, &prior) {
        (Some(v), _) => (v.clone(), KeyFrom::Given),
        (None, Some(p)) => (p.vkey.clone(), KeyFrom::Remembered),
        (None, None) if !policy_logs.is_empty() => (policy_logs[0].clone(), KeyFrom::Policy),
        (None, None) => {
            let published = source
                .get("vkey")
                .map_err(RoleError::Refused)?
                .ok_or_else(|| {
                    RoleError::Refused("no verifier key given and the log publishes no vkey".into())
                })?;
            let v = String::from_utf8(published).map_err(RoleError::doing("the published vkey"))?;
            (v.trim().to_owned(), KeyFrom::Published)
        }
    };
    if !policy_logs.is_empty() && !policy_logs.iter().any(|l| l.trim() == vkey.0.trim()) {
        return Err(RoleError::Refused(format!(
            "the policy's log keys do not include {}",
            vkey.0
        )));
    }
    let (report, next) = verify::audit(source.as_ref(), &vkey.0, prior.as_ref())
        .map_err(RoleError::doing(format!("verifying {}", m.target)))?;
    let witnessed = match &m.policy {
        Some(p) => Some((
            p.check(&report.note, now, m.max_age)
                .map_err(RoleError::doing("the checkpoint's witness cosignatures"))?,
            now,
        )),
        None => None,
    };
    let passes = witnessed.as_ref().is_none_or(|(w, _)| w.satisfied);
    let mut remembered = false;
    if let (Some(path), true) = (&m.state, passes) {
        std::fs::write(path, next.to_text())
            .map_err(RoleError::doing(format!("{}", path.display())))?;
        remembered = true;
    }
    Ok(Audited {
        report,
        vkey,
        consistent_with: prior.map(|p| p.size),
        witnessed,
        remembered,
    })
}

/// What `toolmark log verify` reports of an audit, for the binary to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// For standard output: the verified checkpoint, the remembered one it is consistent with,
    /// and, under a witness policy, which witnesses cosigned when and the quorum met.
    pub text: String,
    /// For standard error, when the audit fails: the checkpoint does not meet the policy.
    pub unmet: Option<String>,
}

impl Audited {
    /// The warning that the log's published verifier key was trusted on first use, if it was.
    pub fn trust_note(&self) -> Option<String> {
        (self.vkey.1 == KeyFrom::Published).then(|| {
            format!(
                "trusting the log's published verifier key {} (pin it with --vkey)",
                self.vkey.0
            )
        })
    }

    /// What the audit of `m` found, as `toolmark log verify` prints it.
    pub fn verdict(&self, m: &Monitor) -> Verdict {
        let report = &self.report;
        let mut text = format!(
            "ok: {} at size {}, root {}; {} entries, {} bundles and {} tiles verified\n",
            report.checkpoint.origin,
            report.checkpoint.size,
            report.checkpoint.root.to_base64(),
            report.entries,
            report.bundles,
            report.tiles
        );
        if let Some(size) = self.consistent_with {
            text.push_str(&format!(
                "consistent with the remembered checkpoint at size {size}\n"
            ));
        }
        let (Some(p), Some((w, now))) = (&m.policy, &self.witnessed) else {
            return Verdict { text, unmet: None };
        };
        let when = |t: u64| toolmark_api::witnesses::time_text(t).unwrap_or_else(|| t.to_string());
        for wit in p.witnesses() {
            text.push_str(&match w.cosigned.iter().find(|c| c.witness == wit.name) {
                Some(c) => format!(
                    "witness {}: cosigned at {} ({} s ago){}\n",
                    wit.name,
                    when(c.timestamp),
                    now.saturating_sub(c.timestamp),
                    if c.fresh {
                        ""
                    } else {
                        ", too old or in the future: not counted"
                    }
                ),
                None => format!("witness {}: no cosignature\n", wit.name),
            });
        }
        let age = m
            .max_age
            .map_or(String::new(), |a| format!(", at most {a} s old"));
        if !w.satisfied {
            let unmet = format!(
                "the checkpoint is not witnessed as required: {}{age}; {} cosignature(s) counted",
                p.describe(),
                w.cosigned.iter().filter(|c| c.fresh).count()
            );
            return Verdict {
                text,
                unmet: Some(unmet),
            };
        }
        text.push_str(&match w.newest {
            Some(t) => format!(
                "witnessed: {}{age}; newest cosignature {}\n",
                p.describe(),
                when(t)
            ),
            None => format!("witnessed: {}{age}\n", p.describe()),
        });
        Verdict { text, unmet: None }
    }
}

/// What `toolmark log verify` audits: `target` when given, else the log under the objects root
/// `objects` names (an `s3://` URL, or `file:PATH`'s `log/`).
pub fn target(target: Option<String>, objects: &ObjectsSpec) -> Result<String, RoleError> {
    match (target, objects) {
        (Some(t), _) => Ok(t),
        (None, ObjectsSpec::S3(url)) => Ok(url.clone()),
        (None, ObjectsSpec::File(Some(p))) => Ok(p.join("log").display().to_string()),
        (None, _) => Err(RoleError::Refused(
            "what to verify: give a directory or URL, or --objects".into(),
        )),
    }
}

/// The witness policy asked for: the C2SP tlog-policy file `file` (at most
/// [`MAX_POLICY_BYTES`](toolmark_log::policy::MAX_POLICY_BYTES), UTF-8), else the k-of-n
/// policy of `keys` ([`key_policy`]); a maximum age needs one of them. `None` for neither.
pub fn asked_policy(
    file: Option<&Path>,
    keys: &[String],
    quorum: Option<usize>,
    max_age: Option<u64>,
) -> Result<Option<WitnessPolicy>, RoleError> {
    if let Some(path) = file {
        let text = read_bounded(path, toolmark_log::policy::MAX_POLICY_BYTES)?;
        return WitnessPolicy::parse(&text)
            .map(Some)
            .map_err(RoleError::doing(format!("{}", path.display())));
    }
    if keys.is_empty() && max_age.is_some() {
        return Err(RoleError::Refused(
            "--max-age needs witnesses (--witness or --policy)".into(),
        ));
    }
    key_policy(keys, quorum)
}

/// A file of at most `max` bytes, as UTF-8.
fn read_bounded(path: &Path, max: usize) -> Result<String, RoleError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max as u64 + 1).read_to_end(&mut bytes))
        .map_err(RoleError::doing(format!("{}", path.display())))?;
    if bytes.len() > max {
        return Err(RoleError::Refused(format!(
            "{}: larger than {max} bytes",
            path.display()
        )));
    }
    String::from_utf8(bytes).map_err(RoleError::doing(format!("{}: not UTF-8", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolmark_log::cosignature::CosignerKey;

    fn vkeys(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                CosignerKey::from_seed(&format!("witness{i}.example"), &[i as u8; 32])
                    .unwrap()
                    .witness_key()
                    .vkey()
            })
            .collect()
    }

    #[test]
    fn witness_keys_need_all_of_them_unless_a_quorum_is_given() {
        let keys = vkeys(3);
        let all = key_policy(&keys, None).unwrap().unwrap();
        assert_eq!(all.witnesses().len(), 3);
        assert_eq!(all.describe(), "3 of 3 witnesses");
        let two = key_policy(&keys, Some(2)).unwrap().unwrap();
        assert_eq!(two.describe(), "2 of 3 witnesses");
    }

    #[test]
    fn a_witness_given_as_vkey_at_url_counts_by_its_key_alone() {
        let keys = vkeys(1);
        let with_url = vec![format!("{}@https://witness.example/", keys[0])];
        let policy = key_policy(&with_url, None).unwrap().unwrap();
        assert_eq!(policy.witnesses()[0].key.vkey(), keys[0]);
        assert_eq!(policy.witnesses()[0].url, None);
    }

    #[test]
    fn no_witness_key_is_no_policy_and_a_quorum_of_zero_is_refused() {
        assert!(key_policy(&[], Some(2)).unwrap().is_none());
        assert!(matches!(
            key_policy(&vkeys(2), Some(0)),
            Err(RoleError::Refused(_))
        ));
        assert!(key_policy(&["not a key".to_owned()], None).is_err());
    }

    #[test]
    fn verify_audits_the_target_given_else_the_log_under_the_objects_root() {
        let given = target(Some("https://log.example/".into()), &ObjectsSpec::DataDir);
        assert_eq!(given.unwrap(), "https://log.example/");
        let s3 = ObjectsSpec::S3("s3://bucket/prefix".into());
        assert_eq!(target(None, &s3).unwrap(), "s3://bucket/prefix");
        let file = ObjectsSpec::File(Some(PathBuf::from("/srv/objects")));
        assert_eq!(target(None, &file).unwrap(), "/srv/objects/log");
        assert!(matches!(
            target(None, &ObjectsSpec::DataDir),
            Err(RoleError::Refused(_))
        ));
    }

    #[test]
    fn a_policy_file_is_bounded_and_a_max_age_needs_witnesses() {
        let dir =
            std::env::temp_dir().join(format!("toolmark-roles-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let keys = vkeys(1);
        let file = dir.join("policy");
        std::fs::write(&file, format!("witness w {}\nquorum w\n", keys[0])).unwrap();
        let policy = asked_policy(Some(&file), &[], None, None).unwrap().unwrap();
        assert_eq!(policy.describe(), "witness w");
        let max = toolmark_log::policy::MAX_POLICY_BYTES;
        std::fs::write(&file, "#".repeat(max + 1)).unwrap();
        let large = asked_policy(Some(&file), &[], None, None).unwrap_err();
        assert!(large.to_string().contains("larger than"), "{large}");
        assert!(matches!(
            asked_policy(None, &[], None, Some(60)),
            Err(RoleError::Refused(_))
        ));
        assert!(asked_policy(None, &[], None, None).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_log_directory_is_read_from_its_public_directory() {
        let dir =
            std::env::temp_dir().join(format!("toolmark-roles-monitor-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("public")).unwrap();
        std::fs::write(dir.join("public/checkpoint"), b"c").unwrap();
        std::fs::write(dir.join("public/vkey"), b"k").unwrap();
        let from_log = source(dir.to_str().unwrap()).unwrap();
        assert_eq!(from_log.get("vkey").unwrap(), Some(b"k".to_vec()));
        let from_public = source(dir.join("public").to_str().unwrap()).unwrap();
        assert_eq!(from_public.get("checkpoint").unwrap(), Some(b"c".to_vec()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
