//! The package sweep end to end: a registry stand-in lists one npm server, a real npm registry
//! on loopback (Verdaccio) serves the two versions published to it, `toolmark crawl` stores the listing, `toolmark package
//! sweep` observes each version once in gVisor and logs it, and `toolmark serve` answers
//! `/check` for the package with its version, behaviour and proof; the newer version's secret
//! read is a dangerous behaviour change.
//! Needs root, runsc and Verdaccio (`scripts/verdaccio`); skipped without them, except under
//! CI.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod common;
#[path = "../sandbox/tests/support/registries.rs"]
mod registries;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::packages::{item, pack, registry_item, tools};
use common::{Stream, Watched, check};
use registries::{PypiServer, Verdaccio};
use serde_json::{Value, json};
use toolmark_standins::registry::RegistryStandIn;

fn toolmark(args: &[&str], paths: &[&Path]) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    cmd.args(args).args(paths);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "toolmark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn crawl(registry: &str, data: &Path) {
    let report = data.with_extension("report.json");
    toolmark(
        &[
            "crawl",
            "--registry",
            registry,
            "--allow-private",
            "--no-dns",
            "--harvest",
            "full",
            "--report",
        ],
        &[&report, Path::new("--data"), data],
    );
}

fn sweep(registry: &str, npm: &str, dir: &Path) -> Value {
    sweep_with(registry, &["--npm-registry", npm], dir)
}

fn sweep_with(registry: &str, index: &[&str], dir: &Path) -> Value {
    let mut args = vec![
        "package",
        "sweep",
        "--json",
        "--allow-private",
        "--registry",
        registry,
    ];
    args.extend_from_slice(index);
    args.push("--data");
    toolmark(
        &args,
        &[
            &dir.join("data"),
            Path::new("--work"),
            &dir.join("runs"),
            Path::new("--cache"),
            &dir.join("cache"),
        ],
    )
}

/// runsc and the registry install `variable` names (by its script), or `None` when a part is
/// missing: the test is then skipped, except under CI, where it fails.
fn parts(variable: &str, script: &str) -> Option<PathBuf> {
    let runsc = ["/usr/bin/runsc", "/usr/sbin/runsc"]
        .iter()
        .any(|p| Path::new(p).is_file());
    if !runsc {
        assert!(std::env::var_os("CI").is_none(), "runsc is needed under CI");
        eprintln!("skipped: no runsc");
        return None;
    }
    registries::installed(variable, script)
}

/// `toolmark serve` over `data` on a loopback port: the process and its base URL.
fn serve(data: &Path) -> (Watched, String) {
    let mut serve = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    serve
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data);
    let mut service = Watched::spawn(serve, Stream::Stderr, "serve");
    let line = service.wait_for("toolmark serving", Instant::now() + Duration::from_secs(60));
    let base = Watched::url_in(&line);
    (service, base)
}

#[test]
fn each_version_is_observed_once_logged_and_answered_with_its_behaviour() {
    let Some(install) = parts("TOOLMARK_VERDACCIO", "verdaccio") else {
        return;
    };
    let dir: PathBuf =
        std::env::temp_dir().join(format!("toolmark-package-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let verdaccio = Verdaccio::start(&install, &dir);
    verdaccio.publish(&pack(&dir, "0.1.0"));
    let npm = verdaccio.url.clone();
    let registry = runtime
        .block_on(RegistryStandIn::start(vec![item(
            "0.1.0",
            "2026-12-01T00:00:00Z",
        )]))
        .unwrap();
    let data = dir.join("data");

    // Day one: the crawl lists the package (awaiting the sandbox); the sweep observes 0.1.0.
    crawl(&registry.url(), &data);
    let first = sweep(&registry.url(), &npm, &dir);
    assert_eq!(first["packages"], 1, "{first}");
    assert_eq!(first["chosen"], json!({"never-observed": 1}), "{first}");
    assert_eq!(first["totals"], json!({"ok": 1}), "{first}");
    // Observed completely by this observer: the next sweep has nothing to do.
    let again = sweep(&registry.url(), &npm, &dir);
    assert_eq!(again["chosen"], json!({}), "{again}");
    assert_eq!(again["totals"], json!({}), "{again}");

    // Day two: 0.2.0 is published and listed; the sweep observes it first, as a new version.
    verdaccio.publish(&pack(&dir, "0.2.0"));
    registry.set_items(vec![item("0.2.0", "2026-12-02T00:00:00Z")]);
    crawl(&registry.url(), &data);
    let second = sweep(&registry.url(), &npm, &dir);
    assert_eq!(second["chosen"], json!({"new-version": 1}), "{second}");
    assert_eq!(second["totals"], json!({"ok": 1}), "{second}");

    // The index: two versions, the newer one's secret read, a dangerous behaviour change.
    let index = toolmark_index::Index::open_read_only(&data.join("index.sqlite")).unwrap();
    let target = index.targets_of("io.example/one-tool").unwrap().remove(0);
    assert_eq!(
        target.skip_reason, None,
        "observed: no longer awaiting the sandbox"
    );
    let seen = index.package_observations(&target.id, 10).unwrap();
    let versions: Vec<&str> = seen.iter().map(|o| o.version.as_str()).collect();
    assert_eq!(versions, ["0.1.0", "0.2.0"]);
    assert!(seen.iter().all(|o| o.complete), "{seen:?}");
    // The declared key sent to the package's own service: seen, and no leak.
    let codes = |o: &toolmark_index::packages::PackageObservation| -> Vec<String> {
        o.behaviour
            .findings
            .iter()
            .map(|f| f.code.clone())
            .collect()
    };
    assert_eq!(codes(&seen[0]), ["STARTUP_NETWORK"], "{seen:?}");
    assert_eq!(
        seen[0].behaviour.startup.requests,
        ["https://api.one-tool.example"]
    );
    assert_eq!(seen[1].behaviour.startup.decoys, [".ssh/id_rsa"]);
    let changes = index
        .latest_changes(None, 10, Some("io.example/one-tool"), None)
        .unwrap();
    let kinds: Vec<(&str, &str)> = changes
        .iter()
        .map(|c| (c.kind.as_str(), c.class.as_str()))
        .collect();
    assert!(kinds.contains(&("behaviour", "dangerous")), "{kinds:?}");
    assert!(kinds.iter().any(|(k, _)| *k == "tools"), "{kinds:?}");
    drop(index);

    // The answers: the newer set is `same` with the version and its behaviour; the older one
    // `previously-observed`; each backed by a log entry with its proof.
    let (service, base) = serve(&data);
    let same = check(
        &base,
        &json!({"package": "npm:one-tool", "tools": tools("0.2.0")}),
    );
    assert_eq!(same["match"], "same", "{same}");
    let target = &same["target"];
    assert_eq!(target["packageVersion"], "0.2.0", "{same}");
    let signals = &target["packageSignals"];
    assert_eq!(signals["version"], "0.2.0");
    assert_eq!(signals["previousVersion"], "0.1.0");
    assert_eq!(signals["behaviour"]["complete"], true);
    assert_eq!(
        signals["behaviour"]["startup"]["decoys"],
        json!([".ssh/id_rsa"])
    );
    assert!(signals["behaviour"]["installScripts"]["exec"].is_array());
    assert_eq!(
        signals["behaviour"]["calls"]["tools"],
        json!(["add", "sub"])
    );
    let codes: Vec<&str> = signals["behaviour"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["READS_SECRETS", "STARTUP_NETWORK"]);
    assert!(same["proof"]["tlogProof"].is_string());
    let entry: Value = serde_json::from_str(same["proof"]["entry"].as_str().unwrap()).unwrap();
    assert_eq!(entry["subject"]["package"], "npm:one-tool@0.2.0", "{entry}");
    let older = check(
        &base,
        &json!({"package": "npm:one-tool", "tools": tools("0.1.0")}),
    );
    assert_eq!(older["match"], "previously-observed", "{older}");
    let other = check(
        &base,
        &json!({"package": "npm:one-tool", "tools": [{"name": "rm", "inputSchema": {"type": "object"}}]}),
    );
    assert_eq!(other["match"], "different", "{other}");
    // The desk lists both versions with the newer one's finding; the feed says what changed.
    let get = |path: &str| {
        ureq::get(&format!("{base}{path}"))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap()
    };
    let page = get(&format!("/s/{}", target["id"].as_str().unwrap()));
    for needle in [
        "package-versions",
        "0.1.0",
        "0.2.0",
        "READS_SECRETS (startup)",
        ".ssh/id_rsa",
    ] {
        assert!(page.contains(needle), "{needle} not on the target page");
    }
    let feed = get("/feed.xml");
    assert!(
        feed.contains("io.example/one-tool: behaviour changed (dangerous)"),
        "{feed}"
    );
    drop(service);
    drop(registry);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stdio MCP server in Python (standard library only) with one tool.
const PYTHON_SERVER: &str = r#"import json, sys


def main():
    for line in iter(sys.stdin.readline, ""):
        m = json.loads(line)
        if "id" not in m:
            continue
        if m["method"] == "initialize":
            r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
                 "serverInfo": {"name": "py-tool", "version": "1.0.0"}}
        elif m["method"] == "tools/list":
            r = {"tools": [{"name": "now", "inputSchema": {"type": "object", "properties": {}}}]}
        else:
            r = {"content": [{"type": "text", "text": "12:00"}]}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#;

#[test]
fn a_pypi_server_is_fetched_from_a_simple_index_observed_and_answered() {
    let Some(venv) = parts("TOOLMARK_PYPISERVER", "pypiserver") else {
        return;
    };
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "toolmark-package-sweep-pypi-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let src = dir.join("src/py_tool");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("__init__.py"), PYTHON_SERVER).unwrap();
    let wheels = dir.join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let made = Command::new("/usr/bin/python3")
        .arg("-I")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("sandbox/tests/fixtures/wheel.py"))
        .arg(dir.join("src"))
        .arg(&wheels)
        .args(["py-tool", "1.0.0", "py-tool = py_tool:main", ""])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let pypiserver = PypiServer::start(&venv, &wheels);
    let index = pypiserver.url.clone();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = runtime
        .block_on(RegistryStandIn::start(vec![registry_item(
            "io.example/py-tool",
            "1.0.0",
            "2026-12-01T00:00:00Z",
            json!([{"registryType": "pypi", "identifier": "Py_Tool", "version": "1.0.0",
                "runtimeHint": "uvx", "transport": {"type": "stdio"}}]),
        )]))
        .unwrap();
    let data = dir.join("data");
    crawl(&registry.url(), &data);
    let report = sweep_with(&registry.url(), &["--pypi-index", &index], &dir);
    drop(pypiserver);
    assert_eq!(report["chosen"], json!({"never-observed": 1}), "{report}");
    assert_eq!(report["totals"], json!({"ok": 1}), "{report}");

    let index = toolmark_index::Index::open_read_only(&data.join("index.sqlite")).unwrap();
    let target = index.targets_of("io.example/py-tool").unwrap().remove(0);
    let seen = index.package_observations(&target.id, 10).unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].package, "pypi:Py_Tool@1.0.0");
    assert!(seen[0].complete, "{seen:?}");
    assert!(seen[0].behaviour.findings.is_empty(), "{seen:?}");
    drop(index);

    // WARDEN asks with the PEP 503 name.
    let (service, base) = serve(&data);
    let tools = json!([{"name": "now", "inputSchema": {"type": "object", "properties": {}}}]);
    let same = check(&base, &json!({"package": "pypi:py-tool", "tools": tools}));
    assert_eq!(same["match"], "same", "{same}");
    assert_eq!(same["target"]["packageVersion"], "1.0.0", "{same}");
    assert_eq!(
        same["target"]["packageSignals"]["behaviour"]["calls"]["tools"],
        json!(["now"])
    );
    drop(service);
    drop(registry);
    let _ = std::fs::remove_dir_all(&dir);
}
