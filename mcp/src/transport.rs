//! What a session needs from the wire: send one JSON-RPC message, receive the messages that
//! come back while an answer is awaited.
//!
//! A transport owns framing and everything below it (HTTP requests and statuses, sessions
//! headers, SSE streams, a child process's stdin and stdout), counts what it sends and reads,
//! and reports its own outcomes — an HTTP status, an auth challenge, a timeout, a closed
//! stream, a body over its size cap — as its [`Transport::Error`], which the session passes
//! through untouched ([`crate::Failure::Transport`]). It does not judge MCP: it never looks
//! inside a result, answers no server request on its own, and does not decide when a listing
//! is complete.

use std::future::Future;

use crate::jsonrpc::Message;

/// How the messages of one [`Incoming`] reached the client, which decides whether a
/// server→client request among them can be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// On a channel the server goes on reading from while it works on our request (an SSE
    /// stream, stdio): requests on it are answered (`ping`) or refused (anything else).
    Stream,
    /// In the single body that answers one HTTP POST: that exchange is over, so requests in
    /// it go unanswered.
    Body,
}

/// Messages a transport received while the answer to the request sent last was awaited: one
/// JSON-RPC body (a single message or a batch).
#[derive(Debug)]
pub struct Incoming<C> {
    /// The messages, in the order the server sent them.
    pub messages: Vec<Message>,
    /// How they arrived.
    pub delivery: Delivery,
    /// What the transport's owner charged for holding them (see [`Transport::charge`]);
    /// released when the session is done with them.
    pub charge: C,
}

/// One way of exchanging JSON-RPC messages with one MCP server.
///
/// The session calls, in order: [`Transport::send_request`] and then [`Transport::receive`]
/// until the answer to that request is among the messages (answering server requests with
/// [`Transport::send_reply`] on the way), [`Transport::handshake_answered`] and
/// [`Transport::established`] around judging the handshake's answer, and
/// [`Transport::send_notification`] for `notifications/initialized`.
pub trait Transport {
    /// An outcome the transport reports when it, not the MCP exchange, ends the session.
    type Error;
    /// A charge against the owner's memory budget, held while a parse lives; `()` for an
    /// owner that does not account memory.
    type Charge;

    /// Send request `id` for `method`: `body` is the whole JSON-RPC message. The messages
    /// answering it are read with [`Transport::receive`].
    fn send_request(
        &mut self,
        id: u64,
        method: &'static str,
        body: Vec<u8>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// The next message body the server sent since the last request, while its answer is
    /// awaited. When nothing more will come (the body or stream ended without the answer, or
    /// the transport's own limits were reached) it says so as an error.
    fn receive(
        &mut self,
    ) -> impl Future<Output = Result<Incoming<Self::Charge>, Self::Error>> + Send;

    /// Send the notification `method` (its whole JSON-RPC message in `body`); no answer is
    /// read.
    fn send_notification(
        &mut self,
        method: &'static str,
        body: Vec<u8>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Send the reply to a server→client request, best effort: whatever happens to it, the
    /// session goes on waiting for its own answer.
    fn send_reply(&mut self, body: Vec<u8>) -> impl Future<Output = ()> + Send;

    /// Charge the memory a parse of `text` takes until the returned charge is dropped. An
    /// error ends the session with it.
    fn charge(&mut self, text: &[u8]) -> Result<Self::Charge, Self::Error>;

    /// The answer to the handshake (`initialize` or `server/discover`) has been read and is
    /// about to be judged: a transport that learns something with it checks it here
    /// (streamable HTTP: the `Mcp-Session-Id` that came with the `initialize` response).
    fn handshake_answered(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// The next request names `name` (2026-07-28: the `Mcp-Name` header a stateless
    /// `resources/read` carries, its URI); a transport that has no such header ignores it.
    fn name_next(&mut self, name: &str) {
        let _ = name;
    }

    /// The server accepted the handshake with protocol `version`: what the transport sends
    /// from now on may depend on it (streamable HTTP: the `MCP-Protocol-Version` and
    /// `Mcp-Session-Id` headers).
    fn established(&mut self, version: &str) {
        let _ = version;
    }
}
