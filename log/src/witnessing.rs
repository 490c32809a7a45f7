//! The cosigner's status file, `DATA/witnessing.json` (`toolmark-witnessing/1`): one type for
//! both of its sides. `toolmark-cosign` writes a [`Status`] after each witness round (pretty
//! JSON) and reads it back for each witness's last size; `toolmark-api` reads it for `/health`
//! and `/metrics`.
//!
//! The file is local, but every reader treats it as untrusted input: [`parse`] refuses another
//! version, times that are not RFC 3339, and anything not of the shape, and keeps at most
//! [`MAX_POLICY_ITEMS`] witnesses; [`read`] (with the `store` feature: it opens the file)
//! refuses a file larger than [`MAX_STATUS_BYTES`] before parsing it; [`Status::capped`] cuts
//! every text to [`MAX_STATUS_TEXT`] characters for display.
//!
//! Pure apart from [`read`]: no I/O in [`parse`].

use serde::{Deserialize, Serialize};

use crate::policy::MAX_POLICY_ITEMS;

/// The status file's `v`.
pub const STATUS_VERSION: &str = "toolmark-witnessing/1";

/// The status file's name under the data directory.
pub const STATUS_FILE: &str = "witnessing.json";

/// The largest status file read (a round's status for [`MAX_POLICY_ITEMS`] witnesses with
/// their errors fits easily); a larger file is an error, not read.
pub const MAX_STATUS_BYTES: u64 = 1024 * 1024;

/// The longest text (an error, a name, a key, a URL) [`Status::capped`] keeps; longer text is
/// cut with an ellipsis.
pub const MAX_STATUS_TEXT: usize = 300;

/// The status file (`DATA/witnessing.json`, `toolmark-witnessing/1`): the cosigner's latest
/// round.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Always [`STATUS_VERSION`].
    pub v: String,
    /// The policy, described (`2 of 3 witnesses`).
    pub policy: String,
    /// Whether the round's cosignatures met the policy.
    pub quorum_met: bool,
    /// The newest size the log signed.
    pub signed_size: u64,
    /// The size of the published checkpoint after the round (`null` while none is).
    #[serde(default)]
    pub published_size: Option<u64>,
    /// When the round ran (RFC 3339).
    pub round_at: String,
    /// Why the round did not publish, if it did not.
    #[serde(default)]
    pub error: Option<String>,
    /// Each witness of the policy.
    #[serde(default)]
    pub witnesses: Vec<WitnessStatus>,
}

/// One witness in the status file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WitnessStatus {
    /// The witness's policy name.
    pub name: String,
    /// Its cosignature verifier key (the cosigner matches a witness's previous round by it).
    pub vkey: String,
    /// Its submission prefix.
    #[serde(default)]
    pub url: Option<String>,
    /// The size it last cosigned (or told us it has, in a 409).
    #[serde(default)]
    pub size: Option<u64>,
    /// When it last cosigned for us (its timestamp, RFC 3339).
    #[serde(default)]
    pub cosigned_at: Option<String>,
    /// The last round's error, if its submission failed.
    #[serde(default)]
    pub error: Option<String>,
    /// When that error happened (RFC 3339).
    #[serde(default)]
    pub error_at: Option<String>,
}

/// Why a status file was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    /// The file could not be read.
    #[error("{STATUS_FILE}: {0}")]
    Io(String),
    /// The file is larger than [`MAX_STATUS_BYTES`].
    #[error("{STATUS_FILE}: larger than {MAX_STATUS_BYTES} bytes")]
    TooLarge,
    /// Not JSON of the status's shape.
    #[error("{STATUS_FILE}: {0}")]
    Shape(String),
    /// Another `v` (cut to [`MAX_STATUS_TEXT`] characters).
    #[error("{STATUS_FILE}: version {0:?}, expected {STATUS_VERSION}")]
    Version(String),
    /// A time that is not RFC 3339 (cut to [`MAX_STATUS_TEXT`] characters).
    #[error("{STATUS_FILE}: {what} {value:?} is not an RFC 3339 time")]
    Time {
        /// Which time.
        what: &'static str,
        /// The text found.
        value: String,
    },
}

/// Parses a status file's bytes: the shape, [`STATUS_VERSION`], every time RFC 3339, at most
/// [`MAX_POLICY_ITEMS`] witnesses (the rest dropped). Texts are kept whole (see
/// [`Status::capped`]).
///
/// # Errors
///
/// [`StatusError::Shape`], [`StatusError::Version`] or [`StatusError::Time`].
pub fn parse(bytes: &[u8]) -> Result<Status, StatusError> {
    let mut s: Status =
        serde_json::from_slice(bytes).map_err(|e| StatusError::Shape(e.to_string()))?;
    if s.v != STATUS_VERSION {
        return Err(StatusError::Version(cap(&s.v)));
    }
    let rfc3339 = |what: &'static str, t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .map(|_| ())
            .map_err(|_| StatusError::Time {
                what,
                value: cap(t),
            })
    };
    rfc3339("roundAt", &s.round_at)?;
    s.witnesses.truncate(MAX_POLICY_ITEMS);
    for w in &s.witnesses {
        for t in [&w.cosigned_at, &w.error_at].into_iter().flatten() {
            rfc3339("a witness time", t)?;
        }
    }
    Ok(s)
}

/// Reads and [`parse`]s the status file at `path`: `Ok(None)` when there is none (no witness
/// configured, or no round yet); a file larger than [`MAX_STATUS_BYTES`] is not read.
///
/// # Errors
///
/// [`StatusError::Io`], [`StatusError::TooLarge`], or what [`parse`] refuses.
#[cfg(feature = "store")]
pub fn read(path: &std::path::Path) -> Result<Option<Status>, StatusError> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StatusError::Io(e.to_string())),
    };
    let mut bytes = Vec::new();
    file.take(MAX_STATUS_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| StatusError::Io(e.to_string()))?;
    if bytes.len() as u64 > MAX_STATUS_BYTES {
        return Err(StatusError::TooLarge);
    }
    parse(&bytes).map(Some)
}

impl Status {
    /// The status with every text (the policy, the error, each witness's name, key, URL and
    /// error) cut to [`MAX_STATUS_TEXT`] characters and an ellipsis: what a reader shows.
    pub fn capped(mut self) -> Status {
        self.policy = cap(&self.policy);
        self.error = self.error.as_deref().map(cap);
        for w in &mut self.witnesses {
            w.name = cap(&w.name);
            w.vkey = cap(&w.vkey);
            for t in [&mut w.url, &mut w.error] {
                *t = t.as_deref().map(cap);
            }
        }
        self
    }
}

fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_STATUS_TEXT) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = r#"{"v":"toolmark-witnessing/1","policy":"2 of 3 witnesses","quorumMet":false,"signedSize":120,"publishedSize":118,"roundAt":"2026-12-02T19:00:00Z","error":"quorum not met: 1 of 2","witnesses":[{"name":"w1","vkey":"w1.example+01020304+BA==","url":"https://w1.example/","size":120,"cosignedAt":"2026-12-02T19:00:00Z","error":null,"errorAt":null},{"name":"w2","vkey":"v","url":"https://w2.example/","size":null,"cosignedAt":null,"error":"HTTP 503","errorAt":"2026-12-02T19:00:01Z"}]}"#;

    #[test]
    fn the_status_file_of_the_documented_shape_parses() {
        let s = parse(STATUS.as_bytes()).unwrap();
        assert_eq!((s.signed_size, s.published_size), (120, Some(118)));
        let none_yet = STATUS.replace("\"publishedSize\":118", "\"publishedSize\":null");
        assert_eq!(parse(none_yet.as_bytes()).unwrap().published_size, None);
        assert!(!s.quorum_met);
        assert_eq!(s.witnesses[1].error.as_deref(), Some("HTTP 503"));
        assert_eq!(s.witnesses[1].size, None);
    }

    #[test]
    fn what_the_cosigner_writes_is_read_back_member_for_member() {
        let s = parse(STATUS.as_bytes()).unwrap();
        let written = serde_json::to_vec_pretty(&s).unwrap();
        assert_eq!(parse(&written).unwrap(), s);
        // The members as the cosigner has always written them: nulls written, not left out.
        let v: serde_json::Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(v["witnesses"][1]["size"], serde_json::Value::Null);
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            serde_json::from_str::<serde_json::Value>(STATUS).unwrap()
        );
    }

    #[test]
    fn a_status_of_another_version_with_a_bad_time_or_no_key_is_refused() {
        let other = STATUS.replace("toolmark-witnessing/1", "toolmark-witnessing/2");
        assert!(matches!(
            parse(other.as_bytes()),
            Err(StatusError::Version(_))
        ));
        let bad = STATUS.replace("2026-12-02T19:00:01Z", "yesterday");
        assert!(
            parse(bad.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("RFC 3339")
        );
        let no_key = STATUS.replace(r#""vkey":"v","#, "");
        assert!(matches!(
            parse(no_key.as_bytes()),
            Err(StatusError::Shape(_))
        ));
        assert!(parse(b"\xff{").is_err());
    }

    #[test]
    fn at_most_the_policy_limit_of_witnesses_is_kept() {
        let mut s = parse(STATUS.as_bytes()).unwrap();
        s.witnesses = vec![s.witnesses[0].clone(); MAX_POLICY_ITEMS + 5];
        let read = parse(&serde_json::to_vec(&s).unwrap()).unwrap();
        assert_eq!(read.witnesses.len(), MAX_POLICY_ITEMS);
    }

    #[test]
    fn capped_texts_end_in_an_ellipsis_and_parse_keeps_them_whole() {
        let long = STATUS.replace("HTTP 503", &"x".repeat(5000));
        let s = parse(long.as_bytes()).unwrap();
        assert_eq!(s.witnesses[1].error.as_deref().unwrap().len(), 5000);
        let shown = s.capped();
        let error = shown.witnesses[1].error.as_deref().unwrap();
        assert_eq!(error.chars().count(), MAX_STATUS_TEXT + 1);
        assert!(error.ends_with('…'));
    }
}
