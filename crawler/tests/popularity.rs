//! Weekly download counts from a loopback stand-in serving npm's downloads API and pypistats'
//! `recent` in their documented shapes. Real answers could not be recorded here (neither API is
//! reachable from the machines toolmark is built on), so the bodies below follow the APIs'
//! documentation: npm's point and bulk point answers, pypistats' `recent`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolmark_crawler::mcp::ClientConfig;
use toolmark_crawler::popularity::{CountSources, Counted, NPM_BULK_NAMES, weekly_counts};
use toolmark_names::packages::PackageKey;

/// A loopback server answering GETs from `routes` (404 otherwise), recording the paths asked.
async fn serve(routes: HashMap<String, String>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let routes = Arc::new(routes);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (routes, log) = (routes.clone(), log.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 16384 {
                    if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let line = String::from_utf8_lossy(&head).into_owned();
                let path = line.split(' ').nth(1).unwrap_or("").to_owned();
                log.lock().unwrap().push(path.clone());
                let (status, body) = match routes.get(&path) {
                    Some(body) => ("200 OK", body.clone()),
                    None => ("404 Not Found", r#"{"error":"not found"}"#.to_owned()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(body.as_bytes()).await;
            });
        }
    });
    (base, asked)
}

fn point(name: &str, downloads: u64) -> String {
    format!(
        r#"{{"downloads":{downloads},"start":"2026-11-24","end":"2026-11-30","package":"{name}"}}"#
    )
}

fn keys(names: &[&str]) -> Vec<PackageKey> {
    names
        .iter()
        .map(|n| PackageKey::parse(n).unwrap())
        .collect()
}

fn lax() -> ClientConfig {
    let mut c = ClientConfig::default();
    c.policy.allow_private = true;
    c
}

fn sources(base: &str) -> CountSources {
    CountSources {
        npm: base.to_owned(),
        pypistats: base.to_owned(),
        pypistats_pause: Duration::ZERO,
    }
}

#[tokio::test]
async fn counts_come_from_npm_bulk_and_scoped_points_and_pypistats() {
    let mut routes = HashMap::new();
    routes.insert(
        "/downloads/point/last-week/mcp-handler,mcp-proxy,gone".to_owned(),
        format!(
            r#"{{"mcp-handler":{},"mcp-proxy":{},"gone":null}}"#,
            point("mcp-handler", 1277007),
            point("mcp-proxy", 780192)
        ),
    );
    routes.insert(
        "/downloads/point/last-week/@modelcontextprotocol/server-github".to_owned(),
        point("@modelcontextprotocol/server-github", 111195),
    );
    routes.insert(
        "/api/packages/mcp-server-fetch/recent".to_owned(),
        r#"{"data":{"last_day":1,"last_month":900,"last_week":250},"package":"mcp-server-fetch","type":"recent_downloads"}"#.to_owned(),
    );
    let (base, _) = serve(routes).await;
    let report = weekly_counts(
        &lax(),
        &sources(&base),
        &keys(&[
            "npm:mcp-handler",
            "npm:@modelcontextprotocol/server-github",
            "pypi:mcp_server.fetch",
            "npm:mcp-proxy",
            "npm:gone",
            "pypi:unknown-project",
        ]),
    )
    .await;
    let mut counted = report.counted.clone();
    counted.sort_by(|a, b| a.key.cmp(&b.key));
    let dated = |key: &str, weekly, as_of: Option<&str>| Counted {
        key: key.into(),
        weekly,
        as_of: as_of.map(str::to_owned),
    };
    assert_eq!(
        counted,
        vec![
            dated(
                "npm:@modelcontextprotocol/server-github",
                111195,
                Some("2026-11-30")
            ),
            dated("npm:mcp-handler", 1277007, Some("2026-11-30")),
            dated("npm:mcp-proxy", 780192, Some("2026-11-30")),
            dated("pypi:mcp-server-fetch", 250, None),
        ]
    );
    let mut failed: Vec<&str> = report.failed.iter().map(|(k, _)| k.as_str()).collect();
    failed.sort();
    assert_eq!(failed, ["npm:gone", "pypi:unknown-project"]);
}

#[tokio::test]
async fn unscoped_npm_names_go_128_to_a_request() {
    let names: Vec<String> = (0..NPM_BULK_NAMES + 1).map(|i| format!("pkg{i}")).collect();
    let (base, asked) = serve(HashMap::new()).await;
    let asked_keys: Vec<String> = names.iter().map(|n| format!("npm:{n}")).collect();
    let refs: Vec<&str> = asked_keys.iter().map(String::as_str).collect();
    let report = weekly_counts(&lax(), &sources(&base), &keys(&refs)).await;
    assert_eq!(report.failed.len(), NPM_BULK_NAMES + 1);
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].matches(',').count(), NPM_BULK_NAMES - 1);
}

#[tokio::test]
async fn answers_not_in_the_documented_shape_are_failures_not_counts() {
    let mut routes = HashMap::new();
    // Another package's count, a count that is not a number, an `end` that is no date.
    routes.insert(
        "/downloads/point/last-week/@a/one".to_owned(),
        point("@a/other", 5),
    );
    routes.insert(
        "/downloads/point/last-week/@a/two".to_owned(),
        r#"{"downloads":"many","end":"2026-11-30","package":"@a/two"}"#.to_owned(),
    );
    routes.insert(
        "/downloads/point/last-week/@a/three".to_owned(),
        r#"{"downloads":3,"start":"x","end":"yesterday","package":"@a/three"}"#.to_owned(),
    );
    let (base, _) = serve(routes).await;
    let report = weekly_counts(
        &lax(),
        &sources(&base),
        &keys(&["npm:@a/one", "npm:@a/two", "npm:@a/three", "npm:@a/b%2e"]),
    )
    .await;
    assert!(report.counted.is_empty(), "{:?}", report.counted);
    assert_eq!(report.failed.len(), 4);
}

#[tokio::test]
async fn the_ssrf_guard_refuses_loopback_by_default() {
    let (base, asked) = serve(HashMap::new()).await;
    let report = weekly_counts(
        &ClientConfig::default(),
        &sources(&base),
        &keys(&["npm:@a/one", "pypi:two"]),
    )
    .await;
    assert!(report.counted.is_empty());
    assert!(
        report.failed.iter().all(|(_, why)| why.contains("refused")),
        "{:?}",
        report.failed
    );
    assert!(asked.lock().unwrap().is_empty());
}
