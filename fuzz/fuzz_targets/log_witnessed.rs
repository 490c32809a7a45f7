//! Any bytes as a checkpoint note with witness cosignature lines, checked against a fixed 2-of-3
//! witness policy (what a verifier does with a hostile answer's or log's checkpoint), as
//! `tlog-policy` text and as cosignature lines: nothing panics; a satisfied policy has at least
//! two fresh cosigners, all of the policy; a cosignature line that parses writes back to the same
//! line; and real cosignatures of the input's text (before its first 0x00), appended to the
//! log-signed note, are found with their timestamps (the rest of the input appended as more
//! lines never makes a verified note report another time).
#![no_main]
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolmark_log::cosignature::{Cosignature, CosignerKey, add_signature_lines};
use toolmark_log::note::LogKey;
use toolmark_log::policy::{Witness, WitnessPolicy};

const NOW: u64 = 1_800_000_000;

static LOG: LazyLock<LogKey> =
    LazyLock::new(|| LogKey::from_seed("fuzz.example/log", &[7u8; 32]).expect("valid name"));
static COSIGNERS: LazyLock<Vec<CosignerKey>> = LazyLock::new(|| {
    (1..=3u8)
        .map(|i| CosignerKey::from_seed(&format!("w{i}.fuzz.example"), &[i; 32]).expect("name"))
        .collect()
});
static POLICY: LazyLock<WitnessPolicy> = LazyLock::new(|| {
    let ws = COSIGNERS
        .iter()
        .map(|c| Witness {
            name: c.name().to_owned(),
            key: c.witness_key(),
            url: None,
        })
        .collect();
    WitnessPolicy::k_of(ws, 2).expect("2 of 3")
});

fuzz_target!(|data: &[u8]| {
    if let Ok(w) = POLICY.check(data, NOW, Some(3600)) {
        if w.satisfied {
            assert!(w.cosigned.iter().filter(|c| c.fresh).count() >= 2, "{w:?}");
        }
        for c in &w.cosigned {
            assert!(POLICY.witnesses().iter().any(|x| x.name == c.witness));
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = WitnessPolicy::parse(text);
        for line in text.split('\n') {
            if let Ok(c) = Cosignature::parse_line(line) {
                assert_eq!(c.to_line(), format!("{line}\n"));
            }
        }
    }
    let Some(at) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let text = String::from_utf8_lossy(&data[..at]);
    let Ok(note) = LOG.sign_note(&text) else {
        return;
    };
    let t = NOW - 100;
    let lines: Vec<String> = COSIGNERS[..2]
        .iter()
        .filter_map(|c| c.cosign(&text, t).ok().map(|s| s.to_line()))
        .collect();
    if lines.len() < 2 {
        return; // not a checkpoint: nothing is cosigned
    }
    let cosigned = add_signature_lines(&note, &lines);
    let w = POLICY
        .check(&cosigned, NOW, Some(3600))
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&cosigned)));
    assert!(w.satisfied && w.newest == Some(t), "{w:?}");
    let mut more = cosigned.clone();
    more.extend_from_slice(&data[at + 1..]);
    if let Ok(w) = POLICY.check(&more, NOW, None) {
        assert!(
            w.cosigned
                .iter()
                .filter(|c| c.witness != COSIGNERS[2].name())
                .all(|c| c.timestamp >= t)
        );
    }
});
