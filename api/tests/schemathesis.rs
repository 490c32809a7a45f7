//! schemathesis (PyPI) against `/api/openapi.json` on a populated server: every operation is
//! exercised with generated requests, and no response may be a 5xx or break the schema.
//!
//! Needs `TOOLMARK_SCHEMATHESIS` (the `schemathesis` command made by `scripts/schemathesis-venv`,
//! which `scripts/test` runs); without it the test is skipped outside CI and fails under CI.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod support;

use std::sync::Arc;
use std::time::Duration;

/// Generated cases per operation: enough to cover every parameter's edges in well under a
/// minute for the whole API on this machine.
const MAX_EXAMPLES: &str = "40";

/// What a request that breaks the schema may be answered: schemathesis's own list, and 413 — a
/// generated body past the route's size limit (a `tools` array longer than `maxItems` can be
/// megabytes) is refused before it is read, with the documented `payload-too-large`.
const REJECTION_STATUSES: &str = r#"[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
"#;

/// Longest the whole run may take before the test gives up.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_conformance_under_schemathesis() {
    let Some(st) = std::env::var_os("TOOLMARK_SCHEMATHESIS") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "TOOLMARK_SCHEMATHESIS is not set (scripts/test sets it)"
        );
        eprintln!("skipped: TOOLMARK_SCHEMATHESIS is not set (run scripts/schemathesis-venv)");
        return;
    };
    let p = support::populated("schemathesis");
    let mut state = toolmark_api::AppState::open(&p.dir, support::BASE).unwrap();
    // Generated requests come from one address far faster than the /check and /sensitive
    // limits allow; the limits themselves are tested in ops.rs.
    state.limiter = toolmark_api::ops::RateLimiter::unlimited();
    state.sensitive_limiter = toolmark_api::ops::RateLimiter::unlimited();
    let app = toolmark_api::router(Arc::new(state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
        .unwrap();
    });
    let report = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("schemathesis");
    let _ = std::fs::remove_dir_all(&report);
    std::fs::create_dir_all(&report).unwrap();
    let config = report.join("schemathesis.toml");
    std::fs::write(&config, REJECTION_STATUSES).unwrap();
    let mut cmd = tokio::process::Command::new(st);
    cmd.arg("--config-file")
        .arg(&config)
        .arg("run")
        .arg(format!("http://{addr}/api/openapi.json"))
        .args([
            "--checks",
            "all",
            "--max-examples",
            MAX_EXAMPLES,
            "--report",
            "junit",
            "--report-dir",
        ])
        .arg(&report)
        .env("SCHEMATHESIS_HOOKS", "")
        .kill_on_drop(true);
    let out = tokio::time::timeout(RUN_TIMEOUT, cmd.output())
        .await
        .expect("schemathesis finishes")
        .expect("schemathesis runs");
    server.abort();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "schemathesis found problems:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("passed"), "{stdout}");
}
