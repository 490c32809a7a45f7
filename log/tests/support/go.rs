//! The Go verifier of `log/tests/go` (`golang.org/x/mod/sumdb/tlog` and `note`), shared by the
//! log's interop test and, through `#[path]`, the root crate's several-writers test.
#![allow(clippy::disallowed_methods)] // runs scripts/go-interop

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root, from a crate directory `CARGO_MANIFEST_DIR` of this workspace.
fn repository(manifest_dir: &str) -> PathBuf {
    let dir = Path::new(manifest_dir);
    if dir.join("scripts/go-interop").exists() {
        dir.to_owned()
    } else {
        dir.join("..")
    }
}

/// The Go verifier: `TOOLMARK_GO_VERIFY`, or built by `scripts/go-interop`; `None` when that
/// finds no `go` or no golang.org/x/mod sources (its exit status 3).
pub fn go_verifier() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TOOLMARK_GO_VERIFY") {
        return Some(PathBuf::from(p));
    }
    let script = repository(env!("CARGO_MANIFEST_DIR")).join("scripts/go-interop");
    let out = Command::new(&script)
        .output()
        .expect("run scripts/go-interop");
    if out.status.code() == Some(3) {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
        return None;
    }
    assert!(
        out.status.success(),
        "scripts/go-interop failed to build the Go verifier:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()))
}
