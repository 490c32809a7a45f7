//! `toolmark package observe FILE --json`: a package built here (an npm tarball, a wheel),
//! observed in gVisor, printed as one JSON report. Needs root and runsc; skipped without them,
//! except under CI.
#![allow(clippy::disallowed_methods)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh scratch directory `name`, or `None` (skipped) without runsc.
fn scratch(name: &str) -> Option<PathBuf> {
    if !["/usr/bin/runsc", "/usr/sbin/runsc"]
        .iter()
        .any(|p| Path::new(p).is_file())
    {
        assert!(std::env::var_os("CI").is_none(), "runsc is needed under CI");
        eprintln!("skipped: no runsc");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("toolmark-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

/// `toolmark package observe --json --work DIR/runs ARGS`, which must succeed: its report.
fn observe_json(dir: &Path, args: &[&std::ffi::OsStr]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args(["package", "observe", "--json", "--work"])
        .arg(dir.join("runs"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The report of a one-tool server (`add`) that does nothing else: `ok`, complete, its tool
/// called, nothing found, `phases` run.
fn one_tool_ok(report: &Value, package: &str, phases: &[&str]) {
    assert_eq!(report["package"], package);
    assert_eq!(report["status"], "ok");
    assert_eq!(report["complete"], true);
    assert_eq!(report["tools"], serde_json::json!(["add"]));
    assert!(
        report["artifact"].as_str().unwrap().starts_with("sha256-"),
        "{report}"
    );
    assert!(
        report["digests"]["full"]
            .as_str()
            .unwrap()
            .starts_with("sha256-")
    );
    assert_eq!(report["calls"][0]["outcome"], "ok");
    let run: Vec<&str> = report["behaviour"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(run, phases);
    assert_eq!(report["findings"], serde_json::json!([]));
}

#[test]
fn a_local_tarball_is_observed_and_reported_as_json() {
    let Some(dir) = scratch("package-cli") else {
        return;
    };
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("package.json"),
        r#"{"name":"one-tool","version":"0.1.0","bin":"server.js"}"#,
    )
    .unwrap();
    // One tool, listed and answered; it reads nothing and starts nothing.
    std::fs::write(
        src.join("server.js"),
        r#"const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion:
    m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'one', version: '0.1.0' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'add',
    inputSchema: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'number' }, b: { type: 'number' } } } }] } });
  else send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text',
    text: String(m.params.arguments.a + m.params.arguments.b) }] } });
});
"#,
    )
    .unwrap();
    let packed = Command::new("/usr/bin/npm")
        .args(["pack", "--silent", "--ignore-scripts", "--pack-destination"])
        .arg(&dir)
        .current_dir(&src)
        .env("npm_config_cache", dir.join("pack-cache"))
        .output()
        .unwrap();
    assert!(packed.status.success());
    let tarball: PathBuf = dir.join("one-tool-0.1.0.tgz");
    let report = observe_json(
        &dir,
        &[
            "--offline".as_ref(),
            "--npm-cache".as_ref(),
            dir.join("npm-cache").as_os_str(),
            tarball.as_os_str(),
        ],
    );
    one_tool_ok(&report, "npm:one-tool@0.1.0", &["startup", "calls"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_local_wheel_is_observed_and_reported_as_json() {
    let Some(dir) = scratch("package-cli-wheel") else {
        return;
    };
    let src = dir.join("src/one_tool");
    std::fs::create_dir_all(&src).unwrap();
    // One tool, listed and answered; it reads nothing and starts nothing (stdlib only).
    std::fs::write(
        src.join("__init__.py"),
        r#"import json, sys


def main():
    for line in iter(sys.stdin.readline, ""):
        m = json.loads(line)
        if "id" not in m:
            continue
        if m["method"] == "initialize":
            r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
                 "serverInfo": {"name": "one", "version": "0.1.0"}}
        elif m["method"] == "tools/list":
            r = {"tools": [{"name": "add", "inputSchema": {"type": "object", "required": ["a", "b"],
                 "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}]}
        else:
            a = m["params"]["arguments"]
            r = {"content": [{"type": "text", "text": str(a["a"] + a["b"])}]}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#,
    )
    .unwrap();
    let made = Command::new("/usr/bin/python3")
        .arg("-I")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("sandbox/tests/fixtures/wheel.py"))
        .arg(dir.join("src"))
        .arg(&dir)
        .args(["one-tool", "0.1.0", "one-tool = one_tool:main", ""])
        .output()
        .unwrap();
    assert!(made.status.success());
    let wheel = PathBuf::from(String::from_utf8(made.stdout).unwrap().trim());
    // Offline: the only wheel pip may take is the one given.
    let report = observe_json(
        &dir,
        &[
            "--find-links".as_ref(),
            dir.join("src").as_os_str(),
            "--pip-cache".as_ref(),
            dir.join("pip-cache").as_os_str(),
            wheel.as_os_str(),
        ],
    );
    one_tool_ok(&report, "pypi:one-tool@0.1.0", &["startup", "calls"]);
    assert_eq!(
        report["installScripts"],
        serde_json::json!([{"package": "one_tool-0.1.0.dist-info", "script": "console_scripts",
            "command": "one-tool = one_tool:main"}])
    );
    let _ = std::fs::remove_dir_all(&dir);
}
