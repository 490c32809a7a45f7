//! C2SP `signed-note` and `tlog-checkpoint`: the log's Ed25519 key (signature type 0x01),
//! checkpoint text, signing a checkpoint, and opening (verifying and parsing) a signed one.
//!
//! A signed checkpoint is:
//!
//! ```text
//! <origin>\n<size>\n<base64 root>\n[<extension>\n]*\n— <key name> <base64(key ID ‖ signature)>\n…
//! ```
//!
//! Note parsing and Ed25519 verification are delegated to the `signed_note` crate (a port of Go's
//! `golang.org/x/mod/sumdb/note`), pinned exactly and kept out of this module's public API. The
//! verification rules are the spec's, applied here: signatures whose (name, key ID) is not the
//! given key are ignored; any signature line by the given key that does not verify rejects the
//! note (every such line, not only the first as in Go's `note.Open`); a note without a verified
//! signature is rejected; at most 100 signature lines; valid UTF-8 without control characters
//! other than `\n`.
//!
//! It does not check cosignatures (`tlog-cosignature`) or witness policies, keep keys on disk,
//! or decide which checkpoint to trust: it opens one note against one key.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use signed_note::{Note, Signature, StandardSigner, StandardVerifier, Verifier as _};

use crate::merkle::{FormatError, Hash, truncate_for_error};

/// Signature type byte for Ed25519 in signed-note keys.
pub const ED25519_TYPE: u8 = 0x01;

/// The most signature lines a note may carry (as Go's `note` package).
pub const MAX_SIGNATURES: usize = 100;

/// The largest note accepted, in bytes (as the `signed_note` crate).
pub const MAX_NOTE_BYTES: usize = 1_000_000;

/// The text of a `c2sp.org/tlog-checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's origin line; also the name of the key that signs it.
    pub origin: String,
    /// Tree size.
    pub size: u64,
    /// RFC 6962 root of the tree of `size` leaves.
    pub root: Hash,
    /// Extension lines (without their newline); not recommended, kept for completeness.
    pub extensions: Vec<String>,
}

impl Checkpoint {
    /// The checkpoint text: `<origin>\n<size>\n<base64 root>\n` then one line per extension.
    ///
    /// The fields are not validated here; [`LogKey::sign_checkpoint`] refuses to sign a text
    /// that [`Checkpoint::parse_text`] would not read back as the same checkpoint.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            self.root.to_base64()
        );
        for e in &self.extensions {
            s.push_str(e);
            s.push('\n');
        }
        s
    }

    /// Parses checkpoint text (the signed part of the note, ending in `\n`).
    ///
    /// Strict: origin non-empty without whitespace or `+`; size in decimal without sign or
    /// leading zeros; root exactly 44 characters of canonical base64 of 32 bytes; extension lines
    /// non-empty; no control characters other than the line ends.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadCheckpoint`] naming the first rule broken.
    pub fn parse_text(text: &str) -> Result<Checkpoint, FormatError> {
        let bad = |why: &str| FormatError::BadCheckpoint(why.to_owned());
        let body = text
            .strip_suffix('\n')
            .ok_or(bad("text must end with a newline"))?;
        if text.chars().any(|c| c.is_control() && c != '\n') {
            return Err(bad("control character in text"));
        }
        let mut lines = body.split('\n');
        let origin = lines.next().unwrap_or_default();
        if !is_valid_name(origin) {
            return Err(FormatError::BadCheckpoint(format!(
                "origin {:?} must be non-empty, without whitespace or '+'",
                truncate_for_error(origin)
            )));
        }
        let size_line = lines.next().ok_or(bad("missing tree size line"))?;
        let size = parse_decimal_u64(size_line).ok_or_else(|| {
            FormatError::BadCheckpoint(format!(
                "tree size {:?} must be decimal without sign or leading zeros",
                truncate_for_error(size_line)
            ))
        })?;
        let root_line = lines.next().ok_or(bad("missing root hash line"))?;
        let root = Hash::from_base64(root_line).map_err(|_| {
            FormatError::BadCheckpoint(format!(
                "root {:?} must be 44 characters of base64 of 32 bytes",
                truncate_for_error(root_line)
            ))
        })?;
        let mut extensions = Vec::new();
        for line in lines {
            if line.is_empty() {
                return Err(bad("empty extension line"));
            }
            extensions.push(line.to_owned());
        }
        Ok(Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
            extensions,
        })
    }
}

fn parse_decimal_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

/// A signed-note key name: non-empty, no Unicode whitespace, no `+`.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == '+')
}

/// The signed-note key ID of an Ed25519 public key: the first 4 bytes of
/// SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key), big-endian.
pub fn key_id(name: &str, public_key: &[u8; 32]) -> u32 {
    let mut typed = Vec::with_capacity(33);
    typed.push(ED25519_TYPE);
    typed.extend_from_slice(public_key);
    signed_note::key_id(name, &typed)
}

/// The parts of a verifier key `<name>+<hex8 key ID>+<base64(type ‖ public key)>`, checked for
/// form and for the key ID matching name and key, of any signature type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifierKey {
    /// Key name.
    pub name: String,
    /// Key ID (as written, and checked against the hash).
    pub id: u32,
    /// Signature type byte (0x01 for Ed25519).
    pub key_type: u8,
    /// Public key bytes after the type byte.
    pub public_key: Vec<u8>,
}

impl VerifierKey {
    /// Parses and checks a verifier key string. Splits at the first two `+` only, since the
    /// base64 part may contain `+`.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`].
    pub fn parse(vkey: &str) -> Result<VerifierKey, FormatError> {
        let bad =
            |why: &str| FormatError::BadKey(format!("vkey {}: {why}", truncate_for_error(vkey)));
        let (name, id, key_b64) = split_key_text(vkey, bad)?;
        let key = BASE64
            .decode(key_b64)
            .map_err(|_| bad("key is not standard base64"))?;
        let (&key_type, public_key) = key.split_first().ok_or(bad("empty key"))?;
        if signed_note::key_id(name, &key) != id {
            return Err(bad("key ID does not match name and key"));
        }
        Ok(VerifierKey {
            name: name.to_owned(),
            id,
            key_type,
            public_key: public_key.to_vec(),
        })
    }
}

/// Verifies a signed note against one Ed25519 verifier key and returns its text (the signed
/// part, ending in `\n`).
///
/// # Errors
///
/// [`FormatError::BadKey`] for an unusable `vkey` (including a non-Ed25519 one);
/// [`FormatError::MalformedNote`] for a note that breaks the format (size, UTF-8, control
/// characters, no blank line before the signatures, a bad signature line, more than 100
/// signatures); [`FormatError::BadSignature`] if a signature line by this key (same name and key
/// ID) does not verify; [`FormatError::NotSigned`] if no line is by this key.
pub fn verify_note(note: &[u8], vkey: &str) -> Result<String, FormatError> {
    let parsed = VerifierKey::parse(vkey)?;
    if parsed.key_type != ED25519_TYPE {
        return Err(FormatError::BadKey(format!(
            "vkey {}: signature type {:#04x} is not Ed25519 (0x01)",
            truncate_for_error(vkey),
            parsed.key_type
        )));
    }
    let verifier = StandardVerifier::new(vkey)
        .map_err(|e| FormatError::BadKey(format!("vkey {}: {e}", truncate_for_error(vkey))))?;
    precheck_note(note)?;
    let n = Note::from_bytes(note).map_err(|e| FormatError::MalformedNote(format!("{e}")))?;
    // `Note::from_bytes` has checked every signature line; walk them again to apply the rules
    // ourselves. Unlike Go's `note.Open` (and `Note::verify`), every line naming this key must
    // verify, not only the first: a bad duplicate rejects the note whatever its position.
    let text = n.text();
    let sig_block = &note[text.len() + 1..];
    let mut verified = false;
    for line in sig_block.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let sig = Signature::from_bytes(line)
            .map_err(|e| FormatError::MalformedNote(format!("signature line: {e}")))?;
        if sig.name() != parsed.name || sig.id() != parsed.id {
            continue;
        }
        if !verifier.verify(text, sig.signature()) {
            return Err(FormatError::BadSignature {
                name: parsed.name,
                id: parsed.id,
            });
        }
        verified = true;
    }
    if !verified {
        return Err(FormatError::NotSigned(format!(
            "{}+{:08x}",
            parsed.name, parsed.id
        )));
    }
    // Note::from_bytes checked UTF-8 on the whole message already.
    String::from_utf8(text.to_vec())
        .map_err(|_| FormatError::MalformedNote("text is not UTF-8".into()))
}

/// Reads `PRIVATE+KEY+<name>+<hex8 key ID>+<base64(type ‖ 32-byte seed)>` (surrounding
/// whitespace ignored) for keys of `key_type`: the name, the key ID as written, and the seed
/// (the caller zeroes it). Every intermediate copy of the key is zeroed; errors (by `bad`)
/// never contain it.
pub(crate) fn parse_skey<'a>(
    skey: &'a str,
    key_type: u8,
    wanted: &str,
    bad: impl Fn(&str) -> FormatError,
) -> Result<(&'a str, u32, [u8; 32]), FormatError> {
    let rest = skey
        .trim()
        .strip_prefix("PRIVATE+KEY+")
        .ok_or_else(|| bad("must start with PRIVATE+KEY+"))?;
    let (name, id, key_b64) = split_key_text(rest, &bad)?;
    let mut raw = BASE64
        .decode(key_b64)
        .map_err(|_| bad("key is not standard base64"))?;
    if raw.len() != 33 || raw[0] != key_type {
        raw.fill(0);
        return Err(bad(&format!("not {wanted}")));
    }
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&raw[1..]);
    raw.fill(0);
    Ok((name, id, seed))
}

/// `<name>+<8 hex key ID>+<base64>` (the shared tail of verifier and private key texts), split
/// at the first two `+` (the base64 part may contain more) and checked.
fn split_key_text(
    text: &str,
    bad: impl Fn(&str) -> FormatError,
) -> Result<(&str, u32, &str), FormatError> {
    let (name, rest) = text
        .split_once('+')
        .ok_or_else(|| bad("expected name+id+key"))?;
    let (id_hex, key_b64) = rest
        .split_once('+')
        .ok_or_else(|| bad("expected name+id+key"))?;
    if !is_valid_name(name) {
        return Err(bad("key name must be non-empty, without whitespace or '+'"));
    }
    let id = toolmark_toolset::hex::decode(id_hex)
        .map(u32::from_be_bytes)
        .map_err(|_| bad("key ID must be 8 hex digits"))?;
    Ok((name, id, key_b64))
}

/// The format checks `signed_note` also makes, made first so the error says which rule broke.
pub(crate) fn precheck_note(note: &[u8]) -> Result<(), FormatError> {
    let bad = |why: String| Err(FormatError::MalformedNote(why));
    if note.len() > MAX_NOTE_BYTES {
        return bad(format!("{} bytes, more than {MAX_NOTE_BYTES}", note.len()));
    }
    let s = match std::str::from_utf8(note) {
        Ok(s) => s,
        Err(e) => return bad(format!("not UTF-8 at byte {}", e.valid_up_to())),
    };
    if let Some(pos) = s.bytes().position(|b| b < 0x20 && b != b'\n') {
        return bad(format!("control character at byte {pos}"));
    }
    let Some((_, sigs)) = s.rsplit_once("\n\n") else {
        return bad("no blank line before the signatures".into());
    };
    let Some(sigs) = sigs.strip_suffix('\n') else {
        return bad("does not end with a newline".into());
    };
    let count = sigs.split('\n').count();
    if count > MAX_SIGNATURES {
        return bad(format!(
            "{count} signature lines, more than {MAX_SIGNATURES}"
        ));
    }
    Ok(())
}

/// Verifies a signed checkpoint against the log's verifier key and parses it.
///
/// # Errors
///
/// Everything [`verify_note`] and [`Checkpoint::parse_text`] return, and
/// [`FormatError::OriginMismatch`] if the checkpoint's origin is not the key's name.
pub fn open_checkpoint(note: &[u8], vkey: &str) -> Result<Checkpoint, FormatError> {
    let text = verify_note(note, vkey)?;
    let cp = Checkpoint::parse_text(&text)?;
    let key = VerifierKey::parse(vkey)?;
    if cp.origin != key.name {
        return Err(FormatError::OriginMismatch {
            origin: cp.origin,
            key: key.name,
        });
    }
    Ok(cp)
}

/// The log's Ed25519 signing key (signed-note type 0x01), named after the log's origin.
///
/// `Debug` shows the name and the verifier key, never the private key.
pub struct LogKey {
    name: String,
    signing: ed25519_dalek::SigningKey,
    signer: StandardSigner,
    id: u32,
}

impl LogKey {
    /// A new key from the operating system's random number generator.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`] if `origin` is not a valid key name (empty, whitespace, `+`) or the
    /// OS has no randomness to give.
    pub fn generate(origin: &str) -> Result<LogKey, FormatError> {
        with_random_seed(|seed| Self::from_seed(origin, seed))
    }

    /// The key with the given 32-byte Ed25519 seed (for tests and for keys kept elsewhere).
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`] if `name` is not a valid key name.
    pub fn from_seed(name: &str, seed: &[u8; 32]) -> Result<LogKey, FormatError> {
        check_key_name(name)?;
        let sk = ed25519_dalek::SigningKey::from_bytes(seed);
        let id = key_id(name, &sk.verifying_key().to_bytes());
        let skey = skey_string(name, id, seed);
        let signer =
            StandardSigner::new(&skey).map_err(|e| FormatError::BadKey(format!("signer: {e}")))?;
        Ok(LogKey {
            name: name.to_owned(),
            signing: sk,
            signer,
            id,
        })
    }

    /// Reads the private key form `PRIVATE+KEY+<name>+<hex8 key ID>+<base64(0x01 ‖ seed)>`
    /// (as Go's `note.NewSigner` and the `signed_note` crate read it). Surrounding whitespace,
    /// such as a trailing newline in a key file, is ignored.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadKey`] for any other form, a non-Ed25519 key, or a key ID that does not
    /// match the name and the derived public key. The message never contains the key.
    pub fn from_skey(skey: &str) -> Result<LogKey, FormatError> {
        let bad = |why: &str| FormatError::BadKey(format!("private key: {why}"));
        let (name, id, mut seed) = parse_skey(
            skey,
            ED25519_TYPE,
            "an Ed25519 (type 0x01) 32-byte seed",
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

    /// The private key form `PRIVATE+KEY+<name>+<hex8 key ID>+<base64(0x01 ‖ seed)>`. Secret:
    /// write it only to a file only the log can read.
    pub fn to_skey(&self) -> String {
        skey_string(&self.name, self.id, &self.signing.to_bytes())
    }

    /// The verifier key `<name>+<hex8 key ID>+<base64(0x01 ‖ public key)>`, to publish.
    pub fn vkey(&self) -> String {
        signed_note::new_ed25519_verifier_key(&self.name, &self.signing.verifying_key())
    }

    /// The key name (the log's origin).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)\[..4\], big-endian.
    pub fn key_id(&self) -> u32 {
        self.id
    }

    /// The 32-byte Ed25519 public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.signing.verifying_key().to_bytes()
    }

    /// Signs arbitrary note text (which must end in `\n`) and returns the whole note: the text,
    /// a blank line and one signature line `— <name> <base64(key ID ‖ signature)>`.
    ///
    /// # Errors
    ///
    /// [`FormatError::MalformedNote`] if the text does not end in `\n`, is over the size limit,
    /// contains control characters other than `\n`, or contains an empty line (which would
    /// move the text/signature boundary).
    pub fn sign_note(&self, text: &str) -> Result<Vec<u8>, FormatError> {
        if text.split_inclusive('\n').any(|l| l == "\n") {
            return Err(FormatError::MalformedNote("text has an empty line".into()));
        }
        let mut note = Note::new(text.as_bytes(), &[])
            .map_err(|e| FormatError::MalformedNote(format!("text: {e}")))?;
        note.add_sigs(&[&self.signer])
            .map_err(|e| FormatError::MalformedNote(format!("signing: {e}")))?;
        Ok(note.to_bytes())
    }

    /// Signs a checkpoint and returns the full note bytes.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadCheckpoint`] if the checkpoint would not read back as itself (bad
    /// origin, an extension with a newline or empty) or its origin is not this key's name
    /// ([`FormatError::OriginMismatch`]): nothing malformed is ever signed.
    pub fn sign_checkpoint(&self, cp: &Checkpoint) -> Result<Vec<u8>, FormatError> {
        let text = cp.to_text();
        let back = Checkpoint::parse_text(&text)?;
        if &back != cp {
            return Err(FormatError::BadCheckpoint(
                "fields do not survive a round trip (newline in a field?)".into(),
            ));
        }
        if cp.origin != self.name {
            return Err(FormatError::OriginMismatch {
                origin: cp.origin.clone(),
                key: self.name.clone(),
            });
        }
        self.sign_note(&text)
    }
}

impl fmt::Debug for LogKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogKey")
            .field("name", &self.name)
            .field("vkey", &self.vkey())
            .finish_non_exhaustive()
    }
}

/// Calls `make` with a fresh 32-byte seed from the operating system's random number generator,
/// and zeroes the seed afterwards (the one way a log or cosigner key is generated).
pub(crate) fn with_random_seed<T>(
    make: impl FnOnce(&[u8; 32]) -> Result<T, FormatError>,
) -> Result<T, FormatError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)
        .map_err(|e| FormatError::BadKey(format!("no OS randomness: {e}")))?;
    let made = make(&seed);
    seed.fill(0);
    made
}

/// [`FormatError::BadKey`] unless `name` is a valid key name ([`is_valid_name`]).
pub(crate) fn check_key_name(name: &str) -> Result<(), FormatError> {
    if is_valid_name(name) {
        Ok(())
    } else {
        Err(FormatError::BadKey(format!(
            "key name {:?} must be non-empty, without whitespace or '+'",
            truncate_for_error(name)
        )))
    }
}

fn skey_string(name: &str, id: u32, seed: &[u8; 32]) -> String {
    let mut raw = [0u8; 33];
    raw[0] = ED25519_TYPE;
    raw[1..].copy_from_slice(seed);
    let s = format!("PRIVATE+KEY+{name}+{id:08x}+{}", BASE64.encode(raw));
    raw.fill(0);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use signed_note::Signer as _;

    #[test]
    fn signer_name_matches() {
        let k = LogKey::from_seed("example.com/log", &[7; 32]).unwrap();
        assert_eq!(k.signer.name(), "example.com/log");
        assert_eq!(k.signer.key_id(), k.key_id());
        let back = LogKey::from_skey(&k.to_skey()).unwrap();
        assert_eq!(back.vkey(), k.vkey());
        assert!(!format!("{k:?}").contains(&k.to_skey()));
    }
}
