//! The two POSTs (`webhook::post`, `witness::add_checkpoint`) against a real HTTP server on
//! loopback that answers as broken or hostile receivers and witnesses do: what each outcome is,
//! that no redirect is followed, that every cap holds, and that the guard refuses before
//! anything is sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use toolmark_log::witness::{MAX_RESPONSE_BYTES, SIZE_CONTENT_TYPE};
use toolmark_outbound::Outbound;
use toolmark_outbound::guard::Policy;
use toolmark_outbound::webhook::{self, MAX_WEBHOOK_RESPONSE_BYTES, Outcome};
use toolmark_outbound::witness::{self, MAX_REFUSAL_DETAIL, Submission};

/// Long enough for any loopback answer; the stalling routes never answer within it.
const TIMEOUT: Duration = Duration::from_secs(5);

struct Server {
    base: String,
    /// Requests that reached `/elsewhere` (a redirect's target).
    followed: Arc<AtomicUsize>,
    /// The headers of the last request to `/echo`.
    seen: Arc<std::sync::Mutex<Option<HeaderMap>>>,
}

async fn serve() -> Server {
    let followed = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(None));
    let (f, s) = (followed.clone(), seen.clone());
    let app = Router::new()
        .route(
            "/echo",
            post(move |headers: HeaderMap| async move {
                *s.lock().unwrap() = Some(headers);
                "ack"
            }),
        )
        .route(
            "/redirect",
            post(|| async { (StatusCode::FOUND, [(header::LOCATION, "/elsewhere")]) }),
        )
        .route(
            "/elsewhere",
            post(move || async move {
                f.fetch_add(1, Ordering::SeqCst);
                "followed"
            }),
        )
        .route(
            "/huge",
            post(|| async { vec![b'x'; 64 * MAX_WEBHOOK_RESPONSE_BYTES] }),
        )
        .route(
            "/stall",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "late"
            }),
        )
        .route(
            "/w/ok/add-checkpoint",
            post(|| async { "— witness.example AAAA\n" }),
        )
        .route(
            "/w/conflict/add-checkpoint",
            post(|| async {
                (
                    StatusCode::CONFLICT,
                    [(header::CONTENT_TYPE, SIZE_CONTENT_TYPE)],
                    "42\n",
                )
            }),
        )
        .route(
            "/w/plain409/add-checkpoint",
            post(|| async { (StatusCode::CONFLICT, "42\n") }),
        )
        .route(
            "/w/chatty/add-checkpoint",
            post(|| async { (StatusCode::FORBIDDEN, "é".repeat(10 * MAX_REFUSAL_DETAIL)) }),
        )
        .route(
            "/w/huge/add-checkpoint",
            post(|| async { vec![b'x'; MAX_RESPONSE_BYTES + 1].into_response() }),
        )
        .route(
            "/w/redirect/add-checkpoint",
            post(|| async { (StatusCode::FOUND, [(header::LOCATION, "/elsewhere")]) }),
        )
        .route(
            "/w/stall/add-checkpoint",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "late"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server {
        base,
        followed,
        seen,
    }
}

fn loopback() -> Outbound {
    Outbound {
        policy: Policy {
            allow_private: true,
        },
        user_agent: "toolmark-test/1".into(),
        ..Outbound::default()
    }
}

async fn hook(server: &Server, path: &str, timeout: Duration) -> Outcome {
    let headers = [("x-test-header", "present".to_owned())];
    let url = format!("{}{path}", server.base);
    webhook::post(&loopback(), &url, &headers, b"{}".to_vec(), timeout).await
}

#[tokio::test]
async fn a_webhook_is_posted_as_json_with_its_headers_and_user_agent() {
    let server = serve().await;
    let outcome = hook(&server, "/echo", TIMEOUT).await;
    assert_eq!(outcome, Outcome::Status(200));
    assert!(outcome.delivered());
    let seen = server.seen.lock().unwrap().clone().unwrap();
    assert_eq!(seen[header::CONTENT_TYPE], "application/json");
    assert_eq!(seen["x-test-header"], "present");
    assert_eq!(seen[header::USER_AGENT], "toolmark-test/1");
}

#[tokio::test]
async fn a_webhook_redirect_is_a_status_and_is_not_followed() {
    let server = serve().await;
    let outcome = hook(&server, "/redirect", TIMEOUT).await;
    assert_eq!(outcome, Outcome::Status(302));
    assert!(!outcome.delivered());
    assert_eq!(server.followed.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_webhook_answer_over_the_cap_still_counts_by_its_status() {
    let server = serve().await;
    assert_eq!(hook(&server, "/huge", TIMEOUT).await, Outcome::Status(200));
}

#[tokio::test]
async fn a_stalling_webhook_receiver_times_out() {
    let server = serve().await;
    let outcome = hook(&server, "/stall", Duration::from_millis(300)).await;
    assert_eq!(outcome, Outcome::TimedOut);
}

#[tokio::test]
async fn the_guard_refuses_a_loopback_webhook_under_the_strict_policy() {
    let server = serve().await;
    let url = format!("{}/echo", server.base.replace("http://", "https://"));
    let outcome = webhook::post(&Outbound::default(), &url, &[], b"{}".to_vec(), TIMEOUT).await;
    assert!(
        matches!(&outcome, Outcome::Blocked(why) if why.contains("loopback")),
        "{outcome:?}"
    );
    assert!(server.seen.lock().unwrap().is_none());
}

async fn submit(server: &Server, witness: &str, timeout: Duration) -> Submission {
    let prefix = format!("{}/w/{witness}/", server.base);
    witness::add_checkpoint(&loopback(), &prefix, b"old 0\n\n".to_vec(), timeout).await
}

#[tokio::test]
async fn a_witness_answer_is_its_signature_lines() {
    let server = serve().await;
    assert_eq!(
        submit(&server, "ok", TIMEOUT).await,
        Submission::Cosigned("— witness.example AAAA\n".as_bytes().to_vec())
    );
}

#[tokio::test]
async fn a_409_with_the_size_content_type_is_a_conflict() {
    let server = serve().await;
    assert_eq!(
        submit(&server, "conflict", TIMEOUT).await,
        Submission::Conflict(42)
    );
}

#[tokio::test]
async fn a_409_without_the_size_content_type_is_a_refusal() {
    let server = serve().await;
    assert_eq!(
        submit(&server, "plain409", TIMEOUT).await,
        Submission::Refused {
            status: 409,
            detail: "42\n".into()
        }
    );
}

#[tokio::test]
async fn a_refusal_keeps_at_most_max_refusal_detail_characters() {
    let server = serve().await;
    match submit(&server, "chatty", TIMEOUT).await {
        Submission::Refused { status, detail } => {
            assert_eq!(status, 403);
            assert_eq!(detail.chars().count(), MAX_REFUSAL_DETAIL);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_witness_answer_over_the_cap_fails() {
    let server = serve().await;
    let outcome = submit(&server, "huge", TIMEOUT).await;
    assert!(
        matches!(&outcome, Submission::Failed(why) if why.contains("larger than")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_witness_redirect_is_a_refusal_and_is_not_followed() {
    let server = serve().await;
    let outcome = submit(&server, "redirect", TIMEOUT).await;
    assert!(
        matches!(outcome, Submission::Refused { status: 302, .. }),
        "{outcome:?}"
    );
    assert_eq!(server.followed.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_stalling_witness_times_out() {
    let server = serve().await;
    let outcome = submit(&server, "stall", Duration::from_millis(300)).await;
    assert_eq!(outcome, Submission::TimedOut);
}

#[tokio::test]
async fn the_guard_refuses_a_witness_on_http_under_the_strict_policy() {
    let server = serve().await;
    let prefix = format!("{}/w/ok", server.base);
    let outcome = witness::add_checkpoint(
        &Outbound::default(),
        &prefix,
        b"old 0\n\n".to_vec(),
        TIMEOUT,
    )
    .await;
    assert!(
        matches!(&outcome, Submission::Blocked(why) if why.contains("https only")),
        "{outcome:?}"
    );
}
