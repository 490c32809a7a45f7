//! Lowercase hexadecimal: the one encoder and the one (strict) decoder of the workspace, for
//! digests shown in hex, target ids and Ed25519 keys written as hex.

/// `bytes` as lowercase hex, two digits a byte.
pub fn encode(bytes: &[u8]) -> String {
    // By table, not `write!("{b:02x}")`: the log writer encodes a target id per entry several
    // times, and the formatting machinery was a few percent of its CPU.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// Text that is not exactly `2·N` hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {digits} hex digits")]
pub struct HexError {
    /// How many digits were expected.
    pub digits: usize,
}

/// Exactly `2·N` hex digits (either case, nothing else: no prefix, sign or whitespace) as `N`
/// bytes.
pub fn decode<const N: usize>(text: &str) -> Result<[u8; N], HexError> {
    let err = HexError { digits: 2 * N };
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return Err(err);
    }
    let value = |d: u8| char::from(d).to_digit(16).ok_or(err.clone());
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (value(pair[0])? << 4 | value(pair[1])?) as u8;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let bytes = [0x00, 0x7f, 0xab, 0xff];
        assert_eq!(encode(&bytes), "007fabff");
        assert_eq!(decode::<4>("007fabff"), Ok(bytes));
        assert_eq!(decode::<4>("007FABFF"), Ok(bytes));
        assert_eq!(encode(&[]), "");
    }

    #[test]
    fn refuses_anything_but_exact_digits() {
        for bad in [
            "007fabf",
            "007fabff0",
            "007fabfg",
            "+07fabff",
            " 07fabff",
            "007fab\u{e9}",
        ] {
            assert_eq!(decode::<4>(bad), Err(HexError { digits: 8 }), "{bad:?}");
        }
    }
}
