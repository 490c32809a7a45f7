//! One MCP client session over any [`Transport`]: the handshake, every `tools/list` page
//! under the named limits, answers matched by id, server→client requests answered or refused.
//!
//! The order is the protocol's:
//!
//! - [`Handshake::Initialize`] (session era, 2024-11-05 … 2025-11-25): `initialize` asking for
//!   the given version with the fixed client identity, then `notifications/initialized`.
//! - [`Handshake::Discover`] (2026-07-28, stateless): `server/discover` with the protocol
//!   version, capabilities and client info in `params._meta`; the same `_meta` goes with every
//!   later request.
//!
//! then `tools/list` from no cursor until a page ends the listing ([`Continuation`]). Request
//! ids count from 1 on every [`Session::list_tools`]; replies to server requests count for the
//! whole session (at most [`Limits::max_replies`]).

use std::collections::HashSet;

use serde_json::{Value, json};
use toolmark_toolset::ToolSet;
use toolmark_toolset::json::Json;

use crate::jsonrpc::{self, Message};
use crate::limits;
use crate::transport::{Delivery, Transport};

/// The protocol version of the stateless era, asked for by [`Handshake::Discover`].
pub const STATELESS_VERSION: &str = "2026-07-28";

/// The limits one session runs under; [`Limits::default`] takes every value from
/// [`crate::limits`]. Tests shrink them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`limits::MAX_TOOLSET_BYTES`].
    pub max_toolset: usize,
    /// See [`limits::MAX_TOOLS`].
    pub max_tools: usize,
    /// See [`limits::MAX_PAGES`].
    pub max_pages: usize,
    /// See [`limits::MAX_REPLIES`].
    pub max_replies: usize,
    /// The surface's limits ([`Session::list_surface`]).
    pub surface: SurfaceLimits,
}

/// The limits of [`Session::list_surface`]; [`SurfaceLimits::default`] takes every value from
/// [`crate::limits`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceLimits {
    /// See [`limits::MAX_SURFACE_PAGES`].
    pub max_pages: usize,
    /// See [`limits::MAX_SURFACE_ITEMS`].
    pub max_items: usize,
    /// See [`limits::MAX_SURFACE_BYTES`].
    pub max_bytes: usize,
    /// See [`limits::MAX_APP_PAGES`].
    pub max_reads: usize,
    /// See [`limits::MAX_APP_PAGE_BYTES`].
    pub max_read_bytes: usize,
}

impl Default for SurfaceLimits {
    fn default() -> Self {
        SurfaceLimits {
            max_pages: limits::MAX_SURFACE_PAGES,
            max_items: limits::MAX_SURFACE_ITEMS,
            max_bytes: limits::MAX_SURFACE_BYTES,
            max_reads: limits::MAX_APP_PAGES,
            max_read_bytes: limits::MAX_APP_PAGE_BYTES,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_toolset: limits::MAX_TOOLSET_BYTES,
            max_tools: limits::MAX_TOOLS,
            max_pages: limits::MAX_PAGES,
            max_replies: limits::MAX_REPLIES,
            surface: SurfaceLimits::default(),
        }
    }
}

/// Who the client says it is: sent in `initialize` and in the 2026-07-28 `_meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// The `clientInfo` object.
    pub client_info: Value,
    /// The `capabilities` object.
    pub capabilities: Value,
}

/// How a session opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// `initialize` asking for this protocol version, then `notifications/initialized`.
    Initialize(&'static str),
    /// `server/discover` for [`STATELESS_VERSION`]; no session.
    Discover,
}

/// What a session read, kept as it reads it (so a session cut short, by its caller's deadline
/// or by a failure, still leaves what it had).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The exact text of the `initialize` (or `server/discover`) result the server accepted
    /// the handshake with.
    pub initialize: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// The exact text of each `tools/list` result kept, in order.
    pub pages: Vec<String>,
    /// The rest of the surface, when [`Session::list_surface`] read it.
    pub surface: Option<toolmark_toolset::surface::RawSurface>,
}

/// Where one `tools/list` result leaves the listing: the one definition of "complete".
///
/// A listing is complete when its last page is [`Continuation::Last`]: `nextCursor` absent,
/// `null` or `""`. Any other string asks for another page, and a set whose result still asks
/// for one was not completely read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Continuation {
    /// This is the last page.
    Last,
    /// Ask for the next page with this cursor.
    Next(String),
}

/// A `nextCursor` that is neither a string nor `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("tools/list nextCursor is not a string")]
pub struct NotACursor;

impl Continuation {
    /// Where the `tools/list` result `set` leaves the listing.
    pub fn of(set: &ToolSet) -> Result<Continuation, NotACursor> {
        match &set.next_cursor {
            None | Some(Json::Null) => Ok(Continuation::Last),
            Some(c) => match c.as_str() {
                Some("") => Ok(Continuation::Last),
                Some(s) => Ok(Continuation::Next(s.to_owned())),
                None => Err(NotACursor),
            },
        }
    }
}

/// Why a session ended without a complete listing.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure<E> {
    /// The transport ended it (an HTTP status, a timeout, a closed stream, a size cap…).
    #[error("{0}")]
    Transport(E),
    /// The server answered the handshake in a way that shows it does not speak this
    /// handshake: "method not found" to `initialize`, any JSON-RPC error to
    /// `server/discover`, or a `server/discover` result without [`STATELESS_VERSION`].
    #[error("{0}")]
    NotSpoken(String),
    /// The server broke the protocol: a JSON-RPC error, a result of the wrong shape.
    #[error("{0}")]
    Protocol(String),
    /// A size limit: more than [`Limits::max_tools`] tools or [`Limits::max_toolset`] bytes.
    #[error("{0}")]
    TooLarge(String),
    /// Pages were read but the listing did not finish: a repeated cursor, or
    /// [`Limits::max_pages`].
    #[error("{0}")]
    Partial(String),
}

/// How a session ended when it did not end with a complete listing.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{failure}")]
pub struct SessionError<E> {
    /// Why.
    pub failure: Failure<E>,
    /// Whether the server had accepted the handshake first: the transport then answered, so
    /// the failure is the outcome of talking to this server, not a sign that it speaks another
    /// transport.
    pub established: bool,
}

impl<E> SessionError<E> {
    /// The transport's own outcome `e`, before any handshake was accepted (a caller's
    /// transport that failed to open, say, reported like one that failed within a session).
    pub fn transport(e: E) -> Self {
        SessionError::before(Failure::Transport(e))
    }

    fn before(failure: Failure<E>) -> Self {
        SessionError {
            failure,
            established: false,
        }
    }

    fn settled(mut self) -> Self {
        self.established = true;
        self
    }
}

impl<E> From<E> for Failure<E> {
    fn from(e: E) -> Self {
        Failure::Transport(e)
    }
}

/// A JSON-RPC answer to one of our requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The result value's exact text.
    Result(String),
    /// An error response.
    Error {
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
}

/// What a `tools/call` result is, by its `resultType` (2026-07-28; absent in every earlier
/// revision, where it means `complete`), read strictly ([`CallResult::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallResult {
    /// The tool's answer (`resultType` `complete`, or none); `is_error` is its `isError`.
    Complete {
        /// The result's `isError` (absent: `false`).
        is_error: bool,
    },
    /// `resultType` `input_required`: the server asks the client for input before it answers
    /// — each of `inputRequests`' keys with its request's `method`, by key. The observer
    /// never answers one (it has no user to ask) and waits for nothing more.
    InputRequired(Vec<(String, String)>),
}

/// A `tools/call` result whose `resultType`, `inputRequests` or `isError` is not one this
/// client reads: what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tools/call result: {0}")]
pub struct BadCallResult(pub String);

impl CallResult {
    /// Read the exact text of a `tools/call` result as strictly as a message
    /// ([`jsonrpc::value`]: RFC 8259, the depth cap, no member name repeated at any depth, so
    /// a `resultType` sent twice is refused rather than read first- or last-wins): an object;
    /// `resultType` absent, `"complete"` or `"input_required"` (any other value, such as an
    /// extension's `"task"`, was not asked for); `input_required` with `inputRequests` a
    /// non-empty object of requests (objects naming a string `method`); `isError` absent or a
    /// boolean.
    pub fn of(text: &str) -> Result<CallResult, BadCallResult> {
        let bad = |why: &str| BadCallResult(why.to_owned());
        let value = jsonrpc::value(text).map_err(|e| BadCallResult(e.to_string()))?;
        if value.as_object().is_none() {
            return Err(bad("not an object"));
        }
        match value.get("resultType") {
            None => {}
            Some(Json::String(t)) if t.as_str() == Some("complete") => {}
            Some(Json::String(t)) if t.as_str() == Some("input_required") => {
                let requests = value
                    .get("inputRequests")
                    .and_then(Json::as_object)
                    .filter(|r| !r.is_empty())
                    .ok_or_else(|| {
                        bad("input_required without inputRequests (a non-empty object)")
                    })?;
                let mut by_key = requests
                    .iter()
                    .map(|(key, request)| {
                        let method = request
                            .get("method")
                            .and_then(Json::as_str)
                            .ok_or_else(|| bad("an input request without a string method"))?;
                        Ok((key.lossy().into_owned(), method.to_owned()))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                by_key.sort();
                return Ok(CallResult::InputRequired(by_key));
            }
            Some(Json::String(t)) => {
                return Err(BadCallResult(format!(
                    "resultType {:?} was not asked for",
                    t.lossy()
                )));
            }
            Some(_) => return Err(bad("resultType is not a string")),
        }
        let is_error = match value.get("isError") {
            None => false,
            Some(Json::Bool(b)) => *b,
            Some(_) => return Err(bad("isError is not a boolean")),
        };
        Ok(CallResult::Complete { is_error })
    }
}

/// One client session with one server, over as many transports as its caller tries.
#[derive(Debug)]
pub struct Session<'a> {
    pub(crate) limits: Limits,
    identity: Identity,
    pub(crate) listing: &'a mut Listing,
    /// The `_meta` every request carries after a [`Handshake::Discover`]; `None` in a
    /// session-era session.
    pub(crate) meta: Option<Value>,
    next_id: u64,
    /// Replies sent to server→client requests so far (at most [`Limits::max_replies`]).
    replies: usize,
}

impl<'a> Session<'a> {
    /// A session under `limits` that keeps what it reads in `listing` as it reads it.
    pub fn new(limits: Limits, identity: Identity, listing: &'a mut Listing) -> Self {
        Session {
            limits,
            identity,
            listing,
            meta: None,
            next_id: 1,
            replies: 0,
        }
    }

    /// What the session has read so far.
    pub fn listing(&self) -> &Listing {
        self.listing
    }

    /// Open the session over `transport` with `handshake` and read every `tools/list` page.
    /// `Ok` means the listing is complete (its last page is [`Continuation::Last`]); either
    /// way the pages read are in the [`Listing`].
    pub async fn list_tools<T: Transport>(
        &mut self,
        transport: &mut T,
        handshake: Handshake,
    ) -> Result<(), SessionError<T::Error>> {
        self.next_id = 1;
        let meta = match handshake {
            Handshake::Discover => Some(self.discover(transport).await?),
            Handshake::Initialize(version) => {
                self.initialize(transport, version).await?;
                None
            }
        };
        self.meta = meta.clone();
        // The transport is established: nothing after this point is a reason to try another.
        self.pages(transport, meta.as_ref())
            .await
            .map_err(|f| SessionError::before(f).settled())
    }

    fn initialize_params(&self, version: &str) -> Value {
        json!({
            "protocolVersion": version,
            "capabilities": self.identity.capabilities,
            "clientInfo": self.identity.client_info,
        })
    }

    /// `server/discover`; the `_meta` every later request carries.
    async fn discover<T: Transport>(&mut self, t: &mut T) -> Result<Value, SessionError<T::Error>> {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
            "io.modelcontextprotocol/clientCapabilities": self.identity.capabilities,
            "io.modelcontextprotocol/clientInfo": self.identity.client_info,
        });
        let answer = self
            .call(t, "server/discover", json!({ "_meta": meta }), None)
            .await
            .map_err(SessionError::before)?;
        t.handshake_answered()
            .map_err(|e| SessionError::before(e.into()))?;
        let result = match answer {
            Answer::Result(r) => r,
            Answer::Error { code, message } => {
                return Err(SessionError::before(Failure::NotSpoken(format!(
                    "server/discover: JSON-RPC error {code}: {message}"
                ))));
            }
        };
        let parse = t
            .charge(result.as_bytes())
            .map_err(|e| SessionError::before(e.into()))?;
        let parsed: Value = serde_json::from_str(&result).map_err(|e| {
            SessionError::before(Failure::Protocol(format!("server/discover result: {e}")))
        })?;
        let supports = parsed
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|s| s.as_str() == Some(STATELESS_VERSION)));
        drop(parsed);
        drop(parse);
        if !supports {
            return Err(SessionError::before(Failure::NotSpoken(
                "server/discover answered without supporting 2026-07-28".into(),
            )));
        }
        self.listing.initialize = Some(result);
        self.listing.protocol_version = Some(STATELESS_VERSION.into());
        t.established(STATELESS_VERSION);
        Ok(meta)
    }

    /// `initialize` asking for `version`, then `notifications/initialized`.
    async fn initialize<T: Transport>(
        &mut self,
        t: &mut T,
        version: &str,
    ) -> Result<(), SessionError<T::Error>> {
        let params = self.initialize_params(version);
        let answer = self
            .call(t, "initialize", params, None)
            .await
            .map_err(SessionError::before)?;
        t.handshake_answered()
            .map_err(|e| SessionError::before(e.into()))?;
        let version = self
            .accept_initialize(t, answer)
            .map_err(SessionError::before)?;
        t.established(&version);
        // The notification's answer does not matter (HISTOR and the SDKs proceed whatever
        // comes back); only the transport's own failures end the session here.
        let note = jsonrpc::notification("notifications/initialized", None);
        t.send_notification("notifications/initialized", note)
            .await
            .map_err(|e| SessionError::before(e.into()).settled())
    }

    /// Check an `initialize` answer, keep it, and return the negotiated version.
    fn accept_initialize<T: Transport>(
        &mut self,
        t: &mut T,
        answer: Answer,
    ) -> Result<String, Failure<T::Error>> {
        let result = match answer {
            Answer::Result(r) => r,
            Answer::Error { code, message } => {
                let detail = format!("initialize: JSON-RPC error {code}: {message}");
                return Err(if code == -32601 {
                    Failure::NotSpoken(detail)
                } else {
                    Failure::Protocol(detail)
                });
            }
        };
        let parse = t.charge(result.as_bytes())?;
        let parsed: Value = serde_json::from_str(&result)
            .map_err(|e| Failure::Protocol(format!("initialize result: {e}")))?;
        let version = parsed
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| Failure::Protocol("initialize result has no protocolVersion".into()))?;
        if version.is_empty() || version.len() > limits::MAX_PROTOCOL_VERSION {
            return Err(Failure::Protocol(
                "initialize result has an unusable protocolVersion".into(),
            ));
        }
        let version = version.to_owned();
        drop(parsed);
        drop(parse);
        self.listing.initialize = Some(result);
        self.listing.protocol_version = Some(version.clone());
        Ok(version)
    }

    /// Read every `tools/list` page; `meta` goes into every request's params.
    async fn pages<T: Transport>(
        &mut self,
        t: &mut T,
        meta: Option<&Value>,
    ) -> Result<(), Failure<T::Error>> {
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut tools = 0usize;
        let mut bytes = 0usize;
        loop {
            let params = cursor
                .as_ref()
                .map_or(json!({}), |c| json!({ "cursor": c }));
            let answer = self.call(t, "tools/list", params, meta).await?;
            match self.take_page(t, answer, &mut seen, &mut tools, &mut bytes)? {
                Some(next) => cursor = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// Keep one `tools/list` answer; the next cursor when there is one to follow.
    fn take_page<T: Transport>(
        &mut self,
        t: &mut T,
        answer: Answer,
        seen: &mut HashSet<String>,
        tools: &mut usize,
        bytes: &mut usize,
    ) -> Result<Option<String>, Failure<T::Error>> {
        let result = match answer {
            Answer::Result(r) => r,
            Answer::Error { code, message } => {
                return Err(Failure::Protocol(format!(
                    "tools/list: JSON-RPC error {code}: {message}"
                )));
            }
        };
        let _parse = t.charge(result.as_bytes())?;
        let set = ToolSet::parse(result.as_bytes())
            .map_err(|e| Failure::Protocol(format!("tools/list result: {e}")))?;
        *tools += set.tools.len();
        *bytes += result.len();
        if *tools > self.limits.max_tools {
            return Err(Failure::TooLarge(format!(
                "more than {} tools",
                self.limits.max_tools
            )));
        }
        if *bytes > self.limits.max_toolset {
            return Err(Failure::TooLarge(format!(
                "tool set larger than {} bytes",
                self.limits.max_toolset
            )));
        }
        let next = Continuation::of(&set).map_err(|e| Failure::Protocol(e.to_string()))?;
        self.listing.pages.push(result);
        let Continuation::Next(next) = next else {
            return Ok(None);
        };
        let pages = self.listing.pages.len();
        if !seen.insert(next.clone()) {
            return Err(Failure::Partial(format!(
                "tools/list cursor repeated after {pages} pages"
            )));
        }
        if pages >= self.limits.max_pages {
            return Err(Failure::Partial(format!(
                "more than {} tools/list pages",
                self.limits.max_pages
            )));
        }
        Ok(Some(next))
    }

    /// Send request `method` with `params` (and `meta` as `params._meta`) and wait for its
    /// answer, answering server requests that come before it.
    pub(crate) async fn call<T: Transport>(
        &mut self,
        t: &mut T,
        method: &'static str,
        params: Value,
        meta: Option<&Value>,
    ) -> Result<Answer, Failure<T::Error>> {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = params;
        if let Some(meta) = meta {
            params["_meta"] = meta.clone();
        }
        t.send_request(id, method, jsonrpc::request(id, method, params))
            .await?;
        loop {
            let incoming = t.receive().await?;
            if incoming.delivery == Delivery::Stream {
                for m in &incoming.messages {
                    if let Message::Request { id: rid, method } = m {
                        if !self.may_reply() {
                            break;
                        }
                        t.send_reply(jsonrpc::reply_to(rid, method)).await;
                    }
                }
            }
            if let Some(m) = jsonrpc::find_answer(&incoming.messages, id) {
                return Ok(to_answer(m));
            }
        }
    }

    /// Call tool `name` with `arguments` over a `transport` a [`Session::list_tools`] of this
    /// session opened with [`Handshake::Initialize`]: the result's exact text, or the JSON-RPC
    /// error. The answer is not judged (a tool's result is the tool's business); its size is
    /// the transport's to bound ([`CallResult::of`] reads what it is). Time is the caller's. A
    /// result asking for input (`input_required`) is returned like any other: nothing in it is
    /// answered.
    pub async fn call_tool<T: Transport>(
        &mut self,
        transport: &mut T,
        name: &str,
        arguments: Value,
    ) -> Result<Answer, Failure<T::Error>> {
        let params = json!({ "name": name, "arguments": arguments });
        self.call(transport, "tools/call", params, None).await
    }

    /// Whether one more server→client request may be answered, counting it: after
    /// [`Limits::max_replies`] the rest go unanswered and the session carries on waiting for
    /// its own answer (a server that insists on answers ends it by its own timeout, or the
    /// caller's).
    fn may_reply(&mut self) -> bool {
        if self.replies >= self.limits.max_replies {
            return false;
        }
        self.replies += 1;
        true
    }
}

fn to_answer(m: &Message) -> Answer {
    match m {
        Message::Response { result, .. } => Answer::Result(result.clone()),
        Message::ErrorResponse { code, message, .. } => Answer::Error {
            code: *code,
            message: message.clone(),
        },
        // `find_answer` only returns responses and error responses.
        _ => Answer::Error {
            code: i64::MIN,
            message: "not a response".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn continuation(result: &str) -> Result<Continuation, NotACursor> {
        Continuation::of(&ToolSet::parse(result.as_bytes()).unwrap())
    }

    #[test]
    fn a_page_without_a_usable_cursor_is_the_last() {
        for last in [
            r#"{"tools":[]}"#,
            r#"{"tools":[],"nextCursor":null}"#,
            r#"{"tools":[],"nextCursor":""}"#,
        ] {
            assert_eq!(continuation(last), Ok(Continuation::Last), "{last}");
        }
    }

    #[test]
    fn a_string_cursor_asks_for_another_page() {
        assert_eq!(
            continuation(r#"{"tools":[],"nextCursor":"p 2"}"#),
            Ok(Continuation::Next("p 2".into()))
        );
    }

    #[test]
    fn a_cursor_that_is_not_a_string_is_refused() {
        for bad in [
            r#"{"tools":[],"nextCursor":2}"#,
            r#"{"tools":[],"nextCursor":{}}"#,
        ] {
            assert_eq!(continuation(bad), Err(NotACursor), "{bad}");
        }
    }

    #[test]
    fn a_call_result_asking_for_input_is_read_strictly_and_kept_apart() {
        let of = |t: &str| CallResult::of(t);
        assert_eq!(
            of(r#"{"content":[]}"#),
            Ok(CallResult::Complete { is_error: false })
        );
        assert_eq!(
            of(r#"{"resultType":"complete","content":[],"isError":true}"#),
            Ok(CallResult::Complete { is_error: true })
        );
        assert_eq!(
            of(
                r#"{"resultType":"input_required","inputRequests":{"b":{"method":"elicitation/create","params":{}},"a":{"method":"roots/list"}},"requestState":"x"}"#
            ),
            Ok(CallResult::InputRequired(vec![
                ("a".into(), "roots/list".into()),
                ("b".into(), "elicitation/create".into())
            ]))
        );
        for bad in [
            r#"[]"#,
            r#"{"resultType":"input_required"}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"input_required","inputRequests":[{"method":"x"}]}"#,
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":7}}}"#,
            r#"{"resultType":"task","task":{}}"#,
            r#"{"resultType":1}"#,
            r#"{"content":[],"isError":"yes"}"#,
        ] {
            assert!(of(bad).is_err(), "{bad}");
        }
    }

    /// A `resultType` sent twice reads differently in first-wins and last-wins clients (here
    /// `complete` or `input_required`), so the result is refused, at any depth, as a message
    /// repeating a member is.
    #[test]
    fn a_call_result_repeating_a_member_is_refused() {
        for bad in [
            r#"{"resultType":"complete","resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}"#,
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list","method":"x"}}}"#,
            r#"{"content":[],"isError":false,"isError":true}"#,
        ] {
            let refused = CallResult::of(bad).unwrap_err();
            assert!(
                refused.0.contains("duplicate member name"),
                "{bad}: {refused}"
            );
        }
    }
}
