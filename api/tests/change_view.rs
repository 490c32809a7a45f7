//! Every surface that shows a change reads it through one typed view (`changes::ChangeView`):
//! what it serves is what the index stored, and a stored change that does not parse is an
//! error on each of them, never a page or item with empty fields.

mod support;

use axum::http::{StatusCode, header};
use serde_json::Value;
use support::*;

fn change_id(p: &Populated) -> i64 {
    p.state
        .index
        .get()
        .latest_changes(None, 1, None, None)
        .unwrap()[0]
        .id
}

#[tokio::test]
async fn a_change_is_served_with_its_stored_diff_and_classification() {
    let p = populated("change-view-stored");
    let cid = change_id(&p);
    let row = p.state.index.get().change(cid).unwrap().unwrap();
    let (status, _, body) = get(&p.state, &format!("/api/v1/changes/{cid}")).await;
    assert_eq!(status, StatusCode::OK);
    let served: Value = serde_json::from_slice(&body).unwrap();
    let stored = |text: &Option<String>| serde_json::from_str::<Value>(text.as_deref().unwrap());
    assert_eq!(served["diff"], stored(&row.diff).unwrap());
    assert_eq!(
        served["classification"],
        stored(&row.classification).unwrap()
    );
}

#[tokio::test]
async fn a_malformed_stored_change_is_an_error_on_every_surface() {
    let p = populated("change-view-malformed");
    let cid = change_id(&p);
    let files = p.state.index.get().find_target_by_key(FILES_URL).unwrap()[0]
        .id
        .clone();
    // A writer that renamed a member of the diff: the text is still JSON, with the counts
    // under a name this version does not read.
    let db = rusqlite::Connection::open(p.dir.join("index.sqlite")).unwrap();
    let renamed = db
        .execute(
            "UPDATE changes SET diff = replace(diff, '\"addedTotal\"', '\"addedCount\"')
             WHERE id = ?1",
            [cid],
        )
        .unwrap();
    assert_eq!(renamed, 1);

    for path in [
        format!("/api/v1/changes/{cid}"),
        "/api/v1/changes".to_owned(),
        format!("/api/v1/servers/{files}"),
        "/feed.xml".to_owned(),
        "/feed.rss".to_owned(),
        "/feed.json".to_owned(),
    ] {
        let (status, headers, body) = get(&p.state, &path).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
        assert_eq!(headers[header::CONTENT_TYPE], "application/json", "{path}");
        let error: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            error["detail"], "internal error (logged)",
            "{path}: {error}"
        );
    }
    for path in [
        format!("/changes/{cid}"),
        "/changes".to_owned(),
        format!("/s/{files}"),
    ] {
        let (status, headers, body) = get(&p.state, &path).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
        assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
        let html = String::from_utf8(body).unwrap();
        assert!(
            html.contains("Something went wrong on our side (logged)."),
            "{path}: {html}"
        );
    }
}
