//! Any bytes as an `add-checkpoint` body to toolmark's witness (`toolmark-witness`), and, when
//! the input has a 0x00, its tail signed by the trusted log as the checkpoint note after its
//! head (`old …` and proof lines), so the fuzzer reaches the signature-verified paths (the 409,
//! the proofs, the evidence, the state update). Nothing panics; every answer is one of the
//! spec's statuses (never a 500); a 409 carries `<size>\n` as `text/x.tlog.size`; a 200 is one
//! `cosignature/v1` line that verifies over the note's text, and the monitoring read then
//! serves that checkpoint.
#![no_main]
use std::sync::LazyLock;

use axum::http::StatusCode;
use libfuzzer_sys::fuzz_target;
use toolmark_log::cosignature::{Cosignature, WitnessKey, split_note};
use toolmark_log::note::{Checkpoint, LogKey};
use toolmark_log::witness::{SIZE_CONTENT_TYPE, parse_size_body};
use toolmark_witness::{Trust, Witness, origin_hash};

const ORIGIN: &str = "fuzz.example/log";
const NOW: u64 = 1_800_000_000;

static LOG: LazyLock<LogKey> =
    LazyLock::new(|| LogKey::from_seed(ORIGIN, &[7u8; 32]).expect("valid name"));
static WITNESS: LazyLock<Witness> = LazyLock::new(|| {
    let dir = std::env::temp_dir().join(format!("toolmark-fuzz-witness-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trust = Trust::new(ORIGIN, &LOG.vkey()).expect("trust");
    Witness::open(&dir, "w.fuzz.example", &[trust]).expect("witness")
});
static KEY: LazyLock<WitnessKey> =
    LazyLock::new(|| WitnessKey::parse(&WITNESS.vkey()).expect("vkey"));

fn check(body: &[u8]) {
    let reply = WITNESS.add_checkpoint(body, NOW);
    match reply.status {
        StatusCode::OK => {
            let line = std::str::from_utf8(&reply.body).expect("UTF-8 line");
            assert_eq!(line.matches('\n').count(), 1, "{line:?}");
            let cosig = Cosignature::parse_line(line).expect("a cosignature line");
            assert_eq!(cosig.timestamp, NOW);
            let note = &body[body.windows(2).position(|w| w == b"\n\n").expect("blank") + 2..];
            let (text, _) = split_note(note).expect("a note was cosigned");
            KEY.verify(&cosig, text).expect("the cosignature verifies");
            let cp = Checkpoint::parse_text(text).expect("a checkpoint");
            let served = WITNESS
                .latest(&origin_hash(&cp.origin))
                .expect("state")
                .expect("the cosigned checkpoint is served");
            assert!(served.starts_with(text.as_bytes()));
        }
        StatusCode::CONFLICT => {
            assert_eq!(reply.content_type, SIZE_CONTENT_TYPE);
            parse_size_body(&reply.body).expect("a size body");
        }
        StatusCode::BAD_REQUEST
        | StatusCode::FORBIDDEN
        | StatusCode::NOT_FOUND
        | StatusCode::PAYLOAD_TOO_LARGE
        | StatusCode::UNPROCESSABLE_ENTITY => {}
        other => panic!("status {other}: {:?}", String::from_utf8_lossy(&reply.body)),
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let Some(at) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let text = String::from_utf8_lossy(&data[at + 1..]);
    let Ok(note) = LOG.sign_note(&text) else {
        return;
    };
    let mut body = data[..at].to_vec();
    body.extend_from_slice(&note);
    check(&body);
});
