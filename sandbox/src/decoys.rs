//! The decoy credentials a sandboxed run finds: a fresh HOME per run holding every
//! [`crate::behaviour::DECOY_PATHS`] file, and tokens in the environment, each value carrying the
//! run's [`Canary`] so that a value found anywhere later (a tool result, a trap's payload, an
//! `execve` environment) names the run it leaked from.
//!
//! None of it is a real credential: the keys are not keys, the tokens match their services'
//! shapes only well enough to be taken for real by a credential stealer.

use std::io;
use std::path::Path;

use crate::behaviour::DECOY_PATHS;

/// A per-run marker: `toolmark-canary-` and 16 random hex digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canary(String);

/// What every canary starts with.
pub const CANARY_PREFIX: &str = "toolmark-canary-";

impl Canary {
    /// A fresh canary from the operating system's random source.
    pub fn new() -> io::Result<Canary> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Canary(format!("{CANARY_PREFIX}{hex}")))
    }

    /// The marker's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `bytes` carry this canary.
    pub fn found_in(&self, bytes: &[u8]) -> bool {
        bytes.windows(self.0.len()).any(|w| w == self.0.as_bytes())
    }
}

/// The text of decoy file `rel` (one of [`DECOY_PATHS`]) for `canary`.
fn decoy_text(rel: &str, c: &str) -> String {
    match rel {
        ".ssh/id_rsa" | ".ssh/id_ed25519" => {
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{c}\n-----END OPENSSH PRIVATE KEY-----\n")
        }
        ".aws/credentials" => format!(
            "[default]\naws_access_key_id = AKIA{}\naws_secret_access_key = {c}\n",
            &c[c.len() - 16..].to_ascii_uppercase()
        ),
        ".npmrc" => format!("//registry.npmjs.org/:_authToken=npm_{c}\n"),
        ".pypirc" => format!("[pypi]\nusername = __token__\npassword = pypi-{c}\n"),
        ".netrc" => format!("machine github.com login decoy password {c}\n"),
        ".git-credentials" => format!("https://decoy:{c}@github.com\n"),
        ".config/gh/hosts.yml" => {
            format!("github.com:\n    oauth_token: gho_{c}\n    user: decoy\n")
        }
        ".docker/config.json" => {
            format!("{{\"auths\":{{\"https://index.docker.io/v1/\":{{\"auth\":\"{c}\"}}}}}}\n")
        }
        ".kube/config" => format!(
            "apiVersion: v1\nkind: Config\nusers:\n- name: decoy\n  user:\n    token: {c}\n"
        ),
        ".config/gcloud/application_default_credentials.json" => format!(
            "{{\"type\":\"authorized_user\",\"client_id\":\"decoy\",\"refresh_token\":\"{c}\"}}\n"
        ),
        ".config/solana/id.json" => format!("[\"{c}\"]\n"),
        ".bash_history" | ".zsh_history" => {
            format!("export GITHUB_TOKEN=ghp_{c}\nssh deploy@prod.internal\n")
        }
        _ => format!("{c}\n"),
    }
}

/// Plant every decoy under `home` (created if needed; owned by `uid`), and a `.env` in `cwd`
/// when given (a directory on the host the sandbox sees as its working directory).
pub fn plant(home: &Path, cwd: Option<&Path>, canary: &Canary, uid: u32) -> io::Result<()> {
    let c = canary.as_str();
    for rel in DECOY_PATHS {
        let path = home.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, decoy_text(rel, c))?;
    }
    if let Some(cwd) = cwd {
        std::fs::create_dir_all(cwd)?;
        std::fs::write(
            cwd.join(".env"),
            format!("OPENAI_API_KEY=sk-{c}\nDATABASE_URL=postgres://app:{c}@db/app\n"),
        )?;
    }
    std::fs::write(home.join(".bashrc"), "# decoy\n")?;
    chown_tree(home, uid)?;
    if let Some(cwd) = cwd {
        chown_tree(cwd, uid)?;
    }
    Ok(())
}

/// `chown` `dir` and everything under it to `uid` (links themselves, never what they name).
pub(crate) fn chown_tree(dir: &Path, uid: u32) -> io::Result<()> {
    std::os::unix::fs::chown(dir, Some(uid), Some(uid))?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() && !path.is_symlink() {
            chown_tree(&path, uid)?;
        } else {
            std::os::unix::fs::lchown(&path, Some(uid), Some(uid))?;
        }
    }
    Ok(())
}

/// Decoy tokens for the environment (`NAME=value`), each carrying `canary`.
pub fn environment(canary: &Canary) -> Vec<String> {
    let c = canary.as_str();
    vec![
        format!("GITHUB_TOKEN=ghp_{c}"),
        format!("NPM_TOKEN=npm_{c}"),
        format!("OPENAI_API_KEY=sk-{c}"),
        format!("ANTHROPIC_API_KEY=sk-ant-{c}"),
        format!("AWS_SECRET_ACCESS_KEY={c}"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decoy_and_variable_carries_the_runs_canary() {
        let canary = Canary::new().unwrap();
        assert!(canary.as_str().starts_with(CANARY_PREFIX));
        assert_eq!(canary.as_str().len(), CANARY_PREFIX.len() + 16);
        assert_ne!(canary, Canary::new().unwrap(), "fresh per run");
        let dir = std::env::temp_dir().join(format!("toolmark-decoys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let uid = rustix_uid();
        plant(&dir.join("home"), Some(&dir.join("app")), &canary, uid).unwrap();
        for rel in DECOY_PATHS {
            let text = std::fs::read(dir.join("home").join(rel)).unwrap();
            assert!(canary.found_in(&text), "{rel}");
        }
        assert!(canary.found_in(&std::fs::read(dir.join("app/.env")).unwrap()));
        for var in environment(&canary) {
            assert!(canary.found_in(var.as_bytes()), "{var}");
        }
        assert!(!canary.found_in(b"toolmark-canary-0000000000000000"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The uid the test runs as (so `chown` to it needs no privilege).
    fn rustix_uid() -> u32 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").unwrap().uid()
    }
}
