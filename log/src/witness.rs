//! C2SP `tlog-witness` (v1.0.0) wire formats, shared by the push client (the crawler dials
//! witnesses) and toolmark's own witness server.
//!
//! `POST <submission prefix>/add-checkpoint` carries:
//!
//! ```text
//! old <size the witness last cosigned, or 0>\n
//! <consistency proof hash, base64>\n      (0 to 63 lines; none when old is 0)
//! \n
//! <the checkpoint note, with the log's signature lines>
//! ```
//!
//! A witness answers 200 with one or more signature lines, or 409 with its latest size
//! (`text/x.tlog.size`, body `<size>\n`), or 400/403/404/422.
//!
//! Pure: no I/O.

use crate::merkle::{FormatError, Hash, truncate_for_error};

/// The path under a witness's submission prefix.
pub const ADD_CHECKPOINT_PATH: &str = "add-checkpoint";

/// The content type of a 409 answer's body.
pub const SIZE_CONTENT_TYPE: &str = "text/x.tlog.size";

/// The most consistency proof lines a request may carry (the spec: 63).
pub const MAX_PROOF_LINES: usize = 63;

/// The largest `add-checkpoint` body read: 64 proof lines and a note of at most 64 KiB.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024 + 64 * 45 + 32;

/// The largest 200 answer read (signature lines); a witness answers with a few lines.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024;

/// One `add-checkpoint` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddCheckpoint {
    /// The size the submitter believes the witness last cosigned (0 if never).
    pub old: u64,
    /// The consistency proof from `old` to the checkpoint's size.
    pub proof: Vec<Hash>,
    /// The signed checkpoint note.
    pub note: Vec<u8>,
}

impl AddCheckpoint {
    /// The request body.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = format!("old {}\n", self.old).into_bytes();
        for h in &self.proof {
            b.extend_from_slice(h.to_base64().as_bytes());
            b.push(b'\n');
        }
        b.push(b'\n');
        b.extend_from_slice(&self.note);
        b
    }

    /// Parses a request body strictly: `old` in decimal without leading zeros, at most
    /// [`MAX_PROOF_LINES`] canonical base64 hashes, a blank line, then the note (not checked
    /// here beyond being present).
    ///
    /// # Errors
    ///
    /// [`FormatError::MalformedNote`] naming what is wrong.
    pub fn parse(body: &[u8]) -> Result<AddCheckpoint, FormatError> {
        let bad = |why: String| FormatError::MalformedNote(format!("add-checkpoint body: {why}"));
        if body.len() > MAX_REQUEST_BYTES {
            return Err(bad(format!(
                "{} bytes, more than {MAX_REQUEST_BYTES}",
                body.len()
            )));
        }
        let mut rest = body;
        let next_line = |rest: &mut &[u8]| -> Option<String> {
            let nl = rest.iter().position(|&b| b == b'\n')?;
            let line = std::str::from_utf8(&rest[..nl]).ok()?.to_owned();
            *rest = &rest[nl + 1..];
            Some(line)
        };
        let first = next_line(&mut rest).ok_or_else(|| bad("no old line".into()))?;
        let old_text = first.strip_prefix("old ").ok_or_else(|| {
            bad(format!(
                "first line {:?} is not old <size>",
                truncate_for_error(&first)
            ))
        })?;
        if old_text.is_empty()
            || !old_text.bytes().all(|b| b.is_ascii_digit())
            || (old_text.len() > 1 && old_text.starts_with('0'))
        {
            return Err(bad(format!(
                "old {:?} is not a decimal size",
                truncate_for_error(old_text)
            )));
        }
        let old: u64 = old_text
            .parse()
            .map_err(|_| bad("old is too large".into()))?;
        let mut proof = Vec::new();
        loop {
            let line =
                next_line(&mut rest).ok_or_else(|| bad("no blank line before the note".into()))?;
            if line.is_empty() {
                break;
            }
            if proof.len() == MAX_PROOF_LINES {
                return Err(bad(format!("more than {MAX_PROOF_LINES} proof lines")));
            }
            proof.push(Hash::from_base64(&line)?);
        }
        if rest.is_empty() {
            return Err(bad("no checkpoint".into()));
        }
        Ok(AddCheckpoint {
            old,
            proof,
            note: rest.to_vec(),
        })
    }
}

/// Parses a 409 body, `<size>\n`.
///
/// # Errors
///
/// [`FormatError::MalformedNote`] for anything else.
pub fn parse_size_body(body: &[u8]) -> Result<u64, FormatError> {
    let bad = || {
        FormatError::MalformedNote(format!(
            "409 body {:?} is not <size>\\n",
            truncate_for_error(&String::from_utf8_lossy(body))
        ))
    };
    let s = std::str::from_utf8(body).map_err(|_| bad())?;
    let s = s.strip_suffix('\n').ok_or_else(bad)?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return Err(bad());
    }
    s.parse().map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips() {
        let r = AddCheckpoint {
            old: 3,
            proof: vec![Hash([1; 32]), Hash([2; 32])],
            note: b"o\n5\nAAAA\n\n\xe2\x80\x94 o x\n".to_vec(),
        };
        assert_eq!(AddCheckpoint::parse(&r.encode()).unwrap(), r);
        let zero = AddCheckpoint {
            old: 0,
            proof: vec![],
            note: b"n\n".to_vec(),
        };
        assert_eq!(zero.encode(), b"old 0\n\nn\n");
        assert_eq!(AddCheckpoint::parse(&zero.encode()).unwrap(), zero);
    }

    #[test]
    fn malformed_requests_are_refused() {
        for body in [
            &b"old 01\n\nn\n"[..],
            b"old -1\n\nn\n",
            b"old 1\nnot-a-hash\n\nn\n",
            b"old 1\n",
            b"old 1\n\n",
            b"new 1\n\nn\n",
        ] {
            assert!(AddCheckpoint::parse(body).is_err(), "{body:?}");
        }
        let mut many = b"old 1\n".to_vec();
        for _ in 0..64 {
            many.extend_from_slice(Hash([0; 32]).to_base64().as_bytes());
            many.push(b'\n');
        }
        many.extend_from_slice(b"\nn\n");
        assert!(AddCheckpoint::parse(&many).is_err());
    }

    #[test]
    fn the_size_body_is_one_decimal_line() {
        assert_eq!(parse_size_body(b"42\n").unwrap(), 42);
        assert!(parse_size_body(b"42").is_err());
        assert!(parse_size_body(b"042\n").is_err());
    }
}
