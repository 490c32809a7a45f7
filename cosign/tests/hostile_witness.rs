//! Witnesses that misbehave in ways no real witness does (hand-built on loopback, one route per
//! behaviour): each costs at most the submission timeout or the answer cap, ends in a named
//! `WitnessError`, and never gets a checkpoint published.

mod support;
use support::*;

use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use toolmark_cosign::WitnessError;
use toolmark_log::cosignature::CosignerKey;
use toolmark_log::policy::{Witness, WitnessPolicy};

fn key() -> CosignerKey {
    CosignerKey::from_seed("hostile.test/w", &[5; 32]).unwrap()
}

/// A cosignature by the witness's key over another checkpoint: right name and key ID, a
/// signature that does not verify over ours.
fn forged_line() -> String {
    let other = "toolmark.test/log\n1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n";
    key().cosign(other, 1_800_000_000).unwrap().to_line()
}

fn router() -> Router {
    Router::new()
        .route(
            "/stall/add-checkpoint",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "never"
            }),
        )
        .route("/forged/add-checkpoint", post(|| async { forged_line() }))
        .route(
            "/huge/add-checkpoint",
            post(|| async { "\u{2014} hostile.test/w AAAA\n".repeat(64 * 1024) }),
        )
        .route(
            "/conflict/add-checkpoint",
            post(|| async {
                (
                    StatusCode::CONFLICT,
                    [(header::CONTENT_TYPE, "text/x.tlog.size")],
                    "1\n",
                )
                    .into_response()
            }),
        )
        .route(
            "/conflict-untyped/add-checkpoint",
            post(|| async { (StatusCode::CONFLICT, "1\n").into_response() }),
        )
        .route(
            "/forbidden/add-checkpoint",
            post(|| async { (StatusCode::FORBIDDEN, "unknown key").into_response() }),
        )
        .route(
            "/unknown/add-checkpoint",
            post(|| async { (StatusCode::NOT_FOUND, "unknown origin").into_response() }),
        )
        .route(
            "/inconsistent/add-checkpoint",
            post(|| async { (StatusCode::UNPROCESSABLE_ENTITY, "bad proof").into_response() }),
        )
        .route(
            "/ahead/add-checkpoint",
            post(|| async {
                (
                    StatusCode::CONFLICT,
                    [(header::CONTENT_TYPE, "text/x.tlog.size")],
                    "1000000\n",
                )
                    .into_response()
            }),
        )
}

/// One round against the route `behaviour`: what the witness error was, and whether the
/// checkpoint was published.
fn round_against(behaviour: &str) -> (WitnessError, bool) {
    let rt = runtime();
    let dir = tempdir(&format!("hostile-{behaviour}"));
    let mut log = witnessed_log(&dir, 9);
    log.append(entries(0, 4, "h")).unwrap();
    let before = published(&dir);
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, router()).await });
        let witness = Witness {
            name: "w".into(),
            key: key().witness_key(),
            url: Some(format!("http://127.0.0.1:{port}/{behaviour}")),
        };
        let c = cosigner_with_timeout(
            &dir,
            WitnessPolicy::k_of(vec![witness], 1).unwrap(),
            Duration::from_secs(1),
        );
        let r = c.round().await.unwrap();
        assert_eq!(published(&dir) == before, !r.published);
        let err = r.witnesses[0].1.clone().unwrap_err();
        (err, r.published)
    })
}

#[test]
fn a_stalling_witness_costs_the_timeout() {
    let (e, published) = round_against("stall");
    assert_eq!(e, WitnessError::TimedOut(1));
    assert!(!published);
}

#[test]
fn a_forged_cosignature_fails_the_witness() {
    let (e, published) = round_against("forged");
    assert!(matches!(e, WitnessError::BadCosignature(_)), "{e:?}");
    assert!(!published);
}

#[test]
fn an_answer_over_the_cap_is_not_read() {
    let (e, _) = round_against("huge");
    assert!(matches!(e, WitnessError::Failed(_)), "{e:?}");
}

#[test]
fn a_second_409_is_not_retried_again() {
    let (e, _) = round_against("conflict");
    assert_eq!(e, WitnessError::ConflictAgain(1));
}

#[test]
fn a_409_without_the_size_content_type_is_a_plain_refusal() {
    let (e, _) = round_against("conflict-untyped");
    assert!(
        matches!(e, WitnessError::Status { status: 409, .. }),
        "{e:?}"
    );
}

#[test]
fn refusals_are_named_by_status() {
    assert!(matches!(
        round_against("forbidden").0,
        WitnessError::Forbidden(_)
    ));
    assert!(matches!(
        round_against("unknown").0,
        WitnessError::UnknownOrigin(_)
    ));
    assert!(matches!(
        round_against("inconsistent").0,
        WitnessError::Inconsistent(_)
    ));
}

#[test]
fn a_witness_claiming_a_larger_tree_is_a_split_view_warning() {
    let (e, _) = round_against("ahead");
    assert_eq!(
        e,
        WitnessError::Ahead {
            theirs: 1_000_000,
            ours: 4
        }
    );
}
