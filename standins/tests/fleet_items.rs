//! `standin-fleet --items`: the given registry items are listed by the registry stand-in, and
//! every remote in them answers over TLS for its own name at the address the written pins give,
//! under the CA written beside them (bench/cluster_crawl.sh's registry at real size).
// The test runs the binary it tests (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

fn item(name: &str, version: &str, latest: bool, remotes: &[&str]) -> Value {
    let mut server = json!({"name": name, "description": "t", "version": version});
    if !remotes.is_empty() {
        server["remotes"] = remotes
            .iter()
            .map(|u| json!({"type": "streamable-http", "url": u}))
            .collect();
    } else {
        server["packages"] = json!([{"registryType": "npm", "identifier": "p", "version": "1.0.0",
            "transport": {"type": "stdio"}}]);
    }
    json!({"server": server, "_meta": {"io.modelcontextprotocol.registry/official": {
        "status": "active", "publishedAt": "2025-12-17T00:00:00Z",
        "updatedAt": "2025-12-17T00:00:00Z", "isLatest": latest}}})
}

/// Kills the fleet when the test ends, whatever happens.
struct Fleet(Child);

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn items_are_listed_and_their_remotes_answer_at_the_pinned_addresses() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fleet-items-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let items = json!([
        item("test.a/one", "1.0.0", false, &["https://a.example/mcp/0"]),
        item(
            "test.a/one",
            "1.0.1",
            true,
            &["https://a.example/mcp/0", "https://a.example/mcp/1"]
        ),
        item("test.b/two", "2.0.0", true, &["https://b.example/mcp"]),
        item("test.c/package", "1.0.0", true, &[]),
    ]);
    std::fs::write(dir.join("items.json"), items.to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_standin-fleet"))
        .arg("--items")
        .arg(dir.join("items.json"))
        .arg("--pins-out")
        .arg(dir.join("crawl.toml"))
        .arg("--ca-out")
        .arg(dir.join("ca.pem"))
        .args([
            "--min-ms",
            "1",
            "--max-ms",
            "2",
            "--cluster-concurrency",
            "4",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _fleet = Fleet(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let line: Value = serde_json::from_str(&line).unwrap();
    // The remotes of every version, each once, on one address per host name.
    assert_eq!(line["endpoints"], 3, "{line}");
    assert_eq!(line["hosts"], 2, "{line}");
    assert_eq!(line["servers"], 4, "{line}");
    assert!(
        line["bounds"]["cluster"]["4"]["exactHostSeconds"].as_f64() > Some(0.0),
        "{line}"
    );

    let section = std::fs::read_to_string(dir.join("crawl.toml")).unwrap();
    assert!(section.starts_with("[crawl]\n"), "{section}");
    assert!(section.contains("no_dns = true"), "{section}");
    assert!(section.contains("allow_private = true"), "{section}");
    let pins: Vec<(String, std::net::SocketAddr)> = section
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix('"')?
                .strip_suffix("\",")?
                .split_once('=')
        })
        .map(|(name, addr)| (name.to_owned(), addr.parse().unwrap()))
        .collect();
    assert_eq!(
        pins.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["a.example", "b.example"]
    );

    let ca = std::fs::read(dir.join("ca.pem")).unwrap();
    let mut builder =
        reqwest::Client::builder().tls_certs_only([reqwest::Certificate::from_pem(&ca).unwrap()]);
    for (name, addr) in &pins {
        builder = builder.resolve(name, *addr);
    }
    let client = builder.build().unwrap();
    let registry = line["registry"].as_str().unwrap().to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let page = client
            .get(format!("{registry}/v0.1/servers?version=latest"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let page: Value = serde_json::from_slice(&page).unwrap();
        let names: Vec<&str> = page["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["server"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["test.a/one", "test.b/two", "test.c/package"]);
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        for url in [
            "https://a.example/mcp/0",
            "https://a.example/mcp/1",
            "https://b.example/mcp",
        ] {
            let r = client
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body(init.to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{url}");
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}
