//! Shared helpers for the crawler's integration tests: starting real MCP servers on loopback.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]
#![allow(dead_code)]

pub mod big;
pub mod hostile;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A dialable streamable-HTTP remote of registry server `server` at `url`.
pub fn streamable_target(
    server: impl Into<String>,
    url: String,
) -> toolmark_crawler::registry::Target {
    toolmark_crawler::registry::Target {
        server: server.into(),
        version: "1".into(),
        kind: toolmark_crawler::registry::TargetKind::Remote {
            transport: "streamable-http".into(),
            url,
            declared: Default::default(),
        },
        skip: None,
    }
}

/// A client config that may dial loopback (the stand-ins and real servers of these tests).
pub fn lax() -> toolmark_crawler::mcp::ClientConfig {
    let mut c = toolmark_crawler::mcp::ClientConfig::default();
    c.policy.allow_private = true;
    c
}

/// A fleet stand-in of one host with `endpoints` session-era endpoints, answering at once, each
/// serving one `echo` tool.
pub async fn echo_fleet(endpoints: usize) -> toolmark_standins::fleet::Fleet {
    toolmark_standins::fleet::Fleet::start(toolmark_standins::fleet::FleetSpec {
        hosts: 1,
        endpoints_per_host: endpoints,
        latency: (Duration::ZERO, Duration::ZERO),
        seed: 1,
        tool_sets: vec![r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#.into()],
    })
    .await
    .unwrap()
}

/// How long a real server may take to start listening (node cold start is ~1 s here).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The directory `scripts/mcp-servers` prepared, or `None` (with a note) when it is absent.
/// Under CI its absence is a failure: the test command must have installed the servers.
pub fn mcp_servers() -> Option<PathBuf> {
    match std::env::var_os("TOOLMARK_MCP_SERVERS") {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "TOOLMARK_MCP_SERVERS is not set (scripts/test sets it)"
            );
            eprintln!("skipped: TOOLMARK_MCP_SERVERS is not set (run scripts/mcp-servers)");
            None
        }
    }
}

/// A free loopback port (bound, then released for the child to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A server process, killed when dropped.
pub struct Server {
    pub port: u16,
    child: Child,
}

impl Server {
    /// Start `command` and wait until `port` accepts connections.
    pub fn start(mut command: Command, port: u16) -> Server {
        command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        let child = command.spawn().expect("start server");
        let mut server = Server { port, child };
        let start = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("server exited early: {status}");
            }
            assert!(
                start.elapsed() < START_TIMEOUT,
                "server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `@modelcontextprotocol/server-everything@version` in `mode` (`streamableHttp`, `sse`).
    pub fn everything(dir: &Path, version: &str, mode: &str) -> Server {
        Server::everything_on(dir, version, mode, free_port())
    }

    /// [`Server::everything`] on a given port (a new version at the same address).
    pub fn everything_on(dir: &Path, version: &str, mode: &str, port: u16) -> Server {
        let script = dir
            .join(format!("everything-{version}"))
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        let mut c = Command::new("node");
        c.arg(script).arg(mode).env("PORT", port.to_string());
        Server::start(c, port)
    }

    /// PyPI mcp-proxy serving PyPI mcp-server-time (stdio) on `/mcp` and `/sse`.
    pub fn mcp_proxy_time(dir: &Path) -> Server {
        let port = free_port();
        let mut c = Command::new(dir.join("mcp-proxy/bin/mcp-proxy"));
        c.args(["--port", &port.to_string(), "--host", "127.0.0.1"])
            .arg(dir.join("mcp-server-time/bin/mcp-server-time"));
        Server::start(c, port)
    }
}

/// A real Python `mcp` SDK server (`support/sdk_server.py`, mcp 2.3.0 from the `mcp-sdk` venv
/// of `scripts/mcp-servers`) in `mode` (`open`, `auth`), refusing and logging any header named
/// in `forbid`; its request log is `log`.
pub fn sdk_server(dir: &Path, mode: &str, forbid: &[&str], log: &Path) -> Server {
    let forbid = forbid.join(",");
    sdk_script(dir, "mcp-sdk", &["--mode", mode, "--forbid", &forbid], log)
}

/// `support/sdk_server.py` in `--mode open` run by the venv `venv` of `scripts/mcp-servers`:
/// `mcp-sdk` (mcp 2.3.0: 2026-07-28 and the session era) or `mcp-proxy` (mcp 1.30.0: the
/// session era only), named `name` in its `serverInfo`, serving `/mcp` and `/<p>/mcp` for each
/// of `prefixes`; its request log is `log`.
pub fn sdk_server_as(dir: &Path, venv: &str, name: &str, prefixes: &[&str], log: &Path) -> Server {
    sdk_gateway(dir, venv, name, prefixes, &[], log)
}

/// [`sdk_server_as`] that also forwards `/<p>/mcp` to `127.0.0.1:<port>/mcp` for each
/// `(p, port)` of `routes`: other servers behind its origin, as a path-routing gateway puts
/// them.
pub fn sdk_gateway(
    dir: &Path,
    venv: &str,
    name: &str,
    prefixes: &[&str],
    routes: &[(&str, u16)],
    log: &Path,
) -> Server {
    let prefixes = prefixes.join(",");
    let routes: Vec<String> = routes
        .iter()
        .map(|(p, port)| format!("{p}={port}"))
        .collect();
    let routes = routes.join(",");
    let args = [
        "--mode",
        "open",
        "--name",
        name,
        "--prefixes",
        &prefixes,
        "--routes",
        &routes,
    ];
    sdk_script(dir, venv, &args, log)
}

fn sdk_script(dir: &Path, venv: &str, args: &[&str], log: &Path) -> Server {
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/sdk_server.py");
    let mut c = Command::new(dir.join(venv).join("bin/python"));
    c.arg(script)
        .args(["--port", &port.to_string()])
        .arg("--log")
        .arg(log)
        .args(args);
    Server::start(c, port)
}

impl Server {
    /// npm supergateway 4.0.0 in front of the stdio server-memory 2026.8.31, streamable HTTP
    /// on `/mcp`, `--stateful`: one stdio child per session, until the session ends.
    pub fn supergateway_stateful(dir: &Path) -> Server {
        let port = free_port();
        let d = dir.join("supergateway/node_modules");
        let memory = d.join("@modelcontextprotocol/server-memory/dist/index.js");
        let mut c = Command::new("node");
        c.arg(d.join("supergateway/dist/index.js"))
            .arg("--stdio")
            .arg(format!("node {}", memory.display()))
            .args(["--outputTransport", "streamableHttp", "--stateful"])
            .args(["--port", &port.to_string()]);
        Server::start(c, port)
    }

    /// The process id of the server.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// How many processes have `pid` as their parent (from `/proc`).
pub fn children_of(pid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok())
                == Some(pid)
        })
        .count()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `support/sdk_surface_server.py` (the Python SDK's `MCPServer` and its MCP Apps extension,
/// mcp 2.3.0 from the `mcp-sdk` venv): prompts, resources, a template and an app page it
/// re-reads from `page` on every `resources/read`, declaring `csp` as the page's CSP.
pub fn sdk_surface_server(dir: &Path, page: &Path, csp: &[&str]) -> Server {
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/sdk_surface_server.py");
    let mut c = Command::new(dir.join("mcp-sdk/bin/python"));
    c.arg(script)
        .args(["--port", &port.to_string(), "--csp", &csp.join(",")])
        .arg("--page")
        .arg(page);
    Server::start(c, port)
}

/// The surface of the server at `url` as the official TypeScript client lists it
/// (`support/list_surface.mjs`, npm `@modelcontextprotocol/sdk` 1.32.2 from `mcp-sdk-node`):
/// `{prompts, resources, resourceTemplates, appPages: {uri: contents}}`, each list `null` when
/// not declared; `raw` asks for the results as sent rather than as the SDK's types keep them.
pub fn official_listing(dir: &Path, url: &str, raw: bool) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/list_surface.mjs");
    let mut c = Command::new("node");
    c.arg(script).arg("--sdk").arg(dir.join("mcp-sdk-node"));
    if raw {
        c.arg("--raw");
    }
    let out = c.arg(url).output().expect("run list_surface.mjs");
    assert!(
        out.status.success(),
        "list_surface.mjs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// One endpoint serving the surface `s` (and the echo tools): the fleet (kept alive by the
/// caller) and its URL.
pub async fn serving(
    s: toolmark_standins::fleet::surface::Surface,
) -> (toolmark_standins::fleet::Fleet, String) {
    let fleet = echo_fleet(1).await;
    fleet.set_surface(0, Some(s));
    let url = fleet.urls()[0].clone();
    (fleet, url)
}
