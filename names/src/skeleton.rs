//! The skeleton of a name: what a reader sees, with the differences a reader misses removed.

/// A name's skeleton and whether reading it as ASCII changed a character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skeleton {
    /// The skeleton: confusables folded, lower case, `-_.` removed, `0`→`o`, `1`→`l`.
    pub text: String,
    /// Whether a non-ASCII character was read as an ASCII one it looks like.
    pub confusable: bool,
}

impl Skeleton {
    /// Its length in characters.
    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }
}

/// `name` with every non-ASCII character read as the ASCII it looks like, where Unicode's
/// confusable skeleton (UTS #39) gives one (Cyrillic `а` → `a`, `і` → `i`, fullwidth `ｇ` →
/// `g`); other characters are kept. ASCII characters are never changed, so an ASCII name's
/// skeleton is exactly HISTOR's (UTS #39 alone would also read `rn` as `m`).
pub fn fold(name: &str) -> (String, bool) {
    let mut out = String::with_capacity(name.len());
    let mut changed = false;
    let mut buf = [0u8; 4];
    for c in name.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let folded: String = unicode_security::skeleton(c.encode_utf8(&mut buf)).collect();
        if !folded.is_empty() && folded.is_ascii() {
            out.push_str(&folded);
            changed = true;
        } else {
            out.push(c);
        }
    }
    (out, changed)
}

/// HISTOR's skeleton of an ASCII name (lower case, `-_.` removed, `0`→`o`, `1`→`l`), applied
/// after [`fold`].
pub fn skeleton(name: &str) -> Skeleton {
    let (folded, confusable) = fold(name);
    let mut text = String::with_capacity(folded.len());
    for c in folded.chars().flat_map(char::to_lowercase) {
        match c {
            '-' | '_' | '.' => {}
            '0' => text.push('o'),
            '1' => text.push('l'),
            c => text.push(c),
        }
    }
    Skeleton { text, confusable }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_skeleton_is_histors() {
        assert_eq!(skeleton("Server_Git-Hub.1O0").text, "servergithubloo");
        assert!(!skeleton("server-github").confusable);
        // UTS #39 alone would read `rn` as `m`; ASCII is left as HISTOR reads it.
        assert_eq!(skeleton("modern").text, "modern");
    }

    #[test]
    fn cyrillic_letters_read_as_latin() {
        let s = skeleton("server-gіthub"); // U+0456
        assert_eq!(s.text, "servergithub");
        assert!(s.confusable);
        assert_eq!(skeleton("pаypal").text, "paypal"); // U+0430
    }
}
