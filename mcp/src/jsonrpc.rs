//! JSON-RPC 2.0 messages as the MCP client sends and receives them.
//!
//! What it does:
//! - [`parse`] reads one message body a server sent (a JSON body or one SSE event's data): a
//!   JSON object, or a non-empty array of them (2025-03-26 batching), after an optional UTF-8
//!   BOM. Each object becomes a [`Message`]: a response (its `result` kept as the exact source
//!   text, byte for byte, so number tokens such as `1.0` and all whitespace survive for the
//!   digests), an error response (bounded excerpts), a server→client request or a
//!   notification.
//! - It reads with [`toolmark_toolset::json`], not serde_json: the same strict RFC 8259 grammar
//!   and nesting cap ([`toolmark_toolset::json::MAX_DEPTH`]) as the tool-set parser, no recursion
//!   past the cap, and nothing allocated beyond a small multiple of the input.
//! - It refuses a message that repeats a member name in any object at any depth
//!   ([`RpcError::DuplicateMember`], with the JSON-pointer path of the first repetition): such a
//!   tool definition reads differently in first-wins and last-wins clients, so a session ends
//!   on it as a protocol failure rather than pick one reading.
//! - [`request`], [`notification`] and [`reply_to`] build what the client sends; [`find_answer`]
//!   picks the answer to one of its requests out of what a server sent.
//!
//! What it does not do: it keeps no `params` of server requests or notifications, checks
//! nothing inside `result` (the MCP layer does), and never answers a server request with
//! anything but an empty `ping` result or "method not supported".

use std::collections::HashSet;
use std::fmt::Write as _;

use toolmark_toolset::json::{self, Json, JsonError, Member, Str};

use crate::limits::MAX_DETAIL_EXCERPT;

/// The UTF-8 encoding of U+FEFF, tolerated once before a message.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// JSON-RPC's "Method not found" code, sent for every server request but `ping`.
const METHOD_NOT_FOUND: i64 = -32601;

/// The message of that error.
const NOT_SUPPORTED: &str = "method not supported by a read-only crawler";

/// The top-level member whose array elements [`json::parse_members`] should keep the text of:
/// none is needed here (the result's text comes from its span), and no JSON-RPC member has an
/// empty name, so this asks for nothing in any real message.
const NO_CAPTURE: &str = "";

/// A request id as a server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Id {
    /// An integer, as its lexical token (`7`, `-1`, `12345678901234567890`).
    Num(String),
    /// A string.
    Str(String),
    /// `null` (a server that could not read the request's id; also an error without an id).
    Null,
}

impl Id {
    /// Whether this id answers our request `ours`: the number `7` or the string `"7"` (some
    /// servers echo ids as strings), never `7.0`, `"07"`, `"+7"` or `null`.
    pub fn matches(&self, ours: u64) -> bool {
        match self {
            Id::Num(t) | Id::Str(t) => *t == ours.to_string(),
            Id::Null => false,
        }
    }

    /// The id as JSON text, to echo it back.
    fn to_json(&self) -> String {
        match self {
            Id::Num(t) => t.clone(),
            Id::Str(s) => serde_json::Value::from(s.as_str()).to_string(),
            Id::Null => "null".to_owned(),
        }
    }
}

/// One JSON-RPC message from a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A response: `result` is the exact source text of the result value (byte for byte, a
    /// slice of the input).
    Response {
        /// The id answered.
        id: Id,
        /// The result value's source text.
        result: String,
    },
    /// An error response. An error without an `id` member is read as id `null`.
    ErrorResponse {
        /// The id answered.
        id: Id,
        /// `error.code`, or `i64::MIN` when it is missing or not an integer that fits.
        code: i64,
        /// `error.message` (empty when missing or not a string), at most
        /// [`MAX_DETAIL_EXCERPT`] characters.
        message: String,
        /// The source text of `error.data`, at most [`MAX_DETAIL_EXCERPT`] characters.
        data: Option<String>,
    },
    /// A server→client request (`method` and `id`), e.g. `ping`, `roots/list`,
    /// `sampling/createMessage`.
    Request {
        /// Its id, to answer with [`reply_to`].
        id: Id,
        /// The method asked for.
        method: String,
    },
    /// A notification (`method`, no `id`), e.g. `notifications/message`.
    Notification {
        /// The method.
        method: String,
    },
}

/// Why a body is not a JSON-RPC 2.0 message (or batch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcError {
    /// The body is not UTF-8; the offset of the first invalid byte.
    #[error("message is not UTF-8 (invalid byte at offset {0})")]
    NotUtf8(usize),
    /// The body is not JSON (or nests deeper than the cap).
    #[error(transparent)]
    Json(#[from] JsonError),
    /// An object repeats a member name; the JSON-pointer path of the first repetition (e.g.
    /// `/result/tools/3/description`), cut at [`MAX_DETAIL_EXCERPT`] characters.
    #[error("duplicate member name at {0}")]
    DuplicateMember(String),
    /// JSON, but not a JSON-RPC 2.0 message.
    #[error("malformed JSON-RPC message: {0}")]
    Malformed(&'static str),
    /// A batch with no message in it.
    #[error("empty JSON-RPC batch")]
    EmptyBatch,
}

/// Parse one message body: a JSON object, or a non-empty array of them. A UTF-8 BOM is
/// tolerated. Any repeated member name at any depth refuses the whole body.
pub fn parse(bytes: &[u8]) -> Result<Vec<Message>, RpcError> {
    let (bytes, skipped) = match bytes.strip_prefix(BOM) {
        Some(rest) => (rest, BOM.len()),
        None => (bytes, 0),
    };
    let text =
        std::str::from_utf8(bytes).map_err(|e| RpcError::NotUtf8(skipped + e.valid_up_to()))?;
    match text.bytes().find(|b| !is_ws(*b)) {
        Some(b'{') => {
            let members = json::parse_members(text, NO_CAPTURE)?;
            refuse_duplicates(text)?;
            Ok(vec![message(text, members)?])
        }
        Some(b'[') => {
            let elements: Vec<&str> = json::parse_array_with_raw(text)?
                .into_iter()
                .map(|(_, raw)| raw)
                .collect();
            refuse_duplicates(text)?;
            if elements.is_empty() {
                return Err(RpcError::EmptyBatch);
            }
            elements
                .into_iter()
                .map(|raw| {
                    if !raw.starts_with('{') {
                        return Err(RpcError::Malformed("a batch element is not an object"));
                    }
                    message(raw, json::parse_members(raw, NO_CAPTURE)?)
                })
                .collect()
        }
        _ => {
            json::parse(text)?;
            Err(RpcError::Malformed("not a JSON object or array"))
        }
    }
}

/// Read one JSON value the way a message is read ([`parse`]): [`json::parse`]'s strict grammar
/// and depth cap, and no object at any depth repeating a member name
/// ([`RpcError::DuplicateMember`]). For the text of a response's `result`, which [`parse`]
/// keeps as source text, when a caller reads it on its own.
pub fn value(text: &str) -> Result<Json, RpcError> {
    let value = json::parse(text)?;
    refuse_duplicates(text)?;
    Ok(value)
}

/// Find the answer to our request `id` among messages: the first response or error response
/// whose id matches.
pub fn find_answer(messages: &[Message], id: u64) -> Option<&Message> {
    messages.iter().find(|m| match m {
        Message::Response { id: theirs, .. } | Message::ErrorResponse { id: theirs, .. } => {
            theirs.matches(id)
        }
        _ => false,
    })
}

/// The body of a request: `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`, members
/// in that order.
pub fn request(id: u64, method: &str, params: serde_json::Value) -> Vec<u8> {
    let mut out = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"#);
    push_json(&mut out, &serde_json::Value::from(method));
    out.push_str(r#","params":"#);
    push_json(&mut out, &params);
    out.push('}');
    out.into_bytes()
}

/// The body of a notification: `{"jsonrpc":"2.0","method":method}`, with `"params":params`
/// last when given.
pub fn notification(method: &str, params: Option<serde_json::Value>) -> Vec<u8> {
    let mut out = String::from(r#"{"jsonrpc":"2.0","method":"#);
    push_json(&mut out, &serde_json::Value::from(method));
    if let Some(params) = params {
        out.push_str(r#","params":"#);
        push_json(&mut out, &params);
    }
    out.push('}');
    out.into_bytes()
}

/// The reply to a server→client request: `ping` gets `{"jsonrpc":"2.0","id":<same id>,
/// "result":{}}`; anything else the error -32601 "method not supported by a read-only
/// crawler" (the crawler declares no capabilities, so a server has no reason to ask).
pub fn reply_to(id: &Id, method: &str) -> Vec<u8> {
    let id = id.to_json();
    let body = if method == "ping" {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
    } else {
        let mut out = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{METHOD_NOT_FOUND},"message":"#
        );
        push_json(&mut out, &serde_json::Value::from(NOT_SUPPORTED));
        out.push_str("}}");
        out
    };
    body.into_bytes()
}

/// Append `value` as compact JSON.
fn push_json(out: &mut String, value: &serde_json::Value) {
    // `Value`'s Display is its compact JSON text and cannot fail (object keys are strings).
    let _ = write!(out, "{value}");
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Classify one message object, given its source text and its members (no name repeated).
fn message(text: &str, members: Vec<Member<'_>>) -> Result<Message, RpcError> {
    let get = |name: &str| members.iter().find(|m| m.name.as_str() == Some(name));
    if get("jsonrpc").and_then(|m| m.value.as_str()) != Some("2.0") {
        return Err(RpcError::Malformed("\"jsonrpc\" is not \"2.0\""));
    }
    let id = get("id").map(|m| id(&m.value)).transpose()?;
    match (get("method"), get("result"), get("error")) {
        (Some(method), None, None) => {
            let method = method
                .value
                .as_str()
                .ok_or(RpcError::Malformed("\"method\" is not a string"))?
                .to_owned();
            Ok(match id {
                Some(id) => Message::Request { id, method },
                None => Message::Notification { method },
            })
        }
        (Some(_), _, _) => Err(RpcError::Malformed(
            "both \"method\" and \"result\" or \"error\"",
        )),
        (None, Some(_), Some(_)) => Err(RpcError::Malformed("both \"result\" and \"error\"")),
        (None, Some(result), None) => Ok(Message::Response {
            id: id.ok_or(RpcError::Malformed("a response without an \"id\""))?,
            result: text[result.span.clone()].to_owned(),
        }),
        (None, None, Some(error)) => error_response(id.unwrap_or(Id::Null), error, text),
        (None, None, None) => Err(RpcError::Malformed("not a JSON-RPC 2.0 message")),
    }
}

fn id(value: &Json) -> Result<Id, RpcError> {
    match value {
        Json::Number(t) if json::is_integer_token(t) => Ok(Id::Num(t.to_string())),
        Json::String(Str::Text(s)) => Ok(Id::Str(s.to_string())),
        Json::Null => Ok(Id::Null),
        _ => Err(RpcError::Malformed(
            "\"id\" is not an integer, a string or null",
        )),
    }
}

fn error_response(id: Id, error: &Member<'_>, text: &str) -> Result<Message, RpcError> {
    if !matches!(error.value, Json::Object(_)) {
        return Err(RpcError::Malformed("\"error\" is not an object"));
    }
    let code = match error.value.get("code") {
        Some(Json::Number(t)) if json::is_integer_token(t) => t.parse().unwrap_or(i64::MIN),
        _ => i64::MIN,
    };
    let message = match error.value.get("message") {
        Some(Json::String(s)) => excerpt(&s.lossy()),
        _ => String::new(),
    };
    // The error object's own members, for the source text of `data` (already parsed once, so
    // this cannot fail; an error would only lose `data`).
    let source = &text[error.span.clone()];
    let data = json::parse_members(source, NO_CAPTURE)
        .ok()
        .and_then(|members| {
            members
                .into_iter()
                .find(|m| m.name.as_str() == Some("data"))
                .map(|m| excerpt(&source[m.span]))
        });
    Ok(Message::ErrorResponse {
        id,
        code,
        message,
        data,
    })
}

/// At most [`MAX_DETAIL_EXCERPT`] characters of `s`.
fn excerpt(s: &str) -> String {
    match s.char_indices().nth(MAX_DETAIL_EXCERPT) {
        Some((end, _)) => s[..end].to_owned(),
        None => s.to_owned(),
    }
}

/// An open container while scanning for repeated names.
enum Frame {
    Object {
        /// Names seen so far in this object.
        names: HashSet<Str>,
        /// The name of the member being read (for the path).
        current: Option<Str>,
        /// The next string is a member name (after `{` or `,`).
        expect_name: bool,
    },
    Array {
        /// Index of the element being read.
        index: usize,
    },
}

/// Refuse `text` (already checked to be JSON within the depth cap) if any object in it repeats
/// a member name, by name as decoded (`"a"` and `"\u0061"` are the same name).
///
/// [`json::parse`] keeps only the last of repeated names below the top level, so this scans the
/// source once instead, with an explicit stack (the depth is already bounded): each byte is
/// visited once and each name decoded once, so time and memory are linear in the input.
fn refuse_duplicates(text: &str) -> Result<(), RpcError> {
    let s = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'{' => stack.push(Frame::Object {
                names: HashSet::new(),
                current: None,
                expect_name: true,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { expect_name, .. }) => *expect_name = true,
                None => {}
            },
            b'"' => {
                let start = i;
                i += 1;
                let mut escaped = false;
                while i < s.len() && s[i] != b'"' {
                    if s[i] == b'\\' {
                        escaped = true;
                        i += 1;
                    }
                    i += 1;
                }
                if let Some((
                    Frame::Object {
                        names,
                        current,
                        expect_name: expect_name @ true,
                    },
                    outer,
                )) = stack.split_last_mut()
                {
                    *expect_name = false;
                    let raw = text.get(start + 1..i).unwrap_or_default();
                    let name = if escaped {
                        match text.get(start..=i).map(json::parse) {
                            Some(Ok(Json::String(decoded))) => decoded,
                            _ => Str::Text(raw.into()),
                        }
                    } else {
                        Str::Text(raw.into())
                    };
                    if names.contains(&name) {
                        return Err(RpcError::DuplicateMember(path(outer, &name)));
                    }
                    names.insert(name.clone());
                    *current = Some(name);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The JSON-pointer (RFC 6901) path of member `name` of an object inside the containers
/// `outer` (outermost first), cut at [`MAX_DETAIL_EXCERPT`] characters.
fn path(outer: &[Frame], name: &Str) -> String {
    fn segment(out: &mut String, s: &str) {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    let mut out = String::new();
    for frame in outer {
        match frame {
            Frame::Object { current, .. } => segment(
                &mut out,
                &current.as_ref().map(Str::lossy).unwrap_or_default(),
            ),
            Frame::Array { index } => segment(&mut out, &index.to_string()),
        }
    }
    segment(&mut out, &name.lossy());
    excerpt(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(body: &str) -> Message {
        let mut all = parse(body.as_bytes()).unwrap();
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    #[test]
    fn result_text_is_kept_byte_for_byte() {
        let result =
            "{ \"tools\" : [ {\"name\":\"a\", \"n\": 1.0, \"m\":1e2,\n\t\"s\":\"\\u00e9\"} ] }";
        let body = format!("{{\"jsonrpc\":\"2.0\",  \"id\" : 1,\"result\": {result}  }}\n");
        assert_eq!(
            one(&body),
            Message::Response {
                id: Id::Num("1".into()),
                result: result.into(),
            }
        );
        // Members in any order, scalars as results.
        assert_eq!(
            one(r#"{"result":-0.50E+3,"id":2,"jsonrpc":"2.0"}"#),
            Message::Response {
                id: Id::Num("2".into()),
                result: "-0.50E+3".into()
            }
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":3,"result":null}"#),
            Message::Response {
                id: Id::Num("3".into()),
                result: "null".into()
            }
        );
    }

    #[test]
    fn ids() {
        let id_of =
            |raw: &str| match one(&format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)) {
                Message::Response { id, .. } => id,
                other => panic!("{other:?}"),
            };
        assert_eq!(id_of("7"), Id::Num("7".into()));
        assert_eq!(id_of("\"7\""), Id::Str("7".into()));
        assert_eq!(id_of("\"a\\u0062c\""), Id::Str("abc".into()));
        assert_eq!(id_of("null"), Id::Null);
        assert_eq!(id_of("-3"), Id::Num("-3".into()));
        assert_eq!(
            id_of("98765432109876543210"),
            Id::Num("98765432109876543210".into())
        );
        assert!(id_of("7").matches(7));
        assert!(id_of("\"7\"").matches(7));
        assert!(!id_of("7").matches(8));
        assert!(!id_of("\"07\"").matches(7));
        assert!(!id_of("\"+7\"").matches(7));
        assert!(!id_of("\"7.0\"").matches(7));
        assert!(!id_of("\" 7\"").matches(7));
        assert!(!id_of("null").matches(0));
        assert!(!id_of("-0").matches(0));
        assert!(id_of("18446744073709551615").matches(u64::MAX));
        for bad in ["7.0", "7e0", "1.5", "true", "[7]", "{}", "\"\\ud800\""] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{bad},"result":{{}}}}"#);
            assert!(
                matches!(parse(body.as_bytes()), Err(RpcError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn error_responses() {
        assert_eq!(
            one(
                r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"Invalid params","data":{ "why" : [1.0] }}}"#
            ),
            Message::ErrorResponse {
                id: Id::Str("x".into()),
                code: -32602,
                message: "Invalid params".into(),
                data: Some(r#"{ "why" : [1.0] }"#.into()),
            }
        );
        // Lenient inside the error: odd codes and messages are kept as far as possible.
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":7}}"#),
            Message::ErrorResponse {
                id: Id::Num("1".into()),
                code: i64::MIN,
                message: String::new(),
                data: None,
            }
        );
        assert_eq!(
            one(
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":99999999999999999999,"message":"m\ud800"}}"#
            ),
            Message::ErrorResponse {
                id: Id::Num("1".into()),
                code: i64::MIN,
                message: "m\u{FFFD}".into(),
                data: None,
            }
        );
        // An error without an id (some servers' parse errors) has id null.
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#),
            Message::ErrorResponse {
                id: Id::Null,
                code: -32700,
                message: "Parse error".into(),
                data: None,
            }
        );
        // Long messages and data are cut to the excerpt length, in characters.
        let long = "é".repeat(MAX_DETAIL_EXCERPT + 50);
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":1,"message":"{long}","data":"{long}"}}}}"#
        );
        match one(&body) {
            Message::ErrorResponse { message, data, .. } => {
                assert_eq!(message, "é".repeat(MAX_DETAIL_EXCERPT));
                let data = data.unwrap();
                assert_eq!(data.chars().count(), MAX_DETAIL_EXCERPT);
                assert!(data.starts_with("\"éé"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#),
            Err(RpcError::Malformed(_))
        ));
    }

    #[test]
    fn server_requests_and_notifications() {
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#),
            Message::Request {
                id: Id::Num("0".into()),
                method: "ping".into()
            }
        );
        assert_eq!(
            one(
                r#"{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{"messages":[]}}"#
            ),
            Message::Request {
                id: Id::Str("s-1".into()),
                method: "sampling/createMessage".into()
            }
        );
        assert_eq!(
            one(r#"{"method":"notifications/message","params":{"level":"info"},"jsonrpc":"2.0"}"#),
            Message::Notification {
                method: "notifications/message".into()
            }
        );
        for bad in [
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","method":"\udc00"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
        ] {
            assert!(
                matches!(parse(bad.as_bytes()), Err(RpcError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn batches() {
        let body = r#"[ {"jsonrpc":"2.0","method":"notifications/progress"},
            {"jsonrpc":"2.0","id":"2","result":{"a" :1}} ,{"jsonrpc":"2.0","id":5,"method":"ping"}]"#;
        let all = parse(body.as_bytes()).unwrap();
        assert_eq!(
            all,
            [
                Message::Notification {
                    method: "notifications/progress".into()
                },
                Message::Response {
                    id: Id::Str("2".into()),
                    result: r#"{"a" :1}"#.into()
                },
                Message::Request {
                    id: Id::Num("5".into()),
                    method: "ping".into()
                },
            ]
        );
        assert_eq!(find_answer(&all, 2), Some(&all[1]));
        assert_eq!(find_answer(&all, 5), None, "a request is not an answer");
        assert_eq!(parse(b" [ ] "), Err(RpcError::EmptyBatch));
        assert!(matches!(
            parse(br#"[{"jsonrpc":"2.0","method":"a"}, 1]"#),
            Err(RpcError::Malformed(_))
        ));
        assert!(matches!(
            parse(br#"[[{"jsonrpc":"2.0","method":"a"}]]"#),
            Err(RpcError::Malformed(_))
        ));
    }

    #[test]
    fn find_answer_takes_the_first_match() {
        let all = parse(
            br#"[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":"3","error":{"code":1,"message":"no"}},{"jsonrpc":"2.0","id":3,"result":2}]"#,
        )
        .unwrap();
        assert_eq!(find_answer(&all, 3), Some(&all[1]));
        assert_eq!(find_answer(&all, 1), Some(&all[0]));
        assert_eq!(find_answer(&all, 4), None);
    }

    #[test]
    fn duplicates_are_refused_at_any_depth() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#),
            Err(RpcError::DuplicateMember("/id".into()))
        );
        // Deep inside a tool, with an escaped spelling of the same name.
        let body = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"x"},{"name":"b"},{"name":"c"},
            {"name":"d","description":"safe","inputSchema":{"type":"object"},"descr\u0069ption":"evil"}]}}"#;
        assert_eq!(
            parse(body.as_bytes()),
            Err(RpcError::DuplicateMember(
                "/result/tools/3/description".into()
            ))
        );
        // Path segments are escaped as in a JSON pointer; batches index from the root.
        let body = r#"[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":1,"result":{"a/b~c":{"k":1,"k":2}}}]"#;
        assert_eq!(
            parse(body.as_bytes()),
            Err(RpcError::DuplicateMember("/1/result/a~1b~0c/k".into()))
        );
        // The same name in sibling or nested objects is not a repetition; names in strings
        // and values do not count.
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"a":{"a":{"a":"a"}},"b":[{"a":1},{"a":"\"a\""}],"c":"a"}}"#;
        assert!(parse(ok.as_bytes()).is_ok());
        // Names differing only by an unpaired surrogate are different names; the same one twice
        // is a repetition.
        assert!(parse(br#"{"jsonrpc":"2.0","id":1,"result":{"\ud800":1,"\udc00":2}}"#).is_ok());
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{"\ud800":1,"\ud800":2}}"#),
            Err(RpcError::DuplicateMember("/result/\u{FFFD}".into()))
        );
        // Wide objects.
        let mut wide = String::from(r#"{"jsonrpc":"2.0","id":1,"result":{"#);
        for i in 0..1000 {
            write!(wide, "\"k{i}\":{i},").unwrap();
        }
        wide.push_str("\"k999\":0}}");
        assert_eq!(
            parse(wide.as_bytes()),
            Err(RpcError::DuplicateMember("/result/k999".into()))
        );
    }

    #[test]
    fn deep_nesting_is_a_json_error_without_overflow() {
        for open in ["[", "{\"a\":"] {
            let body = open.repeat(10_000);
            assert!(
                matches!(parse(body.as_bytes()), Err(RpcError::Json(_))),
                "{open}"
            );
        }
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#,
            "[".repeat(200) + &"]".repeat(200)
        );
        assert!(matches!(parse(body.as_bytes()), Err(RpcError::Json(_))));
        // Within the cap is fine.
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#,
            "[".repeat(100) + &"]".repeat(100)
        );
        assert!(parse(body.as_bytes()).is_ok());
    }

    #[test]
    fn not_json_rpc() {
        assert_eq!(
            parse(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\xFF}"),
            Err(RpcError::NotUtf8(33))
        );
        assert_eq!(parse(b"\xEF\xBB\xBF\xC3"), Err(RpcError::NotUtf8(3)));
        assert!(matches!(parse(b""), Err(RpcError::Json(_))));
        assert!(matches!(parse(b"{"), Err(RpcError::Json(_))));
        assert!(matches!(parse(b"{} {}"), Err(RpcError::Json(_))));
        assert!(matches!(
            parse(b"\xEF\xBB\xBF\xEF\xBB\xBF{}"),
            Err(RpcError::Json(_))
        ));
        for bad in [
            "1",
            "\"x\"",
            "null",
            "{}",
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
        ] {
            assert!(
                matches!(parse(bad.as_bytes()), Err(RpcError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn bom_is_tolerated() {
        let body = b"\xEF\xBB\xBF {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[]}";
        assert_eq!(
            parse(body).unwrap(),
            [Message::Response {
                id: Id::Num("1".into()),
                result: "[]".into()
            }]
        );
    }

    #[test]
    fn what_the_client_sends() {
        let body = request(7, "tools/list", serde_json::json!({"cursor": "c\"1"}));
        assert_eq!(
            String::from_utf8(body.clone()).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c\"1"}}"#
        );
        assert_eq!(
            parse(&body).unwrap(),
            [Message::Request {
                id: Id::Num("7".into()),
                method: "tools/list".into()
            }]
        );
        assert_eq!(
            notification("notifications/initialized", None),
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        assert_eq!(
            notification("n", Some(serde_json::json!([1]))),
            br#"{"jsonrpc":"2.0","method":"n","params":[1]}"#
        );
        assert_eq!(
            reply_to(&Id::Num("12".into()), "ping"),
            br#"{"jsonrpc":"2.0","id":12,"result":{}}"#
        );
        assert_eq!(
            reply_to(&Id::Str("a\"b".into()), "roots/list"),
            br#"{"jsonrpc":"2.0","id":"a\"b","error":{"code":-32601,"message":"method not supported by a read-only crawler"}}"#
        );
        assert_eq!(
            reply_to(&Id::Null, "ping"),
            br#"{"jsonrpc":"2.0","id":null,"result":{}}"#
        );
        // Our own replies read back as responses with the same id.
        let reply = reply_to(&Id::Str("x".into()), "sampling/createMessage");
        assert!(matches!(
            &parse(&reply).unwrap()[0],
            Message::ErrorResponse { id: Id::Str(s), code: -32601, .. } if s == "x"
        ));
    }
}
