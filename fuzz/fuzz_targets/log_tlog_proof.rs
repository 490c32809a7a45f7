//! Any UTF-8 text as a `c2sp.org/tlog-proof@v1` bundle, as given and after the header line:
//! decoding never panics, the decoder accepts only the encoder's spelling (re-encoding a
//! decoded bundle gives the same text back), and verifying a decoded bundle against a fixed
//! log key never panics.
#![no_main]
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolmark_log::note::LogKey;
use toolmark_log::proof::{self, TLOG_PROOF_HEADER};

static VKEY: LazyLock<String> = LazyLock::new(|| {
    LogKey::from_seed("fuzz.example/log", &[7u8; 32])
        .expect("valid key name")
        .vkey()
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The header prepended lets the fuzzer reach the body without guessing the header first.
    for text in [text.to_owned(), format!("{TLOG_PROOF_HEADER}\n{text}")] {
        let Ok(p) = proof::decode_tlog_proof(&text) else {
            continue;
        };
        let again = proof::encode_tlog_proof(p.extra.as_deref(), p.index, &p.proof, &p.checkpoint);
        assert_eq!(again, text);
        let _ = proof::verify_tlog_proof(&p, p.extra.as_deref().unwrap_or_default(), &VKEY);
    }
});
