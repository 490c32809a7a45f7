//! Shared by the cosigner's tests: a witnessed log of generated entries, a loopback client.
#![allow(dead_code)] // each test file uses part of it

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolmark_cosign::{Cosigner, system_clock};
use toolmark_log::Log;
use toolmark_log::entry::{Entry, Status, Subject};
use toolmark_log::note::LogKey;
use toolmark_log::policy::WitnessPolicy;
use toolmark_outbound::Outbound;
use toolmark_outbound::guard::Policy;

/// The origin of every test log.
pub const ORIGIN: &str = "toolmark.test/log";

pub fn tempdir(tag: &str) -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cosign-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn entries(start: usize, n: usize, tag: &str) -> Vec<Entry> {
    (start..start + n)
        .map(|i| Entry {
            subject: Subject {
                server: format!("io.example/{tag}-{}", i % 5),
                target: format!("https://{tag}{}.example.com/mcp", i % 5),
                package: None,
            },
            observed_at: format!("2026-12-02T10:{:02}:00Z", i % 60),
            status: Status::ok(),
            detail: None,
            mtl1: None,
            full: None,
            tools: Some(i as u64),
            tool_index: None,
            surface: None,
            second: None,
            raw: None,
            prev: None,
        })
        .collect()
}

pub fn loopback() -> Outbound {
    Outbound {
        policy: Policy {
            allow_private: true,
        },
        ..Outbound::default()
    }
}

pub fn cosigner(dir: &Path, policy: WitnessPolicy) -> Cosigner {
    cosigner_with_timeout(dir, policy, Duration::from_secs(5))
}

/// A cosigner whose submissions may take `timeout`.
pub fn cosigner_with_timeout(dir: &Path, policy: WitnessPolicy, timeout: Duration) -> Cosigner {
    Cosigner::new(
        &dir.join("log"),
        &dir.join("witnessing.json"),
        policy,
        loopback(),
        timeout,
        system_clock(),
    )
    .unwrap()
}

pub fn witnessed_log(dir: &Path, seed: u8) -> Log {
    let key = LogKey::from_seed(ORIGIN, &[seed; 32]).unwrap();
    let mut log = Log::init_with_key(&dir.join("log"), key).unwrap();
    log.set_witnessed(true).unwrap();
    log
}

pub fn published(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("log/public/checkpoint")).unwrap()
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}
