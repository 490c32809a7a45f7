//! `toolmark demo` end to end, as a newcomer runs it: the desk's URL printed at once, two crawls
//! of the bundled registry days over the stand-in fleet (and the real server-everything when
//! scripts/mcp-servers installed it), then the desk, `/check` with a proof that verifies
//! offline, and feeds carrying the day-two changes; the package half: with gVisor (runsc, root)
//! the real npm/PyPI servers scripts/mcp-servers downloaded are swept and answered, without it
//! one line says why they stay unobserved.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Stream, Watched};

use serde_json::{Value, json};

/// The promise: the URL is printed within a minute of start.
const URL_WITHIN: Duration = Duration::from_secs(60);
/// Both crawls end well within this on the slowest machine seen (they take seconds).
const READY_WITHIN: Duration = Duration::from_secs(240);

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

fn get(url: &str) -> (u16, String) {
    let mut r = agent().get(url).call().expect("GET");
    (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
}

fn check(base: &str, body: &Value) -> Value {
    let mut r = agent()
        .post(&format!("{base}/api/v1/check"))
        .header("content-type", "application/json")
        .send(body.to_string())
        .expect("POST /check");
    assert_eq!(r.status().as_u16(), 200);
    serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
}

/// The id of the target observed at `url` (searched by its host name).
fn target_id(base: &str, url: &str) -> String {
    let host = url["https://".len()..].split('/').next().unwrap();
    let (_, found) = get(&format!("{base}/api/v1/servers?q={host}"));
    let found: Value = serde_json::from_str(&found).unwrap();
    found["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["endpoint"] == url)
        .unwrap_or_else(|| panic!("{url} not listed: {found:#}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The observation document of target `id`'s latest log entry: the entry from its offline
/// bundle (`/api/v1/lookup/{id}`), then the document its `raw` names.
fn observed_document(base: &str, id: &str) -> Value {
    let (status, bundle) = get(&format!("{base}/api/v1/lookup/{id}"));
    assert_eq!(status, 200, "{bundle}");
    let proof = toolmark_log::proof::decode_tlog_proof(&bundle).unwrap();
    let entry = toolmark_log::entry::Entry::decode(&proof.extra.unwrap()).unwrap();
    let sri = entry.raw.unwrap().to_string();
    let path: String = sri
        .chars()
        .map(|c| match c {
            '+' => "%2B".to_owned(),
            '/' => "%2F".to_owned(),
            '=' => "%3D".to_owned(),
            c => c.to_string(),
        })
        .collect();
    let (status, document) = get(&format!("{base}/api/v1/documents/{path}"));
    assert_eq!(status, 200, "{document}");
    serde_json::from_str(&document).unwrap()
}

/// scripts/mcp-servers's directory, as the demo finds it (`TOOLMARK_MCP_SERVERS`, or
/// `.venv/mcp-servers` under the repository), if installed.
fn mcp_servers() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("TOOLMARK_MCP_SERVERS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/mcp-servers"));
    dir.join("packages").is_dir().then_some(dir)
}

/// Whether the demo can sweep packages here: runsc installed and the test run as root.
fn gvisor() -> bool {
    let runsc = ["/usr/bin/runsc", "/usr/sbin/runsc", "/usr/local/bin/runsc"]
        .iter()
        .any(|p| Path::new(p).is_file());
    let uid = Command::new("id").arg("-u").output().unwrap();
    runsc && String::from_utf8_lossy(&uid.stdout).trim() == "0"
}

/// The tools the real server-memory (the one scripts/mcp-servers installed beside supergateway,
/// the version the demo sweeps) lists to a client over stdio, run on the host: what a scanner
/// would have received and asks `/check` about.
fn server_memory_tools(servers: &Path) -> Value {
    use std::io::{BufRead, BufReader, Write};
    let script =
        servers.join("supergateway/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let memory =
        std::env::temp_dir().join(format!("toolmark-demo-memory-{}.jsonl", std::process::id()));
    let mut child = Command::new("node")
        .arg(&script)
        .env("MEMORY_FILE_PATH", &memory)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node runs server-memory");
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "demo-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut tools = Value::Null;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let reply: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if reply["id"] == 2 {
            tools = reply["result"]["tools"].clone();
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&memory);
    assert!(tools.is_array(), "server-memory listed no tools");
    tools
}

fn tools_of(file: &str) -> Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("toolset/tests/fixtures/corpus");
    for dir in ["mcp-proxy-snapshots", "docker-mcp-registry"] {
        let path = root.join(dir).join(file);
        if path.exists() {
            let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            return match v {
                Value::Array(_) => v,
                mut o => o["tools"].take(),
            };
        }
    }
    panic!("{file} not in the corpus fixtures")
}

#[test]
fn demo_serves_the_desk_checks_with_proofs_and_feeds_day_two() {
    let data = std::env::temp_dir().join(format!("toolmark-demo-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let started = Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    command
        .args(["demo", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data);
    let mut demo = Watched::spawn(command, Stream::Stdout, "toolmark demo");
    let base = Watched::url_in(&demo.wait_for("the desk is at", started + URL_WITHIN));
    demo.wait_for("ready:", started + READY_WITHIN);
    eprintln!(
        "the demo was ready {:.1} s after it started",
        started.elapsed().as_secs_f64()
    );

    // The desk answers.
    let (status, home) = get(&format!("{base}/"));
    assert_eq!(status, 200);
    assert!(home.contains("toolmark"));
    for page in ["/changes", "/log", "/check"] {
        let (status, body) = get(&format!("{base}{page}"));
        assert_eq!(status, 200, "{page}: {body}");
    }

    let manifest: Value =
        serde_json::from_slice(&std::fs::read(data.join("demo.json")).unwrap()).unwrap();
    let stand_ins = manifest["standIns"].as_array().unwrap();
    assert!(stand_ins.len() > 200, "one stand-in per dialable remote");
    // The replica keeps the registry's real URLs: each stand-in answers for one over https, at
    // a loopback address of its own the crawler pins the host name to.
    for s in stand_ins {
        let url = s["url"].as_str().unwrap();
        let host = url
            .strip_prefix("https://")
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("not an https URL: {s}"));
        assert!(host.parse::<std::net::IpAddr>().is_err(), "{s}");
        assert!(s["standIn"].as_str().unwrap().starts_with("127.1."), "{s}");
    }

    // /check with a real corpus tool set an unchanged stand-in served: `same`, with a proof
    // that verifies offline against the keys the service publishes.
    let unchanged = stand_ins
        .iter()
        .find(|s| s["day1"] == "server-memory.json" && s.get("day2Edit").is_none())
        .expect("an unchanged stand-in serving server-memory");
    let answer = check(
        &base,
        &json!({"endpoint": unchanged["url"], "tools": tools_of("server-memory.json")}),
    );
    assert_eq!(answer["match"], "same", "{answer:#}");
    let (_, issuer) = get(&format!("{base}/api/v1/issuer"));
    let issuer: Value = serde_json::from_str(&issuer).unwrap();
    let key = issuer["publicKeyHex"].as_str().unwrap();
    let (_, vkey) = get(&format!("{base}/api/v1/log/vkey"));
    let sent =
        toolmark_toolset::ToolSet::parse(tools_of("server-memory.json").to_string().as_bytes())
            .unwrap();
    let compared = toolmark_toolset::full::digest(&sent);
    let verified = toolmark_client::verify_answer(&answer, key, vkey.trim(), Some(&compared))
        .expect("the answer verifies offline");
    assert_eq!(
        verified.entry.subject.target,
        unchanged["url"].as_str().unwrap()
    );
    // The desk shows the real URL.
    let url = unchanged["url"].as_str().unwrap();
    let id = target_id(&base, url);
    let (status, page) = get(&format!("{base}/s/{id}"));
    assert_eq!(status, 200);
    assert!(page.contains(url), "the target page names {url}");
    // The observation was made at the stand-in's pinned address.
    let document = observed_document(&base, &id);
    assert_eq!(document["address"], unchanged["standIn"], "{document:#}");

    // A stand-in that changed on day two: its day-two tools are `same`, its day-one tools
    // were observed before.
    let changed: Vec<&Value> = stand_ins
        .iter()
        .filter(|s| s.get("day2Edit").is_some())
        .collect();
    assert!(changed.len() >= 5, "{}", changed.len());
    let one = changed[0];
    let now = check(
        &base,
        &json!({"endpoint": one["url"], "tools": one["day2Tools"]["tools"]}),
    );
    assert_eq!(now["match"], "same", "{now:#}");
    let before = check(
        &base,
        &json!({"endpoint": one["url"], "tools": tools_of(one["day1"].as_str().unwrap())}),
    );
    assert_eq!(before["match"], "previously-observed", "{before:#}");

    // The feeds carry every day-two change, with its class.
    let (status, atom) = get(&format!("{base}/feed.xml"));
    assert_eq!(status, 200);
    let atom = feed_rs::parser::parse(atom.as_bytes()).expect("the Atom feed parses");
    let (_, json_feed) = get(&format!("{base}/feed.json"));
    let json_feed: Value = serde_json::from_str(&json_feed).unwrap();
    let items = json_feed["items"].as_array().unwrap();
    assert_eq!(atom.entries.len(), items.len());
    for s in &changed {
        let item = items
            .iter()
            .find(|i| i["_toolmark"]["endpoint"] == s["url"])
            .unwrap_or_else(|| panic!("no feed item for {s}"));
        if s["day2Edit"].as_str().unwrap().contains("tool poisoning") {
            assert_eq!(item["_toolmark"]["class"], "dangerous", "{item:#}");
        }
    }
    // Remotes that ask for a key are dialled without it: their stand-ins refuse, and the one
    // whose authorization server was swapped on day two is a dangerous authorization change.
    let swapped = stand_ins
        .iter()
        .find(|s| s.get("day2AuthorizationServer").is_some())
        .expect("one keyed stand-in swaps its authorization server");
    let item = items
        .iter()
        .find(|i| i["_toolmark"]["endpoint"] == swapped["url"])
        .unwrap_or_else(|| panic!("no feed item for {swapped}"));
    assert_eq!(item["_toolmark"]["kind"], "authorization", "{item:#}");
    assert_eq!(item["_toolmark"]["class"], "dangerous");
    assert_eq!(
        item["_toolmark"]["authorizationServers"]["new"],
        json!([swapped["day2AuthorizationServer"]])
    );
    // A keyed stand-in's protected-resource metadata names the real URL as its resource.
    let keyed_one = stand_ins
        .iter()
        .find(|s| s["keyed"] == true && s.get("day2AuthorizationServer").is_none())
        .unwrap();
    let keyed_url = keyed_one["url"].as_str().unwrap();
    let document = observed_document(&base, &target_id(&base, keyed_url));
    assert_eq!(document["status"], "auth-required", "{document:#}");
    assert_eq!(
        document["auth"]["protectedResource"]["resource"], keyed_url,
        "{document:#}"
    );
    let keyed = stand_ins.iter().filter(|s| s["keyed"] == true).count();
    assert!(keyed > 200, "the smithery remotes alone are 211: {keyed}");
    if let Some(everything) = manifest["serverEverything"].as_object() {
        let versions = everything["versions"].as_array().unwrap();
        if versions[0] != versions[1] {
            assert!(
                items
                    .iter()
                    .any(|i| i["_toolmark"]["endpoint"] == everything["url"]),
                "the real server-everything upgrade is in the feed"
            );
        }
    }

    // The package half.
    let servers = mcp_servers();
    let unobserved = demo
        .seen
        .iter()
        .find(|l| l.contains("packages: not observed"));
    match (&servers, gvisor()) {
        (Some(servers), true) => {
            assert!(unobserved.is_none(), "{unobserved:?}");
            packages_are_swept_and_answered(&base, &manifest, servers, &demo.seen);
        }
        _ => assert!(
            unobserved.is_some(),
            "no line says why packages stay unobserved"
        ),
    }

    // SIGTERM ends it cleanly.
    demo.signal("-TERM");
    let status = demo.exit(Instant::now() + Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(&data);
}

/// With gVisor, the real packages are swept after the crawls: each logged `ok`, server-memory's
/// tool set as the real server lists it is `same` for its package with its version, and the
/// desk's target page lists the version observed.
fn packages_are_swept_and_answered(base: &str, manifest: &Value, servers: &Path, seen: &[String]) {
    let listed = manifest["packages"].as_array().unwrap();
    assert_eq!(listed.len(), 3, "{listed:#?}");
    assert!(listed.iter().all(|p| p["sandbox"] == true), "{listed:#?}");
    assert!(
        seen.iter()
            .any(|l| l.contains("packages swept in gVisor") && l.contains("(ok 3)")),
        "{seen:#?}"
    );
    let memory = listed
        .iter()
        .find(|p| p["package"] == "npm:@modelcontextprotocol/server-memory")
        .unwrap();
    let answer = check(
        base,
        &json!({"package": memory["package"], "tools": server_memory_tools(servers)}),
    );
    assert_eq!(answer["match"], "same", "{answer:#}");
    assert_eq!(
        answer["target"]["packageVersion"], memory["version"],
        "{answer:#}"
    );
    assert_eq!(
        answer["target"]["packageSignals"]["behaviour"]["complete"], true,
        "{answer:#}"
    );
    let (status, page) = get(answer["target"]["page"].as_str().unwrap());
    assert_eq!(status, 200);
    for needle in ["Package versions", memory["version"].as_str().unwrap()] {
        assert!(page.contains(needle), "{needle} not on the target page");
    }
}

/// Without gVisor (hidden here by `--no-sandbox`, as on a machine without runsc) the demo says
/// at once, in one line, why its packages stay unobserved and how to see them swept.
#[test]
fn without_gvisor_one_line_says_why_packages_stay_unobserved_and_how_to_see_them() {
    let data = std::env::temp_dir().join(format!(
        "toolmark-demo-test-nosandbox-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&data);
    let started = Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    command
        .args(["demo", "--no-sandbox", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data);
    let mut demo = Watched::spawn(command, Stream::Stdout, "toolmark demo --no-sandbox");
    demo.wait_for("the desk is at", started + URL_WITHIN);
    let line = demo.wait_for("packages:", started + URL_WITHIN);
    let want = if mcp_servers().is_some() {
        "  packages: not observed — gVisor hidden by --no-sandbox; run the demo without --no-sandbox to see 3 real npm/PyPI servers swept in gVisor"
    } else {
        "  packages: not observed — the real servers' files are not installed (scripts/mcp-servers); run scripts/mcp-servers, install Debian's runsc and run the demo as root to see 3 real npm/PyPI servers swept in gVisor"
    };
    assert_eq!(line, want);
    // Said before the crawls end: the desk is not yet ready.
    assert!(
        !demo.seen.iter().any(|l| l.contains("ready:")),
        "{:#?}",
        demo.seen
    );
    demo.signal("-TERM");
    let status = demo.exit(Instant::now() + Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(&data);
}
