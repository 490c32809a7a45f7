//! Writes the `add-checkpoint` requests a witness would receive from a growing toolmark log,
//! for the witness benchmark (`bench/witness.sh`): a log of `STEPS` batches of `BATCH` entries
//! (a fixed seed, so every run sends the same bytes), one request body per batch (`old` = the
//! previous size and the consistency proof from it), and one request re-submitting the final
//! tree (`old` = its size, no proof: the heartbeat's request).
//!
//! `cargo run --release -p toolmark-log --example add_checkpoint_bodies -- OUT [STEPS] [BATCH]`
//! writes `OUT/log` (the log), `OUT/grow-NNNN` (the batches' bodies, in order),
//! `OUT/heartbeat` and `OUT/vkey` (the log's verifier key; the origin is its name).

use std::path::PathBuf;

use toolmark_log::Log;
use toolmark_log::entry::{Entry, Status, Subject};
use toolmark_log::note::LogKey;
use toolmark_log::witness::AddCheckpoint;

const ORIGIN: &str = "bench.toolmark.example/log";

fn entries(start: u64, n: u64) -> Vec<Entry> {
    (start..start + n)
        .map(|i| Entry {
            subject: Subject {
                server: format!("io.example/server-{}", i % 97),
                target: format!("https://s{}.example.com/mcp", i % 97),
                package: None,
            },
            observed_at: "2026-12-03T07:00:00Z".into(),
            status: Status::ok(),
            detail: None,
            mtl1: None,
            full: None,
            tools: Some(i % 40),
            tool_index: None,
            surface: None,
            second: None,
            raw: None,
            prev: None,
        })
        .collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .expect("usage: add_checkpoint_bodies OUT [STEPS] [BATCH]"),
    );
    let steps: u64 = args.next().map_or(200, |s| s.parse().expect("STEPS"));
    let batch: u64 = args.next().map_or(100, |s| s.parse().expect("BATCH"));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let key = LogKey::from_seed(ORIGIN, &[7; 32]).unwrap();
    let mut log = Log::init_with_key(&out.join("log"), key).unwrap();
    std::fs::write(out.join("vkey"), format!("{}\n", log.vkey())).unwrap();
    let mut old = 0;
    for step in 0..steps {
        log.append(entries(step * batch, batch)).unwrap();
        let head = log.head();
        let body = AddCheckpoint {
            old,
            proof: if old == 0 {
                Vec::new()
            } else {
                log.consistency_proof(old, head.size).unwrap()
            },
            note: head.note.clone(),
        }
        .encode();
        std::fs::write(out.join(format!("grow-{step:04}")), body).unwrap();
        old = head.size;
    }
    let head = log.head();
    let heartbeat = AddCheckpoint {
        old: head.size,
        proof: Vec::new(),
        note: head.note.clone(),
    }
    .encode();
    std::fs::write(out.join("heartbeat"), heartbeat).unwrap();
    println!("{} requests, final size {}", steps + 1, head.size);
}
