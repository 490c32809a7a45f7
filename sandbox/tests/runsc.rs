//! A real MCP server run inside gVisor lists the same tools as outside it.
//! Needs root, `runsc` and `scripts/mcp-servers`' server-memory; skipped without them, except
//! under CI, where missing parts fail the test.

mod support;

use std::path::PathBuf;
use std::process::Stdio as ProcessStdio;
use std::time::Duration;

use serde_json::json;
use support::needed;
use tokio::io::BufReader;
use toolmark_mcp::session::{Handshake, Identity, Limits, Listing, Session};
use toolmark_sandbox::runsc::{Bundle, BundleSpec, Mount, Sandbox, runsc_path};
use toolmark_sandbox::stdio::Stdio;

/// `node_modules` holding `@modelcontextprotocol/server-memory` (installed by scripts/mcp-servers).
fn node_modules() -> Option<PathBuf> {
    let dir = support::servers().join("supergateway/node_modules");
    dir.join("@modelcontextprotocol/server-memory/dist/index.js")
        .is_file()
        .then_some(dir)
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

/// A bundle at `dir` running `args` as uid 1000 with `env` and `mounts`, under the limits every
/// test uses.
fn bundle_at(
    dir: &std::path::Path,
    args: Vec<String>,
    env: Vec<String>,
    mounts: Vec<Mount>,
) -> Bundle {
    Bundle::create(
        dir,
        &BundleSpec {
            args,
            env,
            cwd: "/home/decoy".into(),
            uid: 1000,
            mounts,
            memory_bytes: 512 << 20,
            host_pids: 4096,
            open_files: 1024,
            processes: 256,
            root_harness: false,
            ca_bundle: None,
        },
    )
    .unwrap()
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
    let bundle = bundle_at(
        &work.join("bundle"),
        vec!["/usr/bin/node".into(), script.into()],
        vec!["PATH=/usr/bin:/bin".into(), "HOME=/home/decoy".into()],
        vec![
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
    );
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

/// The host side of a traced run of `script` (a `/bin/sh -c` script) as uid 1000 with a
/// planted decoy HOME: its behaviour, its trace, and its stdout.
async fn traced(
    runsc: &std::path::Path,
    work: &std::path::Path,
    script: &str,
) -> (
    toolmark_sandbox::behaviour::Behaviour,
    toolmark_sandbox::trace::Trace,
    Vec<u8>,
) {
    use tokio::io::AsyncReadExt;
    use toolmark_sandbox::{behaviour, decoys, runsc::Trace, trace};
    let canary = decoys::Canary::new().unwrap();
    let home = work.join("home");
    decoys::plant(&home, None, &canary, 1000).unwrap();
    let mut env = vec![
        "PATH=/usr/bin:/bin".to_owned(),
        "HOME=/home/decoy".to_owned(),
    ];
    env.extend(decoys::environment(&canary));
    let bundle = bundle_at(
        &work.join("bundle"),
        vec!["/bin/sh".into(), "-c".into(), script.into()],
        env,
        vec![Mount {
            destination: "/home/decoy".into(),
            source: home,
            writable: true,
        }],
    );
    let logs = work.join("logs");
    let t = Trace {
        log_dir: logs.clone(),
        syscalls: trace::TRACED_SYSCALLS
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    let id = format!("toolmark-traced-{}", std::process::id());
    let mut sandbox = Sandbox::spawn(runsc, bundle, &id, Some(&t)).unwrap();
    drop(sandbox.child.stdin.take());
    let mut stdout = Vec::new();
    let mut out = sandbox.child.stdout.take().unwrap();
    tokio::time::timeout(Duration::from_secs(60), out.read_to_end(&mut stdout))
        .await
        .expect("the script ends within 60 s")
        .unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(30), sandbox.child.wait()).await;
    sandbox.stop().await;
    let boot = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".boot.txt"))
        .expect("a boot log with the trace");
    let parsed = trace::parse(&std::fs::read(boot).unwrap());
    let layout = behaviour::Layout {
        home: "/home/decoy".into(),
        cwd: "/home/decoy".into(),
        writable: vec![],
    };
    (behaviour::of(&parsed, &layout), parsed, stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traced_script_is_seen_and_reaches_nothing_of_the_host() {
    let Some(runsc) = needed("runsc", runsc_path()) else {
        return;
    };
    let work = std::env::temp_dir().join(format!("toolmark-traced-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    // A secret on the host, outside every mount, and a listener on the host's loopback.
    let secret = work.join("host-secret.txt");
    std::fs::write(&secret, "host-secret-canary-77\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "cat /home/decoy/.ssh/id_rsa >/dev/null; echo persisted >> /home/decoy/.bashrc; \
         cat {secret}; \
         /usr/bin/python3 -c \"import socket\ntry:\n  socket.create_connection(('127.0.0.1', {port}), 2)\nexcept OSError as e: print('refused', e)\"",
        secret = secret.display()
    );
    let (b, t, stdout) = traced(&runsc, &work, &script).await;

    assert!(b.complete, "{:?}", b.incomplete);
    let decoys: Vec<&str> = b.decoys.iter().map(|a| a.what.as_str()).collect();
    assert_eq!(decoys, ["/home/decoy/.ssh/id_rsa"]);
    assert_eq!(b.decoys[0].comm, "cat");
    assert!(
        b.writes.iter().any(|a| a.what == "/home/decoy/.bashrc"),
        "{:?}",
        b.writes
    );
    // The host's file was not there to read, and the trace shows the attempt.
    assert!(!String::from_utf8_lossy(&stdout).contains("host-secret-canary-77"));
    let attempt = t
        .events
        .iter()
        .find(|e| e.exit && e.syscall == "openat" && e.args.contains(&*secret.to_string_lossy()))
        .expect("the attempt is in the trace");
    assert_eq!(attempt.errno, Some(2), "{attempt:?}");
    // The connection went to the sandbox's own loopback: the host's listener saw nothing.
    assert!(
        b.network
            .iter()
            .any(|a| a.what == format!("127.0.0.1:{port}")),
        "{:?}",
        b.network
    );
    assert!(listener.accept().is_err(), "a connection reached the host");
    let _ = std::fs::remove_dir_all(&work);
}
