//! Any bytes as a signed note and as checkpoint text, against a fixed Ed25519 log key: nothing
//! panics; a note `open_checkpoint` accepts is one `verify_note` accepts, whose text is a prefix
//! of the note and is the checkpoint's `to_text()`; checkpoint text that parses (as given, or
//! with a root hash put in as its third line) is its own `to_text()`. With signing: a checkpoint
//! built from the input that the key agrees to sign opens again as the same checkpoint, and
//! lines appended to a signed note (the input after its first 0x00) never change the text that
//! verifies.
#![no_main]
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolmark_log::Hash;
use toolmark_log::note::{self, Checkpoint, LogKey};

const ORIGIN: &str = "fuzz.example/log";
const ROOT: &str = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
static KEY: LazyLock<LogKey> =
    LazyLock::new(|| LogKey::from_seed(ORIGIN, &[7u8; 32]).expect("valid key name"));
static VKEY: LazyLock<String> = LazyLock::new(|| KEY.vkey());

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let verified = note::verify_note(data, &VKEY);
    if let Ok(text) = &verified {
        assert!(
            text.ends_with('\n') && data.starts_with(text.as_bytes()),
            "{text:?}"
        );
    }
    if let Ok(cp) = note::open_checkpoint(data, &VKEY) {
        let text = verified
            .as_ref()
            .expect("opened a note verify_note refuses");
        assert_eq!(&cp.to_text(), text);
        assert_eq!(cp.origin, ORIGIN);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let mut lines = text.splitn(3, '\n');
        let (origin, size) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
        let with_root = format!("{origin}\n{size}\n{ROOT}\n{}", lines.next().unwrap_or(""));
        for text in [text, &with_root] {
            if let Ok(cp) = Checkpoint::parse_text(text) {
                assert_eq!(cp.to_text(), text);
            }
        }
    }
    // Size, root and extension lines from the input; whatever the key signs must open.
    if data.len() >= 40 {
        let cp = Checkpoint {
            origin: ORIGIN.into(),
            size: u64::from_le_bytes(data[..8].try_into().unwrap()),
            root: Hash(data[8..40].try_into().unwrap()),
            extensions: String::from_utf8_lossy(&data[40..])
                .split_terminator('\n')
                .map(str::to_owned)
                .collect(),
        };
        if let Ok(signed) = KEY.sign_checkpoint(&cp) {
            let opened = note::open_checkpoint(&signed, &VKEY)
                .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&signed)));
            assert_eq!(opened, cp);
        }
    }
    // Text before the first 0x00, signed; the rest appended as more lines.
    if let Some(at) = data.iter().position(|&b| b == 0) {
        let text = String::from_utf8_lossy(&data[..at]);
        if let Ok(mut signed) = KEY.sign_note(&text) {
            assert_eq!(
                note::verify_note(&signed, &VKEY).ok().as_deref(),
                Some(&*text)
            );
            signed.extend_from_slice(&data[at + 1..]);
            if let Ok(got) = note::verify_note(&signed, &VKEY) {
                assert_eq!(got, text, "{:?}", String::from_utf8_lossy(&signed));
            }
        }
    }
});
