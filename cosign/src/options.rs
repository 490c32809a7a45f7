//! The `[witnessing]` section of `toolmark run`'s configuration, and `--witness VKEY@URL`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toolmark_log::cosignature::WitnessKey;
use toolmark_log::policy::{Witness, WitnessPolicy};

/// Default seconds one witness submission may take.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 10;

/// Default least seconds between two rounds started by new batches (a crawl signs a checkpoint
/// every few seconds; witnesses ask logs to keep their rate low).
pub const DEFAULT_MIN_INTERVAL_SECONDS: u64 = 60;

/// Witnesses and their policy (`[witnessing]`; flags `--witness`, `--witness-quorum`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WitnessOptions {
    /// The witnesses, each `VKEY@URL` (the witness's cosignature verifier key and its
    /// submission prefix).
    pub witnesses: Vec<String>,
    /// How many of `witnesses` must cosign before a checkpoint is published (default 1 when
    /// witnesses are configured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quorum: Option<usize>,
    /// A C2SP `tlog-policy` file instead of `witnesses` + `quorum` (its `witness` lines must
    /// carry URLs to be submitted to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_file: Option<PathBuf>,
    /// Seconds one submission may take.
    pub timeout_seconds: u64,
    /// Least seconds between two rounds started by new batches.
    pub min_interval_seconds: u64,
}

impl Default for WitnessOptions {
    fn default() -> Self {
        WitnessOptions {
            witnesses: Vec::new(),
            quorum: None,
            policy_file: None,
            timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
            min_interval_seconds: DEFAULT_MIN_INTERVAL_SECONDS,
        }
    }
}

/// Parses `VKEY@URL` (split at the first `@`: a vkey's base64 never holds one).
///
/// # Errors
///
/// A message naming what is wrong.
pub fn parse_witness_arg(arg: &str) -> Result<Witness, String> {
    let (vkey, url) = arg
        .split_once('@')
        .ok_or_else(|| format!("witness {arg:?}: expected VKEY@URL"))?;
    let key = WitnessKey::parse(vkey).map_err(|e| format!("witness {arg:?}: {e}"))?;
    let parsed = url::Url::parse(url).map_err(|e| format!("witness {arg:?}: url: {e}"))?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return Err(format!(
            "witness {arg:?}: the URL must be https (or http on loopback)"
        ));
    }
    Ok(Witness {
        name: key.name().to_owned(),
        key,
        url: Some(url.to_owned()),
    })
}

impl WitnessOptions {
    /// The policy these options describe: `None` when no witness is configured.
    ///
    /// # Errors
    ///
    /// A message naming the key at fault.
    pub fn policy(&self) -> Result<Option<WitnessPolicy>, String> {
        match (&self.policy_file, self.witnesses.is_empty()) {
            (Some(_), false) => {
                Err("witnessing.policy_file and witnessing.witnesses exclude each other".into())
            }
            (Some(path), true) => {
                if self.quorum.is_some() {
                    return Err("witnessing.quorum is the policy file's quorum line".into());
                }
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("witnessing.policy_file {}: {e}", path.display()))?;
                WitnessPolicy::parse(&text)
                    .map(Some)
                    .map_err(|e| format!("witnessing.policy_file {}: {e}", path.display()))
            }
            (None, true) => match self.quorum {
                Some(q) if q > 0 => Err(format!(
                    "witnessing.quorum is {q} but no witness is configured"
                )),
                _ => Ok(None),
            },
            (None, false) => {
                let ws = self
                    .witnesses
                    .iter()
                    .map(|a| parse_witness_arg(a))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("witnessing.witnesses: {e}"))?;
                WitnessPolicy::k_of(ws, self.quorum.unwrap_or(1))
                    .map(Some)
                    .map_err(|e| format!("witnessing.quorum: {e}"))
            }
        }
    }
}
