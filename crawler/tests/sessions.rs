//! A session the crawler is issued ends with the listing: one `DELETE` per session, with its id.

mod support;

use std::time::Duration;

use support::{echo_fleet, lax};
use toolmark_crawler::mcp;
use toolmark_crawler::observe::{Status, Transport};

#[tokio::test]
async fn every_session_gets_exactly_one_delete_with_its_id() {
    let fleet = echo_fleet(3).await;
    for url in fleet.urls() {
        let obs = mcp::observe(&lax(), &url, "streamable-http").await;
        assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
        assert_eq!(obs.transport(), Some(Transport::StreamableHttp));
        let dialled = obs.dialled().unwrap();
        assert!(dialled.session);
        // The stand-in answers 200 only to a DELETE naming one of its sessions.
        assert_eq!(dialled.session_closed, Some(200));
    }
    let counts = fleet.requests();
    assert_eq!(counts.closed, 3, "{counts:?}");
    assert_eq!(counts.tools_list, 3);
    fleet.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_delete_is_one_more_request() {
    let fleet = echo_fleet(1).await;
    let obs = mcp::observe(&lax(), &fleet.urls()[0], "streamable-http").await;
    // server/discover (refused), initialize, notifications/initialized, tools/list, DELETE.
    assert_eq!(obs.dialled().unwrap().requests, 5);
    fleet.shutdown(Duration::from_secs(1)).await;
}
