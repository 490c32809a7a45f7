//! Any bytes as a cosignature line, as a note checked against a witness policy, and as witness
//! answer lines appended to a cosigned note: nothing panics; a line that parses prints back as
//! itself; `WitnessPolicy::check` only ever counts the policy's witness, and a note the witness
//! really cosigned keeps verifying whatever unknown lines follow it (a line by the witness's
//! name and key ID that does not verify rejects it).
#![no_main]
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolmark_log::cosignature::{Cosignature, CosignerKey, add_signature_lines};
use toolmark_log::note::LogKey;
use toolmark_log::policy::{Witness, WitnessPolicy};

const TEXT: &str = "fuzz.example/log\n5\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n";
static LOG: LazyLock<LogKey> =
    LazyLock::new(|| LogKey::from_seed("fuzz.example/log", &[7u8; 32]).expect("valid name"));
static WITNESS: LazyLock<CosignerKey> =
    LazyLock::new(|| CosignerKey::from_seed("fuzz.example/w", &[8u8; 32]).expect("valid name"));
static POLICY: LazyLock<WitnessPolicy> = LazyLock::new(|| {
    WitnessPolicy::k_of(
        vec![Witness {
            name: "w".into(),
            key: WITNESS.witness_key(),
            url: None,
        }],
        1,
    )
    .expect("a policy")
});

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for line in text.lines() {
            if let Ok(c) = Cosignature::parse_line(line) {
                assert_eq!(c.to_line(), format!("{line}\n"));
            }
        }
    }
    if let Ok(w) = POLICY.check(data, 2_000_000_000, Some(3600)) {
        assert!(w.cosigned.len() <= 1);
    }
    // A genuinely cosigned note, with the input appended as more signature lines.
    let note = LOG.sign_note(TEXT).expect("signs");
    let good = WITNESS.cosign(TEXT, 1_999_999_000).expect("cosigns").to_line();
    let mut cosigned = add_signature_lines(&note, &[good]);
    cosigned.extend_from_slice(data);
    if let Ok(w) = POLICY.check(&cosigned, 2_000_000_000, Some(3600)) {
        assert!(w.satisfied, "a verified cosignature within the age counts");
    }
});
