//! /health, /metrics, CORS and the /check rate limit.

mod support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use support::*;

#[tokio::test]
async fn health_and_metrics() {
    let p = populated("ops-health");
    let (status, _, body) = get(&p.state, "/health").await;
    assert_eq!(status, StatusCode::OK);
    let h: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(h["ok"], true);
    assert_eq!(h["treeSize"], 10);
    assert_eq!(h["indexedEntries"], 10);
    assert!(h["checkpointAgeSeconds"].as_u64().unwrap() < 600);
    assert_eq!(
        h["lastCrawl"]["status"], "running",
        "the fixture never finishes its runs: {h}"
    );

    let _ = get(&p.state, "/checkpoint").await;
    let (status, headers, body) = get(&p.state, "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = String::from_utf8(body).unwrap();
    assert!(text.contains("toolmark_log_tree_size 10\n"), "{text}");
    assert!(
        text.contains("toolmark_targets{status=\"ok\"} 2\n"),
        "{text}"
    );
    assert!(
        text.contains("toolmark_changes_total{class=\"dangerous\"} 1\n"),
        "{text}"
    );
    // The router is rebuilt per oneshot but the counters live in the state.
    assert!(
        text.contains("toolmark_http_requests_total{route=\"/checkpoint\",status=\"200\"} 1"),
        "{text}"
    );
    assert!(
        !text.contains("toolmark_job_last_run_ok{"),
        "no schedules yet: {text}"
    );

    // With the schedules' history (`toolmark run`): each job's latest run and success.
    use toolmark_schedules::{Acquire, LeaseStore, RunStart, RunStatus, ScheduleStore};
    let store = LeaseStore::open(p.state.data.join("schedules.sqlite")).unwrap();
    let at = |s: i64| chrono::DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
    let lease = std::time::Duration::from_secs(60);
    for (job, started, status) in [
        ("crawl", 0, RunStatus::Ok),
        ("crawl", 100, RunStatus::Failed),
        ("heartbeat", 200, RunStatus::Ok),
    ] {
        let start = RunStart {
            attempt: 1,
            scheduled_for: at(started),
        };
        let Acquire::Acquired { run_id } = store
            .try_acquire(job, "test", at(started), lease, start)
            .unwrap()
        else {
            panic!("lease")
        };
        store
            .finish(job, "test", run_id, at(started + 5), status, "detail")
            .unwrap();
    }
    // The API opens no scheduler state: the role serving it hands it the jobs.
    let (_, _, body) = get(&p.state, "/health").await;
    let h: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(h["jobs"], serde_json::json!({}), "{h}");
    let mut with_jobs = toolmark_api::AppState::open(&p.dir, "http://toolmark.test").unwrap();
    let store = std::sync::Arc::new(store);
    with_jobs.jobs = Some(std::sync::Arc::new(move || {
        store.jobs().map_err(|e| e.to_string())
    }));
    let with_jobs = std::sync::Arc::new(with_jobs);
    let (_, _, body) = get(&with_jobs, "/health").await;
    let h: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(h["jobs"]["crawl"]["lastStatus"], "failed", "{h}");
    assert_eq!(h["jobs"]["crawl"]["lastSuccessAt"], "2025-11-24T16:00:00Z");
    assert_eq!(h["jobs"]["heartbeat"]["lastStatus"], "ok");
    let (_, _, body) = get(&with_jobs, "/metrics").await;
    let text = String::from_utf8(body).unwrap();
    for line in [
        "toolmark_job_last_success_timestamp_seconds{job=\"crawl\"} 1764000000\n",
        "toolmark_job_last_run_ok{job=\"crawl\"} 0\n",
        "toolmark_job_last_run_ok{job=\"heartbeat\"} 1\n",
        "toolmark_job_running{job=\"crawl\"} 0\n",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
}

#[tokio::test]
async fn cors_for_public_reads_and_check() {
    let p = populated("ops-cors");
    let (_, headers, _) = send(
        &p.state,
        Request::get("/checkpoint")
            .header("origin", "https://scanner.example")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(headers["access-control-allow-origin"], "*");
    let (status, headers, _) = send(
        &p.state,
        Request::options("/api/v1/check")
            .header("origin", "https://scanner.example")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert!(
        headers["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
}

/// `serve`'s defaults (`ApiOptions::default()`) hold one WARDEN scan: 500 checks from one
/// client at once all pass; past the bucket they are 429 with `Retry-After`.
#[tokio::test]
async fn check_is_rate_limited_per_client() {
    let p = populated("ops-limit");
    let options = toolmark_api::ApiOptions::default();
    let state =
        std::sync::Arc::new(toolmark_api::AppState::open_with(&p.dir, BASE, &options).unwrap());
    let body = json!({"endpoint": MEMORY_URL}).to_string();
    let mut limited = None;
    for i in 0..1000 {
        let (status, headers, bytes) =
            post_json(&state, "/api/v1/check", body.clone().into_bytes()).await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert!(
                headers["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap()
                    >= 1
            );
            let text = String::from_utf8(bytes).unwrap();
            assert!(text.contains("bursts of 500"), "{text}");
            limited = Some(i);
            break;
        }
        assert_eq!(status, StatusCode::OK, "check {}", i + 1);
    }
    // The bucket is 500; a token a second refills while the loop runs.
    let n = limited.expect("the limit applies");
    assert!(n >= 500, "limited after {n}");
    let (_, _, metrics) = get(&state, "/metrics").await;
    assert!(
        String::from_utf8(metrics)
            .unwrap()
            .contains("toolmark_checks_rate_limited_total 1")
    );
    // Other routes are not limited.
    assert_eq!(get(&state, "/checkpoint").await.0, StatusCode::OK);
}

#[tokio::test]
async fn limiter_refills_and_isolates_clients() {
    let l = toolmark_api::ops::RateLimiter::new(1000.0, 2.0);
    let a = "192.0.2.1".parse().unwrap();
    let b = "192.0.2.2".parse().unwrap();
    assert!(l.take(a).is_ok());
    assert!(l.take(a).is_ok());
    assert!(l.take(a).is_err());
    assert!(l.take(b).is_ok(), "another client has its own bucket");
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert!(l.take(a).is_ok(), "refilled");
}
