//! Shared by the log's integration tests: generated entries and scratch directories.
#![allow(dead_code)] // each test file uses some of these

pub mod backends;
pub mod faults;
pub mod go;

use std::path::{Path, PathBuf};
use toolmark_log::entry::{Entry, Status, Subject};

/// Entries of 7 subjects (so `prev` chains interleave), some with long details so that entry
/// sizes vary from about a hundred bytes to over a kilobyte.
pub fn entries(start: usize, n: usize) -> Vec<Entry> {
    (start..start + n)
        .map(|i| Entry {
            subject: Subject {
                server: format!("io.example/server-{}", i % 7),
                target: format!("https://s{}.example.com/mcp", i % 7),
                package: None,
            },
            observed_at: format!("2026-11-{:02}T14:{:02}:00Z", 1 + i % 28, i % 60),
            status: if i % 5 == 0 {
                Status::new("timeout").unwrap()
            } else {
                Status::ok()
            },
            detail: (i % 11 == 0).then(|| "é→".repeat(i % 500)),
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

/// A fresh, empty scratch directory for one test (removed first if a previous run left it).
pub fn tempdir(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Copy a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Flip the lowest bit of the byte at `offset` (or the last byte, if the file is shorter).
pub fn flip_byte(path: &Path, offset: usize) {
    let mut b = std::fs::read(path).unwrap();
    let i = offset.min(b.len() - 1);
    b[i] ^= 0x01;
    std::fs::write(path, b).unwrap();
}

/// The verifier key a log directory publishes.
pub fn vkey(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("public/vkey"))
        .unwrap()
        .trim()
        .to_owned()
}
