//! `toolmark package lookalike NAME` (the JSON answer, exit 1 on a look-alike) and
//! `toolmark package popularity --refresh` against a loopback stand-in serving npm's downloads
//! API and pypistats in their documented shapes (real answers could not be recorded here: the
//! APIs are not reachable from the machines toolmark is built on).
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn toolmark(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, stderr)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolmark-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A loopback server answering GETs from `routes` (404 otherwise) on a thread; its base URL.
fn serve(routes: HashMap<&'static str, String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) <= 2 {
                    break;
                }
            }
            let path = line.split(' ').nth(1).unwrap_or("");
            let (status, body) = match routes.get(path) {
                Some(body) => ("200 OK", body.clone()),
                None => ("404 Not Found", r#"{"error":"not found"}"#.to_owned()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

#[test]
fn lookalike_prints_the_answer_and_exits_1_on_a_lookalike() {
    let (code, out, _) = toolmark(&[
        "package",
        "lookalike",
        "npm:@modelcontextprotocol/server-githb",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        out["packageLookalike"]["of"],
        "npm:@modelcontextprotocol/server-github"
    );
    assert_eq!(out["packageLookalike"]["weekly"], 111195);
    assert_eq!(out["counts"]["date"], "2026-10-10");
    assert_eq!(out["counts"]["from"], "bundled");

    for clean in [
        "npm:@modelcontextprotocol/server-github",
        "npm:mcp-server",
        "pypi:Mcp_Server.Fetch",
    ] {
        let (code, out, _) = toolmark(&["package", "lookalike", clean]);
        assert_eq!(code, 0, "{clean}: {out}");
        assert!(out.get("packageLookalike").is_none());
    }
    let (code, _, err) = toolmark(&["package", "lookalike", "io.github.someone/server"]);
    assert_eq!(code, 1);
    assert!(err.contains("--data"), "{err}");
}

fn popular_keys(data: &Path) -> Value {
    toolmark(&["package", "popularity", "--data", data.to_str().unwrap()]).1
}

#[test]
fn popularity_refresh_writes_a_dated_snapshot_the_lookalike_rules_then_use() {
    let data = scratch("popularity-refresh");
    assert_eq!(popular_keys(&data)["from"], "bundled");
    // The three most downloaded packages of the bundled snapshot are PyPI's mcp, mcp-types
    // and fastmcp; the stand-in knows the first two.
    let mut routes = HashMap::new();
    routes.insert(
        "/api/packages/mcp/recent",
        r#"{"data":{"last_day":9,"last_month":90,"last_week":60000000},"package":"mcp","type":"recent_downloads"}"#.to_owned(),
    );
    routes.insert(
        "/api/packages/mcp-types/recent",
        r#"{"data":{"last_day":1,"last_month":1,"last_week":1},"package":"mcp-types","type":"recent_downloads"}"#.to_owned(),
    );
    let base = serve(routes);
    let d = data.to_str().unwrap();
    let refresh = |max: &str| {
        toolmark(&[
            "package",
            "popularity",
            "--data",
            d,
            "--refresh",
            "--max-names",
            max,
            "--npm-api",
            &base,
            "--pypistats",
            &base,
            "--allow-private",
        ])
    };
    let (code, out, err) = refresh("3");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out["counted"], 2);
    assert_eq!(out["failed"], 1, "{out}");
    let written = PathBuf::from(out["written"].as_str().unwrap());
    assert!(written.starts_with(data.join("popularity")));
    let shown = popular_keys(&data);
    assert_eq!(shown["from"], written.to_str().unwrap());
    assert_eq!(shown["date"], out["date"]);
    assert!(
        shown["sources"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with("refreshed ")
    );
    // The refreshed count is the one answers carry, dated the refresh's day; the others keep
    // the bundled counts and days.
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("pypi:mcp\t60000000\n"), "{}", &text[..400]);
    assert!(text.contains("npm:@modelcontextprotocol/server-github\t111195\t2026-10-10\n"));
    let (code, out, _) = toolmark(&["package", "lookalike", "pypi:m-c-p", "--data", d]);
    assert_eq!(code, 1);
    assert_eq!(out["packageLookalike"]["weekly"], 60000000);
    assert_eq!(out["packageLookalike"]["weeklyAsOf"], shown["date"]);

    // Nothing counted (the stand-in knows none of the names): nothing written, an error.
    std::fs::remove_dir_all(data.join("popularity")).unwrap();
    let (code, _, err) = toolmark(&[
        "package",
        "popularity",
        "--data",
        d,
        "--refresh",
        "--max-names",
        "1",
        "--npm-api",
        "http://127.0.0.1:9",
        "--pypistats",
        "http://127.0.0.1:9",
        "--allow-private",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("nothing written"), "{err}");
    assert!(
        !data.join("popularity").exists()
            || std::fs::read_dir(data.join("popularity")).unwrap().count() == 0
    );
    std::fs::remove_dir_all(&data).unwrap();
}
