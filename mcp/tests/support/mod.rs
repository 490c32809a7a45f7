//! A transport that replays recorded server output, and a minimal executor to run a session
//! on it.
//!
//! [`Replay`] is a real [`Transport`]: it frames and parses what it "receives" with
//! [`jsonrpc::parse`] as a stdio or HTTP transport does, records every byte the session sends,
//! and ends with its own error when the recording has nothing more for a request. Only the
//! wire is recorded; the session logic under test runs unchanged.

#![allow(dead_code)] // Each test file uses its own part of the support.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use toolmark_mcp::jsonrpc::{self, RpcError};
use toolmark_mcp::{Delivery, Identity, Incoming, Transport};

/// One message body the server sent, and how it arrived.
#[derive(Debug, Clone)]
pub enum Frame {
    /// On a stream (a stdio line, an SSE event): requests in it are answered.
    Stream(String),
    /// As the single body answering a POST.
    Body(String),
}

/// What the session sent, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    /// A request: its method and whole message.
    Request(&'static str, String),
    /// A notification.
    Notification(&'static str, String),
    /// A reply to a server request.
    Reply(String),
}

/// Why the replay ended the session.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReplayError {
    /// The recording holds nothing more after the request sent last.
    #[error("{0}: the recording ends without an answer")]
    Exhausted(&'static str),
    /// A recorded body is not a JSON-RPC message.
    #[error("{0}: {1}")]
    Rpc(&'static str, RpcError),
}

/// Recorded server output, replayed request by request.
#[derive(Debug, Default)]
pub struct Replay {
    /// For each request the session sends, in order, the frames the server sent after it.
    script: VecDeque<Vec<Frame>>,
    /// The frames of the request sent last not delivered yet.
    pending: VecDeque<Frame>,
    /// The method of the request sent last.
    method: &'static str,
    /// Everything the session sent.
    pub sent: Vec<Sent>,
    /// Bytes the session asked to charge for its parses.
    pub charged: usize,
    /// Versions the session said it established.
    pub established: Vec<String>,
}

impl Replay {
    /// A replay of `script`: one list of frames per request.
    pub fn new(script: Vec<Vec<Frame>>) -> Self {
        Replay {
            script: script.into(),
            ..Replay::default()
        }
    }

    /// The requests sent, as `(method, message)`.
    pub fn requests(&self) -> Vec<(&'static str, &str)> {
        self.sent
            .iter()
            .filter_map(|s| match s {
                Sent::Request(m, body) => Some((*m, body.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The replies sent to server requests.
    pub fn replies(&self) -> Vec<&str> {
        self.sent
            .iter()
            .filter_map(|s| match s {
                Sent::Reply(body) => Some(body.as_str()),
                _ => None,
            })
            .collect()
    }
}

fn text(body: Vec<u8>) -> String {
    String::from_utf8(body).expect("the session sends UTF-8")
}

impl Transport for Replay {
    type Error = ReplayError;
    type Charge = ();

    async fn send_request(
        &mut self,
        _id: u64,
        method: &'static str,
        body: Vec<u8>,
    ) -> Result<(), ReplayError> {
        self.sent.push(Sent::Request(method, text(body)));
        self.method = method;
        self.pending = self.script.pop_front().unwrap_or_default().into();
        Ok(())
    }

    async fn receive(&mut self) -> Result<Incoming<()>, ReplayError> {
        let frame = self
            .pending
            .pop_front()
            .ok_or(ReplayError::Exhausted(self.method))?;
        let (body, delivery) = match frame {
            Frame::Stream(b) => (b, Delivery::Stream),
            Frame::Body(b) => (b, Delivery::Body),
        };
        let messages =
            jsonrpc::parse(body.as_bytes()).map_err(|e| ReplayError::Rpc(self.method, e))?;
        Ok(Incoming {
            messages,
            delivery,
            charge: (),
        })
    }

    async fn send_notification(
        &mut self,
        method: &'static str,
        body: Vec<u8>,
    ) -> Result<(), ReplayError> {
        self.sent.push(Sent::Notification(method, text(body)));
        Ok(())
    }

    async fn send_reply(&mut self, body: Vec<u8>) {
        self.sent.push(Sent::Reply(text(body)));
    }

    fn charge(&mut self, text: &[u8]) -> Result<(), ReplayError> {
        self.charged += text.len();
        Ok(())
    }

    fn established(&mut self, version: &str) {
        self.established.push(version.to_owned());
    }
}

/// Run `future` to its end. The replay never waits, so a future that is not ready at once is
/// a bug in the session or the replay.
pub fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a replayed session never waits"),
    }
}

/// The identity the crawler sends (`toolmark_crawler::observe::client_info`), as the
/// recording was made with it.
pub fn identity() -> Identity {
    Identity {
        client_info: serde_json::json!({
            "name": "toolmark",
            "version": "0.1.0",
            "title": "toolmark transparency-log crawler (read-only: initialize + tools/list)",
        }),
        capabilities: serde_json::json!({}),
    }
}

/// The recorded stdout lines of server-everything 2026.8.31 (see `fixtures/SOURCES.md`).
pub fn everything() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/everything-2026.8.31-stdio.jsonl"
    );
    std::fs::read_to_string(path)
        .expect("the recording")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The exact text of the `result` of one recorded response line.
pub fn result_of(line: &str) -> String {
    match jsonrpc::parse(line.as_bytes())
        .expect("a recorded response")
        .as_slice()
    {
        [jsonrpc::Message::Response { result, .. }] => result.clone(),
        other => panic!("not one response: {other:?}"),
    }
}

/// The source text of every tool in the recorded `tools/list` answer, in order.
pub fn recorded_tools() -> Vec<String> {
    let result = result_of(&everything()[2]);
    toolmark_toolset::ToolSet::parse(result.as_bytes())
        .expect("the recorded set parses")
        .tools
        .into_iter()
        .map(|t| t.raw.to_string())
        .collect()
}

/// A response to request `id` whose result is a `tools/list` page holding `tools` and, when
/// given, `next_cursor` (a JSON value's text).
pub fn page(id: u64, tools: &[String], next_cursor: Option<&str>) -> String {
    let cursor = next_cursor.map_or(String::new(), |c| format!(",\"nextCursor\":{c}"));
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[{}]{cursor}}}}}",
        tools.join(",")
    )
}
