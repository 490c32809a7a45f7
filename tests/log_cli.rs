//! `toolmark log …` as a user runs it: init, append from JSON lines, proof bundles that verify
//! offline, and `verify` of a log served over real loopback HTTP (a plain static file server),
//! with the audit state catching a later tampered tile.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod common;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use toolmark_log::proof;

fn toolmark(args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    c.args(args);
    common::output_with_stdin(c, stdin)
}

fn line(i: usize) -> String {
    format!(
        "{{\"subject\":{{\"server\":\"io.example/s{}\",\"target\":\"https://s{}.example.com/mcp\"}},\"observedAt\":\"2026-11-30T14:00:00Z\",\"status\":\"ok\",\"tools\":{i},\"mtl1\":\"sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c=\"}}\n",
        i % 3,
        i % 3
    )
}

fn lines(range: std::ops::Range<usize>) -> String {
    range.map(line).collect()
}

/// A static file server on loopback (Python's http.server), stopped on drop.
struct Static(Child, u16);

impl Static {
    fn serve(dir: &Path) -> Static {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
                "--directory",
            ])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the static server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Static(child, port)
    }
}

impl Drop for Static {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolmark-logcli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn init_append_proof_and_verify_over_http() {
    let dir = tempdir("http");
    let d = dir.to_str().unwrap();
    let o = toolmark(&["log", "init", d, "--origin", "cli.example/log"], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = toolmark(&["log", "append", d], Some(&lines(0..300)));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let indices: Vec<u64> = out.lines().map_while(|l| l.parse().ok()).collect();
    assert_eq!(indices, (0..300).collect::<Vec<u64>>());
    assert!(out.contains("cli.example/log\n300\n"), "{out}");

    // Bad input: one clear line, exit 1, nothing appended.
    let o = toolmark(&["log", "append", d], Some("{\"subject\":1}\n"));
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("stdin line 1"));

    // The verifier key, and a proof bundle that verifies offline against an entry we read back.
    let vkey = String::from_utf8(toolmark(&["log", "key", d], None).stdout).unwrap();
    let vkey = vkey.trim();
    assert!(vkey.starts_with("cli.example/log+"));
    let bundle = String::from_utf8(toolmark(&["log", "proof", d, "7"], None).stdout).unwrap();
    let p = proof::decode_tlog_proof(&bundle).unwrap();
    let log = toolmark_log::Log::open(&dir).unwrap();
    let entry = log.entry(7).unwrap();
    drop(log);
    // The bundle carries the entry itself; it is the one the log holds at that index.
    assert_eq!(p.extra.as_deref(), Some(entry.as_slice()));
    let decoded = toolmark_log::entry::Entry::decode(&entry).unwrap();
    assert_eq!(decoded.tools, Some(7));
    let cp = proof::verify_tlog_proof(&p, &entry, vkey).unwrap();
    assert_eq!(cp.size, 300);
    assert!(proof::verify_tlog_proof(&p, b"another entry", vkey).is_err());

    // Verify over loopback HTTP, remembering the checkpoint.
    let server = Static::serve(&dir.join("public"));
    let url = format!("http://127.0.0.1:{}", server.1);
    let state = dir.with_extension("state");
    let s = state.to_str().unwrap();
    let o = toolmark(&["log", "verify", &url, "--vkey", vkey, "--state", s], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ok: cli.example/log at size 300"));

    // The log grows: consistent with what was remembered.
    assert!(
        toolmark(&["log", "append", d], Some(&lines(300..520)))
            .status
            .success()
    );
    let o = toolmark(&["log", "verify", &url, "--state", s], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("consistent with the remembered checkpoint at size 300")
    );

    // A tampered tile on the server: a clear error, exit 1.
    let tile = dir.join("public/tile/0/000");
    let mut b = std::fs::read(&tile).unwrap();
    b[0] ^= 1;
    std::fs::write(&tile, b).unwrap();
    let o = toolmark(&["log", "verify", &url, "--state", s], None);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("tile/0/000") && !err.contains("panicked"),
        "{err}"
    );
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&state).ok();
}

/// Witnesses for `log verify --witness`: cosigner keys 1 and 2 (and their vkeys).
fn cosigner(i: u8) -> toolmark_log::cosignature::CosignerKey {
    toolmark_log::cosignature::CosignerKey::from_seed(
        &format!("w{i}.example/witness"),
        &[60 + i; 32],
    )
    .unwrap()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A log of 5 entries whose published checkpoint carries the cosignatures `cosigs` (witness,
/// seconds ago); returns the directory.
fn cosigned_log(tag: &str, cosigs: &[(u8, u64)]) -> PathBuf {
    let dir = tempdir(tag);
    let d = dir.to_str().unwrap();
    assert!(
        toolmark(&["log", "init", d, "--origin", "cli.example/log"], None)
            .status
            .success()
    );
    assert!(
        toolmark(&["log", "append", d], Some(&lines(0..5)))
            .status
            .success()
    );
    let path = dir.join("public/checkpoint");
    let note = std::fs::read(&path).unwrap();
    let (text, _) = toolmark_log::cosignature::split_note(&note).unwrap();
    let now = unix_now();
    let added: Vec<String> = cosigs
        .iter()
        .map(|&(i, ago)| cosigner(i).cosign(text, now - ago).unwrap().to_line())
        .collect();
    let cosigned = toolmark_log::cosignature::add_signature_lines(&note, &added);
    std::fs::write(&path, cosigned).unwrap();
    dir
}

fn verify_with(dir: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let vkey =
        String::from_utf8(toolmark(&["log", "key", dir.to_str().unwrap()], None).stdout).unwrap();
    let mut args = vec![
        "log",
        "verify",
        dir.to_str().unwrap(),
        "--vkey",
        vkey.trim(),
    ];
    args.extend_from_slice(extra);
    let o = toolmark(&args, None);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn verify_with_witnesses_prints_who_cosigned_when_and_passes_the_quorum() {
    let dir = cosigned_log("wit-ok", &[(1, 30), (2, 90)]);
    let (w1, w2) = (
        cosigner(1).witness_key().vkey(),
        cosigner(2).witness_key().vkey(),
    );
    let (code, out, err) = verify_with(
        &dir,
        &["--witness", &w1, "--witness", &w2, "--max-age", "600"],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("ok: cli.example/log at size 5"), "{out}");
    assert!(
        out.contains("witness w1.example/witness: cosigned at 20"),
        "{out}"
    );
    assert!(
        out.contains("witness w2.example/witness: cosigned at 20"),
        "{out}"
    );
    assert!(
        out.contains("witnessed: 2 of 2 witnesses, at most 600 s old"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn verify_fails_when_the_witness_quorum_is_not_met() {
    let dir = cosigned_log("wit-quorum", &[(1, 30)]);
    let (w1, w2) = (
        cosigner(1).witness_key().vkey(),
        cosigner(2).witness_key().vkey(),
    );
    let (code, out, err) =
        verify_with(&dir, &["--witness", &w1, "--witness", &w2, "--quorum", "2"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("witness w2.example/witness: no cosignature"),
        "{out}"
    );
    assert!(
        err.contains("not witnessed as required: 2 of 2 witnesses"),
        "{err}"
    );
    // One of the two is enough with --quorum 1 (given as `run` takes them, VKEY@URL).
    let (w1_at, w2_at) = (
        format!("{w1}@https://w1.example/"),
        format!("{w2}@https://w2.example/"),
    );
    let (code, ..) = verify_with(
        &dir,
        &["--witness", &w1_at, "--witness", &w2_at, "--quorum", "1"],
    );
    assert_eq!(code, Some(0));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn verify_fails_when_the_cosignatures_are_older_than_max_age() {
    let dir = cosigned_log("wit-age", &[(1, 7200)]);
    let w1 = cosigner(1).witness_key().vkey();
    let (code, out, err) = verify_with(&dir, &["--witness", &w1, "--max-age", "3600"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("not counted"), "{out}");
    let (code, ..) = verify_with(&dir, &["--witness", &w1, "--max-age", "10800"]);
    assert_eq!(code, Some(0));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn verify_fails_on_a_forged_cosignature() {
    let dir = cosigned_log("wit-forged", &[]);
    let path = dir.join("public/checkpoint");
    let note = std::fs::read(&path).unwrap();
    let (text, _) = toolmark_log::cosignature::split_note(&note).unwrap();
    let mut forged = cosigner(1).cosign(text, unix_now()).unwrap();
    forged.signature[0] ^= 1;
    std::fs::write(
        &path,
        toolmark_log::cosignature::add_signature_lines(&note, &[forged.to_line()]),
    )
    .unwrap();
    let w1 = cosigner(1).witness_key().vkey();
    let (code, out, err) = verify_with(&dir, &["--witness", &w1]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains("witness cosignatures") && !err.contains("panicked"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn verify_reads_a_tlog_policy_file() {
    let dir = cosigned_log("wit-policy", &[(2, 10)]);
    let vkey =
        String::from_utf8(toolmark(&["log", "key", dir.to_str().unwrap()], None).stdout).unwrap();
    let policy = dir.with_extension("policy");
    std::fs::write(
        &policy,
        format!(
            "log {}\nwitness a {}\nwitness b {}\ngroup either any a b\nquorum either\n",
            vkey.trim(),
            cosigner(1).witness_key().vkey(),
            cosigner(2).witness_key().vkey()
        ),
    )
    .unwrap();
    // The policy's `log` line is the key trusted: no --vkey needed.
    let o = toolmark(
        &[
            "log",
            "verify",
            dir.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
        ],
        None,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("witness b: cosigned at") && out.contains("witness a: no cosignature"),
        "{out}"
    );
    assert!(out.contains("witnessed: group either"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&policy).ok();
}
