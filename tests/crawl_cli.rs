//! `toolmark crawl` end to end: the registry stand-in serving both corpus days plus three real
//! MCP servers on loopback, two runs, one real tool-set change between them.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

#[path = "../crawler/tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::{Server, mcp_servers};
use toolmark_standins::registry::{RegistryStandIn, load_snapshot};

const DAY1: &str = "../shared/corpus/registry/mcp-insights-servers-2025-12-17T0843Z.json";
const DAY2: &str = "../shared/corpus/registry/mcp-insights-servers-2025-12-18T0842Z.json";

fn item(name: &str, transport: &str, url: &str, published: &str) -> Value {
    json!({
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": name,
            "description": "loopback test server",
            "version": "1.0.0",
            "remotes": [{"type": transport, "url": url}],
        },
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": "active", "publishedAt": published, "updatedAt": published, "isLatest": true,
        }},
    })
}

fn crawl(registry: &str, data: &Path, report: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args([
            "crawl",
            "--registry",
            registry,
            "--allow-private",
            "--no-dns",
            // The corpus's update times are of 2025, so a delta on day two would find nothing
            // new: both days are full harvests, as the registry moves on between them.
            "--harvest",
            "full",
            "--data",
        ])
        .arg(data)
        .arg("--report")
        .arg(report)
        .output()
        .expect("run toolmark crawl");
    assert!(
        out.status.success(),
        "crawl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap()
}

fn line<'a>(report: &'a Value, server: &str) -> &'a Value {
    report["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["server"] == server)
        .unwrap_or_else(|| panic!("{server} not in the report"))
}

#[test]
fn crawl_two_days_of_the_registry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join(DAY1).exists() {
        eprintln!("skipped: the shared corpus is not beside the repository");
        return;
    }
    let Some(servers) = mcp_servers() else { return };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let tmp = std::env::temp_dir().join(format!("toolmark-crawl-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();

    let port = support::free_port();
    let old = Server::everything_on(&servers, "2025.9.25", "streamableHttp", port);
    let sse = Server::everything(&servers, "2026.8.31", "sse");
    let time = Server::mcp_proxy_time(&servers);
    let ours = |published: &str| {
        vec![
            item(
                "io.toolmark.test/everything",
                "streamable-http",
                &format!("http://127.0.0.1:{port}/mcp"),
                published,
            ),
            item(
                "io.toolmark.test/everything-sse",
                "sse",
                &format!("http://127.0.0.1:{}/sse", sse.port),
                published,
            ),
            item(
                "io.toolmark.test/time",
                "streamable-http",
                &format!("http://127.0.0.1:{}/mcp", time.port),
                published,
            ),
        ]
    };
    let mut day1 = load_snapshot(root.join(DAY1)).unwrap();
    day1.extend(ours("2025-12-17T00:00:00Z"));
    let registry = runtime
        .block_on(RegistryStandIn::start(day1.clone()))
        .unwrap();

    // Day one.
    let data = tmp.join("data");
    let r1 = crawl(&registry.url(), &data, &tmp.join("day1.json"));
    assert_eq!(r1["harvest"]["complete"], true);
    let everything = line(&r1, "io.toolmark.test/everything");
    assert_eq!(everything["status"], "ok", "{everything}");
    assert_eq!(everything["tools"], 10);
    assert_eq!(everything["transport"], "streamable-http");
    assert!(everything["mtl1"].as_str().unwrap().starts_with("sha256-"));
    let over_sse = line(&r1, "io.toolmark.test/everything-sse");
    assert_eq!(
        (over_sse["status"].as_str(), over_sse["transport"].as_str()),
        (Some("ok"), Some("sse"))
    );
    assert_eq!(line(&r1, "io.toolmark.test/time")["tools"], 2);

    // Every remote of every latest server has a line and a log entry; skip reasons are exactly
    // what the registry data says (computed here independently of the crawler's counting).
    let records = toolmark_crawler::registry::latest_per_name(
        toolmark_crawler::registry::parse_snapshot(&serde_json::to_vec(&day1).unwrap())
            .unwrap()
            .servers,
    );
    let remotes: usize = records.iter().map(|r| r.remotes.len()).sum();
    let lines = r1["targets"].as_array().unwrap();
    let remote_lines: Vec<&Value> = lines.iter().filter(|l| l["entryIndex"].is_u64()).collect();
    assert_eq!(remote_lines.len(), remotes);
    assert_eq!(r1["logSize"], remotes as u64);
    let mut skips: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &records {
        for t in toolmark_crawler::registry::targets_with(r, true) {
            if let (toolmark_crawler::registry::TargetKind::Remote { .. }, Some(s)) =
                (&t.kind, &t.skip)
            {
                *skips.entry(s.as_str()).or_default() += 1;
            }
        }
    }
    // Header-declared remotes are dialled without their keys (none is skipped for that).
    assert!(!skips.contains_key("header-required"), "{skips:?}");
    for (reason, n) in &skips {
        assert_eq!(r1["totals"][reason].as_u64(), Some(*n), "{reason}");
    }
    // The corpus's public remotes are not looked up (`--no-dns`, as on an offline machine):
    // each still ends in a named status, never a crash or a missing line.
    let named = [
        "ok",
        "dns",
        "connect",
        "timeout",
        "tls",
        "blocked-address",
        "protocol",
        "auth-required",
        "redirect",
    ];
    for l in &remote_lines {
        let s = l["status"].as_str().unwrap();
        assert!(
            named.contains(&s) || skips.contains_key(s) || s.starts_with("http-"),
            "{l}"
        );
    }

    // Day two: the registry moves on, and the server at the same address is a new version.
    drop(old);
    let _new = Server::everything_on(&servers, "2026.8.31", "streamableHttp", port);
    let mut day2 = load_snapshot(root.join(DAY2)).unwrap();
    day2.extend(ours("2025-12-17T00:00:00Z"));
    registry.set_items(day2);
    let r2 = crawl(&registry.url(), &data, &tmp.join("day2.json"));
    eprintln!(
        "day 1: harvest {} s, observe {} s; day 2: harvest {} s, observe {} s; totals {}",
        r1["harvest"]["seconds"],
        r1["observeSeconds"],
        r2["harvest"]["seconds"],
        r2["observeSeconds"],
        r2["totals"]
    );
    let changed = line(&r2, "io.toolmark.test/everything");
    assert_eq!(changed["tools"], 13);
    assert_ne!(changed["full"], everything["full"]);
    assert!(
        changed["changeId"].is_i64(),
        "a change was recorded: {changed}"
    );
    // Unchanged servers record no change.
    assert!(line(&r2, "io.toolmark.test/time")["changeId"].is_null());
    assert_eq!(
        line(&r2, "io.toolmark.test/time")["full"],
        line(&r1, "io.toolmark.test/time")["full"]
    );

    // The change is in the index with its diff and classification, and the entry's `prev`
    // points at day one's entry.
    let index = toolmark_index::index::Index::open_read_only(&data.join("index.sqlite")).unwrap();
    let change = index
        .change(changed["changeId"].as_i64().unwrap())
        .unwrap()
        .expect("change row");
    assert_eq!(Some(change.old_entry), everything["entryIndex"].as_u64());
    assert_eq!(change.new_entry, changed["entryIndex"].as_u64().unwrap());
    assert!(change.added > 0 && change.removed > 0, "{change:?}");
    assert!(change.diff.is_some() && change.classification.is_some());

    // The log verifies as a whole.
    let verify = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args(["log", "verify"])
        .arg(data.join("log"))
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );

    // A third run against something that is not a registry (the time server answers 404)
    // fails clearly and appends nothing.
    let out = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args(["crawl", "--allow-private", "--no-dns", "--registry"])
        .arg(format!("http://127.0.0.1:{}", time.port))
        .arg("--data")
        .arg(&data)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("404"), "{stderr}");
    let log = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args(["log", "verify"])
        .arg(data.join("log"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&log.stdout).contains(&r2["logSize"].to_string()));
    let _ = std::fs::remove_dir_all(&tmp);
}
