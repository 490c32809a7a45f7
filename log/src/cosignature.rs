//! C2SP `tlog-cosignature` (v1.0.1): the Ed25519 `cosignature/v1` a witness adds to a checkpoint.
//!
//! A cosignature is a signed-note signature line whose key type is `0x04` and whose signature
//! field is `timestamp (u64, big-endian) ‖ Ed25519 signature (64 bytes)`, over the message
//!
//! ```text
//! cosignature/v1\n
//! time <timestamp in decimal>\n
//! <the whole checkpoint text, extension lines included, ending in \n>
//! ```
//!
//! Its meaning: "as of time T, this is the largest consistent tree I have observed for this
//! origin". The message does not name the cosigner, so every cosigner needs a key of its own.
//!
//! This module signs ([`CosignerKey`], the witness's side), parses ([`Cosignature`]) and verifies
//! ([`WitnessKey`], [`note_cosignatures`]) cosignatures. It does not decide how many are enough
//! (that is [`crate::policy`]), read a clock (times are passed in) or keep keys on disk.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::Signer as _;

use crate::merkle::{FormatError, truncate_for_error};
use crate::note::{self, VerifierKey, is_valid_name};

/// Signature type byte of an Ed25519 `cosignature/v1` key.
pub const COSIGNATURE_TYPE: u8 = 0x04;

/// The largest timestamp a cosignature may carry (the spec: at most 2^63 − 1).
pub const MAX_TIMESTAMP: u64 = (1 << 63) - 1;

/// The bytes a cosigner signs for `checkpoint_text` at `timestamp`.
pub fn cosigned_message(checkpoint_text: &str, timestamp: u64) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {timestamp}\n").into_bytes();
    m.extend_from_slice(checkpoint_text.as_bytes());
    m
}

/// The key ID of a cosigner key: SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)\[..4\], big-endian.
pub fn key_id(name: &str, public_key: &[u8; 32]) -> u32 {
    let mut typed = Vec::with_capacity(33);
    typed.push(COSIGNATURE_TYPE);
    typed.extend_from_slice(public_key);
    signed_note::key_id(name, &typed)
}

/// A witness's verifier key (`<name>+<hex8 key ID>+<base64(0x04 ‖ public key)>`), parsed.
#[derive(Clone, PartialEq, Eq)]
pub struct WitnessKey {
    name: String,
    id: u32,
    public: ed25519_dalek::VerifyingKey,
}

impl WitnessKey {
    /// Parses a witness verifier key: form, key ID, type `0x04`, a 32-byte Ed25519 point.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`] naming what is wrong.
    pub fn parse(vkey: &str) -> Result<WitnessKey, FormatError> {
        let bad =
            |why: &str| FormatError::BadKey(format!("vkey {}: {why}", truncate_for_error(vkey)));
        let parsed = VerifierKey::parse(vkey)?;
        if parsed.key_type != COSIGNATURE_TYPE {
            return Err(bad(&format!(
                "signature type {:#04x} is not an Ed25519 cosignature key (0x04)",
                parsed.key_type
            )));
        }
        let bytes: [u8; 32] = parsed
            .public_key
            .as_slice()
            .try_into()
            .map_err(|_| bad("an Ed25519 public key is 32 bytes"))?;
        let public = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map_err(|_| bad("not an Ed25519 public key"))?;
        Ok(WitnessKey {
            name: parsed.name,
            id: parsed.id,
            public,
        })
    }

    /// The cosigner's name (the name on its signature lines).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The verifier key text.
    pub fn vkey(&self) -> String {
        let mut raw = vec![COSIGNATURE_TYPE];
        raw.extend_from_slice(self.public.as_bytes());
        format!("{}+{:08x}+{}", self.name, self.id, BASE64.encode(raw))
    }

    /// The 32-byte Ed25519 public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.public.to_bytes()
    }

    /// Verifies one cosignature (already parsed) by this key over `checkpoint_text`.
    ///
    /// # Errors
    ///
    /// [`FormatError::NotSigned`] if the line is not by this key (name or key ID differ);
    /// [`FormatError::BadSignature`] if it is but does not verify.
    pub fn verify(&self, cosig: &Cosignature, checkpoint_text: &str) -> Result<(), FormatError> {
        if cosig.name != self.name || cosig.id != self.id {
            return Err(FormatError::NotSigned(format!(
                "{}+{:08x}",
                self.name, self.id
            )));
        }
        let sig = ed25519_dalek::Signature::from_bytes(&cosig.signature);
        self.public
            .verify_strict(&cosigned_message(checkpoint_text, cosig.timestamp), &sig)
            .map_err(|_| FormatError::BadSignature {
                name: self.name.clone(),
                id: self.id,
            })
    }
}

impl fmt::Debug for WitnessKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.vkey())
    }
}

/// One parsed cosignature line: `— <name> base64(key ID ‖ timestamp ‖ signature)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosignature {
    /// The cosigner's name.
    pub name: String,
    /// The key ID on the line.
    pub id: u32,
    /// POSIX seconds at which the cosigner signed.
    pub timestamp: u64,
    /// The Ed25519 signature.
    pub signature: [u8; 64],
}

impl Cosignature {
    /// Parses a signature line (with or without its final `\n`) as a `cosignature/v1`: 76 bytes
    /// after base64, a timestamp of at most 2^63 − 1.
    ///
    /// # Errors
    ///
    /// [`FormatError::MalformedNote`] for any other line.
    pub fn parse_line(line: &str) -> Result<Cosignature, FormatError> {
        let bad = |why: &str| {
            FormatError::MalformedNote(format!(
                "cosignature line {}: {why}",
                truncate_for_error(line)
            ))
        };
        let line = line.strip_suffix('\n').unwrap_or(line);
        let rest = line
            .strip_prefix("\u{2014} ")
            .ok_or(bad("must start with an em dash and a space"))?;
        let (name, b64) = rest
            .split_once(' ')
            .ok_or(bad("expected a name and a signature"))?;
        if !is_valid_name(name) || b64.contains(' ') {
            return Err(bad("bad key name"));
        }
        let raw = BASE64
            .decode(b64)
            .map_err(|_| bad("signature is not standard base64"))?;
        if raw.len() != 4 + 8 + 64 {
            return Err(bad(&format!(
                "{} bytes; a cosignature/v1 is 76 (key ID, timestamp, signature)",
                raw.len()
            )));
        }
        let id = u32::from_be_bytes(raw[..4].try_into().expect("4 bytes"));
        let timestamp = u64::from_be_bytes(raw[4..12].try_into().expect("8 bytes"));
        if timestamp > MAX_TIMESTAMP {
            return Err(bad("timestamp above 2^63-1"));
        }
        let signature: [u8; 64] = raw[12..].try_into().expect("64 bytes");
        Ok(Cosignature {
            name: name.to_owned(),
            id,
            timestamp,
            signature,
        })
    }

    /// The signature line, `— <name> <base64>\n`.
    pub fn to_line(&self) -> String {
        let mut raw = Vec::with_capacity(76);
        raw.extend_from_slice(&self.id.to_be_bytes());
        raw.extend_from_slice(&self.timestamp.to_be_bytes());
        raw.extend_from_slice(&self.signature);
        format!("\u{2014} {} {}\n", self.name, BASE64.encode(raw))
    }
}

/// A cosigner's (witness's) Ed25519 signing key, type `0x04`.
///
/// `Debug` shows the verifier key, never the private key.
pub struct CosignerKey {
    name: String,
    signing: ed25519_dalek::SigningKey,
    id: u32,
}

impl CosignerKey {
    /// A new key from the operating system's random number generator.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`] for an invalid name, or without OS randomness.
    pub fn generate(name: &str) -> Result<CosignerKey, FormatError> {
        note::with_random_seed(|seed| Self::from_seed(name, seed))
    }

    /// The key with the given 32-byte Ed25519 seed.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`] if `name` is not a valid key name.
    pub fn from_seed(name: &str, seed: &[u8; 32]) -> Result<CosignerKey, FormatError> {
        note::check_key_name(name)?;
        let signing = ed25519_dalek::SigningKey::from_bytes(seed);
        let id = key_id(name, &signing.verifying_key().to_bytes());
        Ok(CosignerKey {
            name: name.to_owned(),
            signing,
            id,
        })
    }

    /// Reads `PRIVATE+KEY+<name>+<hex8 key ID>+<base64(0x04 ‖ seed)>` (surrounding whitespace
    /// ignored).
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`] for any other form or a key ID that does not match; the message
    /// never contains the key.
    pub fn from_skey(skey: &str) -> Result<CosignerKey, FormatError> {
        let bad = |why: &str| FormatError::BadKey(format!("cosigner private key: {why}"));
        let (name, id, mut seed) = note::parse_skey(
            skey,
            COSIGNATURE_TYPE,
            "an Ed25519 cosignature (type 0x04) 32-byte seed",
            bad,
        )?;
        let key = Self::from_seed(name, &seed);
        seed.fill(0);
        let key = key?;
        if key.id != id {
            return Err(bad("key ID does not match the name and public key"));
        }
        Ok(key)
    }

    /// The private key text. Secret: write it only to a file only the witness can read.
    pub fn to_skey(&self) -> String {
        let mut raw = [0u8; 33];
        raw[0] = COSIGNATURE_TYPE;
        raw[1..].copy_from_slice(&self.signing.to_bytes());
        let s = format!(
            "PRIVATE+KEY+{}+{:08x}+{}",
            self.name,
            self.id,
            BASE64.encode(raw)
        );
        raw.fill(0);
        s
    }

    /// The verifier key to publish.
    pub fn witness_key(&self) -> WitnessKey {
        WitnessKey {
            name: self.name.clone(),
            id: self.id,
            public: self.signing.verifying_key(),
        }
    }

    /// The cosigner's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Cosigns `checkpoint_text` (the note's text, ending in `\n`) at `timestamp`.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadCheckpoint`] if the text is not a checkpoint, or the timestamp is above
    /// 2^63 − 1: nothing malformed is ever cosigned.
    pub fn cosign(
        &self,
        checkpoint_text: &str,
        timestamp: u64,
    ) -> Result<Cosignature, FormatError> {
        crate::note::Checkpoint::parse_text(checkpoint_text)?;
        if timestamp > MAX_TIMESTAMP {
            return Err(FormatError::BadCheckpoint(
                "cosignature timestamp above 2^63-1".into(),
            ));
        }
        let sig = self
            .signing
            .sign(&cosigned_message(checkpoint_text, timestamp));
        Ok(Cosignature {
            name: self.name.clone(),
            id: self.id,
            timestamp,
            signature: sig.to_bytes(),
        })
    }
}

impl fmt::Debug for CosignerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CosignerKey")
            .field("vkey", &self.witness_key().vkey())
            .finish_non_exhaustive()
    }
}

/// A note split into its text (ending in `\n`) and its signature lines (without `\n`), after
/// the signed-note format checks (size, UTF-8, control characters, at most 100 lines).
///
/// # Errors
///
/// [`FormatError::MalformedNote`].
pub fn split_note(note: &[u8]) -> Result<(&str, Vec<&str>), FormatError> {
    note::precheck_note(note)?;
    let s = std::str::from_utf8(note).expect("prechecked UTF-8");
    let (text, sigs) = s.rsplit_once("\n\n").expect("prechecked blank line");
    let text = &s[..text.len() + 1];
    let lines: Vec<&str> = sigs
        .strip_suffix('\n')
        .expect("prechecked final newline")
        .split('\n')
        .collect();
    if lines.iter().any(|l| l.is_empty()) {
        return Err(FormatError::MalformedNote("empty signature line".into()));
    }
    Ok((text, lines))
}

/// A verified cosignature found in a note: which of the given keys, and when it signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Index of the key in the slice given to [`note_cosignatures`].
    pub key: usize,
    /// The cosignature's timestamp (the newest, if the key signed more than once).
    pub timestamp: u64,
}

/// The cosignatures of `keys` in a signed note, verified over its text.
///
/// Lines whose (name, key ID) is none of `keys` are ignored, as signed-note requires; a line by
/// one of them that is not a well-formed cosignature or does not verify rejects the note. A key
/// that signed several times is reported once, with its newest timestamp.
///
/// # Errors
///
/// [`FormatError::MalformedNote`] for a note or cosignature line that breaks the format;
/// [`FormatError::BadSignature`] for a cosignature that does not verify.
pub fn note_cosignatures(note: &[u8], keys: &[WitnessKey]) -> Result<Vec<Found>, FormatError> {
    let (text, lines) = split_note(note)?;
    let mut found: Vec<Found> = Vec::new();
    for line in lines {
        let Some(rest) = line.strip_prefix("\u{2014} ") else {
            return Err(FormatError::MalformedNote(format!(
                "signature line {} must start with an em dash",
                truncate_for_error(line)
            )));
        };
        let Some((name, b64)) = rest.split_once(' ') else {
            return Err(FormatError::MalformedNote(
                "signature line without a name".into(),
            ));
        };
        // Only the key ID is needed to match; decode the first bytes of the base64.
        let Some(id) = BASE64.decode(b64).ok().and_then(|raw| {
            raw.get(..4)
                .map(|b| u32::from_be_bytes(b.try_into().expect("4")))
        }) else {
            return Err(FormatError::MalformedNote(format!(
                "signature line by {} is not base64 with a key ID",
                truncate_for_error(name)
            )));
        };
        let Some(k) = keys.iter().position(|k| k.name == name && k.id == id) else {
            continue;
        };
        let cosig = Cosignature::parse_line(line)?;
        keys[k].verify(&cosig, text)?;
        match found.iter_mut().find(|f| f.key == k) {
            Some(f) => f.timestamp = f.timestamp.max(cosig.timestamp),
            None => found.push(Found {
                key: k,
                timestamp: cosig.timestamp,
            }),
        }
    }
    Ok(found)
}

/// The note with `lines` (signature lines, each ending in `\n`) added after its own.
pub fn add_signature_lines(note: &[u8], lines: &[String]) -> Vec<u8> {
    let mut out = note.to_vec();
    for l in lines {
        out.extend_from_slice(l.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // The spec's example cosignature line (tlog-cosignature v1.0.1), decoded: key ID 8d66cf3f,
    // timestamp 1679315147.
    const SPEC_LINE: &str = "— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==";

    #[test]
    fn the_spec_example_line_parses_to_its_key_id_and_time() {
        let c = Cosignature::parse_line(SPEC_LINE).unwrap();
        assert_eq!(c.name, "witness.example.com/w1");
        assert_eq!(c.id, 0x8d66cf3f);
        assert_eq!(c.timestamp, 1679315147);
        assert_eq!(c.to_line(), format!("{SPEC_LINE}\n"));
    }

    #[test]
    fn a_cosignature_verifies_only_over_its_text_and_time() {
        let k = CosignerKey::from_seed("w.example/1", &[3; 32]).unwrap();
        let text = "log.example/a\n5\nSxW8F837m/62CCoS0C+o01aQWMa9xVArUXLHuPzoa+A=\n";
        let c = k.cosign(text, 1_700_000_000).unwrap();
        let wk = WitnessKey::parse(&k.witness_key().vkey()).unwrap();
        wk.verify(&c, text).unwrap();
        let other = text.replace('5', "6");
        assert!(matches!(
            wk.verify(&c, &other),
            Err(FormatError::BadSignature { .. })
        ));
        let mut later = c.clone();
        later.timestamp += 1;
        assert!(wk.verify(&later, text).is_err());
    }

    #[test]
    fn a_log_key_is_not_a_witness_key() {
        let log = crate::note::LogKey::from_seed("log.example/a", &[1; 32]).unwrap();
        assert!(matches!(
            WitnessKey::parse(&log.vkey()),
            Err(FormatError::BadKey(_))
        ));
    }

    #[test]
    fn the_private_key_text_round_trips_and_is_not_in_debug() {
        let k = CosignerKey::from_seed("w.example/1", &[9; 32]).unwrap();
        let back = CosignerKey::from_skey(&k.to_skey()).unwrap();
        assert_eq!(back.witness_key(), k.witness_key());
        assert!(!format!("{k:?}").contains(&k.to_skey()));
    }

    #[test]
    fn note_cosignatures_ignores_unknown_lines_and_rejects_a_bad_known_one() {
        let log = crate::note::LogKey::from_seed("log.example/a", &[1; 32]).unwrap();
        let text = "log.example/a\n5\nSxW8F837m/62CCoS0C+o01aQWMa9xVArUXLHuPzoa+A=\n";
        let note = log.sign_note(text).unwrap();
        let w1 = CosignerKey::from_seed("w.example/1", &[3; 32]).unwrap();
        let w2 = CosignerKey::from_seed("w.example/2", &[4; 32]).unwrap();
        let lines = vec![
            w1.cosign(text, 10).unwrap().to_line(),
            w1.cosign(text, 20).unwrap().to_line(),
            SPEC_LINE.to_owned() + "\n",
        ];
        let cosigned = add_signature_lines(&note, &lines);
        // The log's own signature still verifies with the cosignatures beside it.
        crate::note::open_checkpoint(&cosigned, &log.vkey()).unwrap();
        let keys = [w1.witness_key(), w2.witness_key()];
        let found = note_cosignatures(&cosigned, &keys).unwrap();
        assert_eq!(
            found,
            vec![Found {
                key: 0,
                timestamp: 20
            }]
        );
        let mut bad = w2.cosign(text, 10).unwrap();
        bad.timestamp = 11;
        let forged = add_signature_lines(&note, &[bad.to_line()]);
        assert!(matches!(
            note_cosignatures(&forged, &keys),
            Err(FormatError::BadSignature { .. })
        ));
    }
}
