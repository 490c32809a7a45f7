//! SHA-256 digests written as W3C Subresource Integrity strings: `sha256-<base64, padded>`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// A SHA-256 digest; displayed and parsed in SRI form (`sha256-` + 44 base64 characters).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sri(pub [u8; 32]);

impl Sri {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Sri {
        Sri(Sha256::digest(bytes).into())
    }

    /// A digest computed piece by piece, for canonical forms written in parts.
    pub fn hasher() -> SriHasher {
        SriHasher(Sha256::new())
    }

    /// Lowercase hex of the digest (as in MTL/1 subject URNs).
    pub fn hex(&self) -> String {
        crate::hex::encode(&self.0)
    }
}

/// An incremental SHA-256 whose result is an [`Sri`].
pub struct SriHasher(Sha256);

impl SriHasher {
    /// Feed more bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything fed.
    pub fn finish(self) -> Sri {
        Sri(self.0.finalize().into())
    }
}

impl fmt::Display for Sri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Into a buffer on the stack: the log writer shows three digests per entry.
        let mut b64 = [0u8; 44];
        let n = STANDARD
            .encode_slice(self.0, &mut b64)
            .map_err(|_| fmt::Error)?;
        f.write_str("sha256-")?;
        f.write_str(std::str::from_utf8(&b64[..n]).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Sri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A string that is not `sha256-` followed by the padded base64 of 32 bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a SHA-256 SRI digest (expected sha256-<43 base64 characters>=)")]
pub struct SriError;

impl FromStr for Sri {
    type Err = SriError;

    /// Accepts HISTOR's `/check` form, `^sha256-[A-Za-z0-9+/]{43}=$`, except encodings whose last
    /// character carries stray low bits: those name no digest anyone computed.
    fn from_str(s: &str) -> Result<Sri, SriError> {
        let b64 = s.strip_prefix("sha256-").ok_or(SriError)?;
        if b64.len() != 44 || !b64.ends_with('=') {
            return Err(SriError);
        }
        // The standard engine refuses stray low bits in the last character, so only the
        // canonical spelling of a digest decodes.
        let mut arr = [0u8; 32];
        match STANDARD.decode_slice(b64, &mut arr) {
            Ok(32) => Ok(Sri(arr)),
            _ => Err(SriError),
        }
    }
}

/// Written as its SRI string.
impl serde::Serialize for Sri {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read from its SRI string, with [`Sri::from_str`]'s rules.
impl<'de> serde::Deserialize<'de> for Sri {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Sri, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_near_misses() {
        let d = Sri::of(b"");
        let s = d.to_string();
        assert_eq!(s, "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        assert_eq!(s.parse::<Sri>(), Ok(d));
        let mut h = Sri::hasher();
        h.update(b"ab");
        h.update(b"c");
        assert_eq!(h.finish(), Sri::of(b"abc"));
        assert_eq!(
            d.hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        for bad in [
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",
            "sha384-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
            "sha256-47DEQpj8HBSa-_TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV=",
            "",
        ] {
            assert!(bad.parse::<Sri>().is_err(), "{bad}");
        }
    }

    #[test]
    fn serde_uses_the_sri_string() {
        let d = Sri::of(b"");
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(
            text,
            "\"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\""
        );
        assert_eq!(serde_json::from_str::<Sri>(&text).unwrap(), d);
        assert!(serde_json::from_str::<Sri>("\"sha256-nope\"").is_err());
    }
}
