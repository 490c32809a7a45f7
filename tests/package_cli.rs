//! `toolmark package observe FILE.tgz --json`: a package built here, observed in gVisor, printed
//! as one JSON report. Needs root and runsc; skipped without them, except under CI.
#![allow(clippy::disallowed_methods)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn a_local_tarball_is_observed_and_reported_as_json() {
    if !["/usr/bin/runsc", "/usr/sbin/runsc"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file())
    {
        assert!(std::env::var_os("CI").is_none(), "runsc is needed under CI");
        eprintln!("skipped: no runsc");
        return;
    }
    let dir = std::env::temp_dir().join(format!("toolmark-package-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
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
    let out = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args(["package", "observe", "--json", "--offline", "--work"])
        .arg(dir.join("runs"))
        .arg("--npm-cache")
        .arg(dir.join("npm-cache"))
        .arg(&tarball)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["package"], "npm:one-tool@0.1.0");
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
    let phases: Vec<&str> = report["behaviour"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["startup", "calls"]);
    assert_eq!(report["findings"], serde_json::json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}
