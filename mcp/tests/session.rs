//! The session core driven over a replay of recorded server output (`support::Replay`): what
//! it sends, what it keeps, and how each kind of answer ends it.

mod support;

use support::{Frame, Replay, ReplayError, Sent, everything, identity, page, recorded_tools};
use toolmark_mcp::{Answer, Failure, Handshake, Limits, Listing, Session, SessionError};

const SESSION: Handshake = Handshake::Initialize("2025-11-25");

/// Run one attempt of a fresh session over `t`.
fn list(
    t: &mut Replay,
    handshake: Handshake,
    limits: Limits,
) -> (Result<(), SessionError<ReplayError>>, Listing) {
    let mut listing = Listing::default();
    let result =
        support::run(Session::new(limits, identity(), &mut listing).list_tools(t, handshake));
    (result, listing)
}

/// The recorded `initialize` answer, then the frames of each later request.
fn after_initialize(later: Vec<Vec<Frame>>) -> Replay {
    let mut script = vec![vec![Frame::Stream(everything()[0].clone())]];
    script.extend(later);
    Replay::new(script)
}

fn stream(lines: &[String]) -> Vec<Frame> {
    lines.iter().cloned().map(Frame::Stream).collect()
}

fn tools_list(id: u64, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{params}}}"#)
}

#[test]
fn the_recorded_session_is_initialized_and_its_one_page_kept_byte_for_byte() {
    let lines = everything();
    let mut t = after_initialize(vec![stream(&lines[1..3])]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(result, Ok(()));
    // Exactly what the recording was made with (fixtures/SOURCES.md).
    assert_eq!(
        t.sent,
        [
            Sent::Request(
                "initialize",
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"toolmark","title":"toolmark transparency-log crawler (read-only: initialize + tools/list)","version":"0.1.0"},"protocolVersion":"2025-11-25"}}"#
                    .into()
            ),
            Sent::Notification(
                "notifications/initialized",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into()
            ),
            Sent::Request("tools/list", tools_list(2, "{}")),
        ]
    );
    assert_eq!(t.established, ["2025-11-25"]);
    assert_eq!(
        listing.initialize.as_deref(),
        Some(support::result_of(&lines[0]).as_str())
    );
    assert_eq!(listing.protocol_version.as_deref(), Some("2025-11-25"));
    // The notification sent before the answer is skipped; the answer's text is kept as sent.
    assert_eq!(listing.pages, [support::result_of(&lines[2])]);
    assert_eq!(recorded_tools().len(), 13);
}

#[test]
fn pages_are_followed_to_the_last() {
    let tools = recorded_tools();
    let pages = [
        page(2, &tools[..5], Some(r#""p2""#)),
        page(3, &tools[5..10], Some(r#""p3""#)),
        page(4, &tools[10..], Some(r#""""#)),
    ];
    let mut t = after_initialize(
        pages
            .iter()
            .map(|p| vec![Frame::Stream(p.clone())])
            .collect(),
    );
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(result, Ok(()));
    let asked: Vec<&str> = t.requests().iter().skip(1).map(|(_, body)| *body).collect();
    assert_eq!(
        asked,
        [
            tools_list(2, "{}"),
            tools_list(3, r#"{"cursor":"p2"}"#),
            tools_list(4, r#"{"cursor":"p3"}"#),
        ]
    );
    let kept: Vec<String> = pages.iter().map(|p| support::result_of(p)).collect();
    assert_eq!(listing.pages, kept);
}

#[test]
fn a_repeated_cursor_ends_the_listing_as_partial() {
    let tools = recorded_tools();
    let mut t = after_initialize(vec![
        stream(&[page(2, &tools[..6], Some(r#""a""#))]),
        stream(&[page(3, &tools[6..], Some(r#""a""#))]),
    ]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(
        result,
        Err(SessionError {
            failure: Failure::Partial("tools/list cursor repeated after 2 pages".into()),
            established: true,
        })
    );
    assert_eq!(listing.pages.len(), 2, "what was read is kept");
}

#[test]
fn the_page_cap_ends_the_listing_as_partial() {
    let tools = recorded_tools();
    let endless = (0..5u64)
        .map(|i| {
            stream(&[page(
                2 + i,
                &tools[i as usize..=i as usize],
                Some(&format!("\"c{i}\"")),
            )])
        })
        .collect();
    let mut t = after_initialize(endless);
    let limits = Limits {
        max_pages: 3,
        ..Limits::default()
    };
    let (result, listing) = list(&mut t, SESSION, limits);
    assert_eq!(
        result.unwrap_err().failure,
        Failure::Partial("more than 3 tools/list pages".into())
    );
    assert_eq!(listing.pages.len(), 3);
    assert_eq!(
        t.requests().len(),
        1 + 3,
        "no page past the cap is asked for"
    );
}

#[test]
fn server_requests_during_listing_are_answered_and_the_listing_goes_on() {
    let tools = recorded_tools();
    let mut t = after_initialize(vec![stream(&[
        r#"{"jsonrpc":"2.0","id":"srv-1","method":"ping"}"#.into(),
        r#"[{"jsonrpc":"2.0","id":7,"method":"roots/list"},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}]"#.into(),
        page(2, &tools, None),
    ])]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(result, Ok(()));
    assert_eq!(
        t.replies(),
        [
            r#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not supported by a read-only crawler"}}"#,
        ]
    );
    assert_eq!(listing.pages.len(), 1);
}

#[test]
fn requests_in_a_single_response_body_go_unanswered() {
    let tools = recorded_tools();
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","id":"srv-1","method":"ping"}},{}]"#,
        page(2, &tools, None)
    );
    let mut t = after_initialize(vec![vec![Frame::Body(batch)]]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(result, Ok(()));
    assert!(t.replies().is_empty());
    assert_eq!(listing.pages.len(), 1);
}

#[test]
fn replies_stop_at_the_cap_for_the_whole_session() {
    let ping = |i: u32| format!(r#"{{"jsonrpc":"2.0","id":"p{i}","method":"ping"}}"#);
    let limits = Limits {
        max_replies: 2,
        ..Limits::default()
    };
    // A first attempt: one ping, then "method not found" to initialize.
    let mut first = Replay::new(vec![stream(&[
        ping(1),
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#.into(),
    ])]);
    // A second attempt with the same session: two pings in one batch before the answer.
    let lines = everything();
    let mut second = Replay::new(vec![
        stream(&[format!("[{},{}]", ping(2), ping(3)), lines[0].clone()]),
        stream(&lines[1..3]),
    ]);
    let mut listing = Listing::default();
    let mut session = Session::new(limits, identity(), &mut listing);
    assert!(support::run(session.list_tools(&mut first, SESSION)).is_err());
    assert_eq!(
        support::run(session.list_tools(&mut second, SESSION)),
        Ok(())
    );
    assert_eq!(first.replies().len(), 1);
    assert_eq!(
        second.replies(),
        [r#"{"jsonrpc":"2.0","id":"p2","result":{}}"#],
        "the cap counts the first attempt's reply"
    );
    // Ids count from 1 again on the second attempt.
    assert!(second.requests()[0].1.contains(r#""id":1,"#));
}

#[test]
fn an_answer_with_another_id_is_not_taken() {
    let tools = recorded_tools();
    let mut t = after_initialize(vec![stream(&[
        page(99, &tools[..1], None),
        page(2, &tools, None).replace(r#""id":2"#, r#""id":"2""#),
    ])]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(result, Ok(()));
    // The string "2" answers request 2; the answer to 99 is not a page of this listing.
    assert_eq!(listing.pages, [support::result_of(&page(2, &tools, None))]);
}

#[test]
fn only_answers_with_other_ids_end_as_the_transport_says() {
    let tools = recorded_tools();
    let mut t = after_initialize(vec![stream(&[
        page(99, &tools, None),
        page(2, &tools, None).replace(r#""id":2"#, r#""id":"02""#),
    ])]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(
        result,
        Err(SessionError {
            failure: Failure::Transport(ReplayError::Exhausted("tools/list")),
            established: true,
        })
    );
    assert!(listing.pages.is_empty());
}

#[test]
fn a_json_rpc_error_to_tools_list_is_a_protocol_failure() {
    let mut t = after_initialize(vec![stream(&[
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error","data":{"x":1}}}"#.into(),
    ])]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(
        result,
        Err(SessionError {
            failure: Failure::Protocol("tools/list: JSON-RPC error -32603: Internal error".into()),
            established: true,
        })
    );
    assert!(listing.initialize.is_some() && listing.pages.is_empty());
}

#[test]
fn method_not_found_to_initialize_means_the_handshake_is_not_spoken() {
    let mut t = Replay::new(vec![stream(&[
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#.into(),
    ])]);
    let (result, listing) = list(&mut t, SESSION, Limits::default());
    assert_eq!(
        result,
        Err(SessionError {
            failure: Failure::NotSpoken(
                "initialize: JSON-RPC error -32601: Method not found".into()
            ),
            established: false,
        })
    );
    assert_eq!(listing, Listing::default());
    assert_eq!(
        t.sent.len(),
        1,
        "no notification after a refused initialize"
    );
}

#[test]
fn too_many_tools_end_the_listing_as_too_large() {
    let tools = recorded_tools();
    let mut t = after_initialize(vec![stream(&[page(2, &tools, None)])]);
    let limits = Limits {
        max_tools: 12,
        ..Limits::default()
    };
    let (result, listing) = list(&mut t, SESSION, limits);
    assert_eq!(
        result.unwrap_err().failure,
        Failure::TooLarge("more than 12 tools".into())
    );
    assert!(listing.pages.is_empty(), "a set over the cap is not kept");
}

const META: &str = r#"{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"toolmark","title":"toolmark transparency-log crawler (read-only: initialize + tools/list)","version":"0.1.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;

#[test]
fn discover_opens_a_stateless_session_whose_requests_carry_meta() {
    let tools = recorded_tools();
    let discovered = r#"{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#;
    let mut t = Replay::new(vec![
        stream(&[format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{discovered}}}"#
        )]),
        stream(&[page(2, &tools, None)]),
    ]);
    let (result, listing) = list(&mut t, Handshake::Discover, Limits::default());
    assert_eq!(result, Ok(()));
    assert_eq!(
        t.sent,
        [
            Sent::Request(
                "server/discover",
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{META}}}}}"#
                )
            ),
            Sent::Request(
                "tools/list",
                tools_list(2, &format!(r#"{{"_meta":{META}}}"#))
            ),
        ],
        "no notification, and the same _meta on tools/list"
    );
    assert_eq!(t.established, ["2026-07-28"]);
    assert_eq!(listing.initialize.as_deref(), Some(discovered));
    assert_eq!(listing.protocol_version.as_deref(), Some("2026-07-28"));
}

#[test]
fn discover_without_the_stateless_version_is_not_spoken() {
    let mut t = Replay::new(vec![stream(&[
        r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"]}}"#.into(),
    ])]);
    let (result, listing) = list(&mut t, Handshake::Discover, Limits::default());
    assert_eq!(
        result,
        Err(SessionError {
            failure: Failure::NotSpoken(
                "server/discover answered without supporting 2026-07-28".into()
            ),
            established: false,
        })
    );
    assert_eq!(listing.initialize, None);
}

#[test]
fn a_tool_is_called_after_the_listing_and_its_result_kept_exactly() {
    let lines = everything();
    let result = r#"{"content":[{"type":"text","text":"Echo: hi"}]}"#;
    let error = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad arguments"}}"#;
    let mut t = after_initialize(vec![
        stream(&lines[1..3]),
        vec![Frame::Stream(format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#
        ))],
        vec![Frame::Stream(error.into())],
    ]);
    let mut listing = Listing::default();
    let mut session = Session::new(Limits::default(), identity(), &mut listing);
    support::run(session.list_tools(&mut t, SESSION)).unwrap();
    let echo =
        support::run(session.call_tool(&mut t, "echo", serde_json::json!({"message": "hi"})));
    assert_eq!(echo.unwrap(), Answer::Result(result.into()));
    let bad = support::run(session.call_tool(&mut t, "echo", serde_json::json!({})));
    assert_eq!(
        bad.unwrap(),
        Answer::Error {
            code: -32602,
            message: "bad arguments".into()
        }
    );
    let calls: Vec<_> = t.requests().into_iter().skip(2).collect();
    assert_eq!(
        calls,
        [
            (
                "tools/call",
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"message":"hi"},"name":"echo"}}"#
            ),
            (
                "tools/call",
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{},"name":"echo"}}"#
            ),
        ]
    );
}
