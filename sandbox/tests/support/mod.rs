//! What the real gVisor tests share: where `scripts/mcp-servers` installed its servers, and the
//! rule that a missing part skips a test except under CI.

use std::path::PathBuf;

pub mod packages;
pub mod registries;

/// The directory `scripts/mcp-servers` filled (`TOOLMARK_MCP_SERVERS`, else `.venv/mcp-servers`).
pub fn servers() -> PathBuf {
    std::env::var_os("TOOLMARK_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/mcp-servers"))
}

/// `found`, or — when it is missing — a skip outside CI and a failure under it.
pub fn needed<T>(what: &str, found: Option<T>) -> Option<T> {
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is needed under CI"
        );
        eprintln!("skipped: no {what}");
    }
    found
}
