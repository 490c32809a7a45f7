//! A real MCP server run inside gVisor lists the same tools as outside it.
//! Needs root, `runsc` and `scripts/mcp-servers`' server-memory; skipped without them, except
//! under CI, where missing parts fail the test.

use std::path::PathBuf;
use std::process::Stdio as ProcessStdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::BufReader;
use toolmark_mcp::session::{Handshake, Identity, Limits, Listing, Session};
use toolmark_sandbox::runsc::{Bundle, BundleSpec, Mount, Sandbox, runsc_path};
use toolmark_sandbox::stdio::Stdio;

/// `node_modules` holding `@modelcontextprotocol/server-memory` (installed by scripts/mcp-servers).
fn node_modules() -> Option<PathBuf> {
    let base = std::env::var_os("TOOLMARK_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/mcp-servers"));
    let dir = base.join("supergateway/node_modules");
    dir.join("@modelcontextprotocol/server-memory/dist/index.js")
        .is_file()
        .then_some(dir)
}

fn needed<T>(what: &str, found: Option<T>) -> Option<T> {
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is needed under CI"
        );
        eprintln!("skipped: no {what}");
    }
    found
}

async fn list(
    stdout: impl tokio::io::AsyncRead + Unpin + Send,
    stdin: impl tokio::io::AsyncWrite + Unpin + Send,
) -> Listing {
    let mut stdio = Stdio::new(BufReader::new(stdout), stdin);
    let mut listing = Listing::default();
    let identity = Identity {
        client_info: json!({"name": "toolmark-test", "version": "0"}),
        capabilities: json!({}),
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        Session::new(Limits::default(), identity, &mut listing)
            .list_tools(&mut stdio, Handshake::Initialize("2025-06-18")),
    )
    .await
    .expect("listed within 60 s")
    .expect("listed");
    listing
}

fn digest(listing: &Listing) -> String {
    let set = toolmark_toolset::ToolSet::parse(listing.pages[0].as_bytes()).unwrap();
    toolmark_toolset::full::digest(&set).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_memory_in_gvisor_lists_the_tools_it_lists_outside() {
    let Some(runsc) = needed("runsc", runsc_path()) else {
        return;
    };
    let Some(modules) = needed("server-memory (scripts/mcp-servers)", node_modules()) else {
        return;
    };
    let script = "/srv/node_modules/@modelcontextprotocol/server-memory/dist/index.js";

    // Outside: the same program over stdio.
    let mut outside = tokio::process::Command::new("/usr/bin/node")
        .arg(modules.join("@modelcontextprotocol/server-memory/dist/index.js"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(ProcessStdio::piped())
        .stdout(ProcessStdio::piped())
        .stderr(ProcessStdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let host = list(
        outside.stdout.take().unwrap(),
        outside.stdin.take().unwrap(),
    )
    .await;
    let _ = outside.kill().await;

    // Inside gVisor.
    let work = std::env::temp_dir().join(format!("toolmark-runsc-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let home = work.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(1000), Some(1000)).unwrap();
    let bundle = Bundle::create(
        &work.join("bundle"),
        &BundleSpec {
            args: vec!["/usr/bin/node".into(), script.into()],
            env: vec!["PATH=/usr/bin:/bin".into(), "HOME=/home/decoy".into()],
            cwd: "/home/decoy".into(),
            uid: 1000,
            mounts: vec![
                Mount {
                    destination: "/srv/node_modules".into(),
                    source: modules,
                    writable: false,
                },
                Mount {
                    destination: "/home/decoy".into(),
                    source: home,
                    writable: true,
                },
            ],
            memory_bytes: 512 << 20,
            host_pids: 4096,
            open_files: 1024,
        },
    )
    .unwrap();
    let mut sandbox = Sandbox::spawn(
        &runsc,
        bundle,
        &format!("toolmark-test-{}", std::process::id()),
        None,
    )
    .unwrap();
    let stdout = sandbox.child.stdout.take().unwrap();
    let stdin = sandbox.child.stdin.take().unwrap();
    let inside = list(stdout, stdin).await;
    sandbox.stop().await;
    let _ = std::fs::remove_dir_all(&work);

    assert_eq!(inside.pages, host.pages, "the same tools, byte for byte");
    assert_eq!(digest(&inside), digest(&host));
    assert!(
        inside.pages[0].contains("create_entities"),
        "{}",
        inside.pages[0]
    );
}
