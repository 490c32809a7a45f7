//! Tool sets as servers send them: which document shapes are accepted, and what is kept.

use crate::json::{self, Json, JsonError};

/// The shape a tool set arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A bare JSON array of tools.
    Array,
    /// A `tools/list` result, `{"tools": […], "nextCursor": …}`, or a wrapper around the array
    /// (`{"server_info"|"server": …, "tools": […]}`, as in captured snapshots).
    Object,
    /// A whole JSON-RPC response, `{"jsonrpc": "2.0", "id": …, "result": {"tools": […]}}`.
    JsonRpc,
}

/// One tool entry exactly as sent: the parsed view and its source text, byte for byte.
///
/// An entry need not be a valid tool (it may lack a name or not be an object at all): MTL/1
/// decides what that means, and the full digest covers it either way.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// The entry, parsed.
    pub value: Json,
    /// The entry's JSON text as it appeared in the document (nothing a server sent is lost).
    pub raw: Box<str>,
}

impl Tool {
    /// The tool's name, when it is an object with a string `name`.
    pub fn name(&self) -> Option<&str> {
        self.value.get("name").and_then(Json::as_str)
    }

    /// A member of the tool object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.value.get(key)
    }

    /// The `description` when it is a string.
    pub fn description(&self) -> Option<&str> {
        self.get("description").and_then(Json::as_str)
    }
}

/// A parsed tool set.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSet {
    /// The entries in the order the server sent them.
    pub tools: Vec<Tool>,
    /// Which accepted document shape it came in.
    pub shape: Shape,
    /// `nextCursor` of a `tools/list` result, when present: a set that still has one was not
    /// drained, and a caller must not digest it as complete.
    pub next_cursor: Option<Json>,
}

/// Why a document is not a tool set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("not UTF-8 text (invalid byte at {0})")]
    /// The byte offset of the first invalid UTF-8 byte.
    NotUtf8(usize),
    #[error(transparent)]
    /// Not strict JSON.
    Json(#[from] JsonError),
    #[error("not a tool set: {0}")]
    /// JSON, but none of the accepted tool-set shapes.
    NotAToolSet(&'static str),
}

/// The `tools/list`-shaped document `{"tools":[…]}` holding `raw` (each a tool's exact JSON text)
/// byte for byte, in order: how pages are assembled into one tool set and how a client's tools
/// are digested, so that every digest sees exactly the texts that were served.
pub fn tools_document<S: AsRef<str>>(raw: &[S]) -> String {
    let len = raw.iter().map(|t| t.as_ref().len() + 1).sum::<usize>();
    let mut doc = String::with_capacity(len + 12);
    doc.push_str("{\"tools\":[");
    for (i, tool) in raw.iter().enumerate() {
        if i > 0 {
            doc.push(',');
        }
        doc.push_str(tool.as_ref());
    }
    doc.push_str("]}");
    doc
}

impl ToolSet {
    /// The tool set of [`tools_document`]`(raw)`.
    pub fn of_raw<S: AsRef<str>>(raw: &[S]) -> Result<ToolSet, ParseError> {
        ToolSet::parse(tools_document(raw).as_bytes())
    }

    /// Parse a tool set from a document: a bare array of tools, an object with a `tools` array (a
    /// `tools/list` result or a snapshot wrapper), or a JSON-RPC response whose `result` is one.
    /// A leading UTF-8 byte order mark is skipped.
    pub fn parse(bytes: &[u8]) -> Result<ToolSet, ParseError> {
        const EXPECTED: &str = "expected an array of tools or an object with a \"tools\" array";
        let text = text_of(bytes)?;
        let trimmed = text.trim_start_matches([' ', '\t', '\n', '\r']);
        if trimmed.starts_with('[') {
            let tools = json::parse_array_with_raw(text)?;
            return Ok(ToolSet::from_entries(tools, Shape::Array, None));
        }
        match listed(text, "tools")? {
            Listed::Entries {
                entries,
                shape,
                next_cursor,
            } => Ok(ToolSet::from_entries(entries, shape, next_cursor)),
            Listed::NotAnObject | Listed::Missing => Err(ParseError::NotAToolSet(EXPECTED)),
            Listed::NotArray => Err(ParseError::NotAToolSet("\"tools\" is not an array")),
        }
    }

    fn from_entries(entries: Vec<(Json, &str)>, shape: Shape, next_cursor: Option<Json>) -> Self {
        ToolSet {
            tools: entries
                .into_iter()
                .map(|(value, raw)| Tool {
                    value,
                    raw: raw.into(),
                })
                .collect(),
            shape,
            next_cursor,
        }
    }

    /// Build a set from parsed entries (their raw text is their compact re-serialisation).
    pub fn from_values(values: Vec<Json>) -> ToolSet {
        ToolSet {
            tools: values
                .into_iter()
                .map(|value| {
                    let raw = crate::canon::to_vec(&value, crate::canon::Numbers::Ecmascript)
                        .map(|b| String::from_utf8(b).unwrap_or_default())
                        .unwrap_or_default();
                    Tool {
                        value,
                        raw: raw.into(),
                    }
                })
                .collect(),
            shape: Shape::Array,
            next_cursor: None,
        }
    }

    /// The entry with this name (the first, if names repeat).
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name() == Some(name))
    }
}

/// A document's text: UTF-8, with a leading byte order mark skipped.
pub(crate) fn text_of(bytes: &[u8]) -> Result<&str, ParseError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| ParseError::NotUtf8(e.valid_up_to()))
}

/// The array member `key` of a result object (or of the `result` of a JSON-RPC response), as
/// [`listed`] found it.
pub(crate) enum Listed<'a> {
    /// The array's elements with their exact source texts.
    Entries {
        /// Each element and its text, in order.
        entries: Vec<(Json, &'a str)>,
        /// [`Shape::Object`], or [`Shape::JsonRpc`] when the object was a response's `result`.
        shape: Shape,
        /// The holder's `nextCursor`, when present.
        next_cursor: Option<Json>,
    },
    /// The document is not an object (judged on its first character, before parsing).
    NotAnObject,
    /// The object has no member `key`.
    Missing,
    /// The member `key` (the last, when repeated) is not an array.
    NotArray,
}

/// The array member `key` of the object `text` (a paged list's result, `{"tools": […]}`,
/// `{"prompts": […]}`, …), or of its `result` when it is a JSON-RPC response, keeping every
/// element's source text; a repeated member takes the last, like the parser. Strict JSON,
/// nested at most [`json::MAX_DEPTH`] levels.
pub(crate) fn listed<'a>(text: &'a str, key: &str) -> Result<Listed<'a>, JsonError> {
    if !text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
    {
        return Ok(Listed::NotAnObject);
    }
    let mut holder = json::parse_members(text, key)?;
    let mut shape = Shape::Object;
    if let (Some(_), Some(result)) = (last(&holder, "jsonrpc"), last(&holder, "result")) {
        if matches!(result.value, Json::Object(_)) {
            shape = Shape::JsonRpc;
            let span = result.span.clone();
            holder = json::parse_members(&text[span], key)?;
        }
    }
    let next_cursor = last(&holder, "nextCursor").map(|m| m.value.clone());
    let Some(at) = holder.iter().rposition(|m| m.name.as_str() == Some(key)) else {
        return Ok(Listed::Missing);
    };
    let array = holder.swap_remove(at);
    let Json::Array(items) = array.value else {
        return Ok(Listed::NotArray);
    };
    Ok(Listed::Entries {
        entries: items.into_iter().zip(array.raw_elements).collect(),
        shape,
        next_cursor,
    })
}

/// The last member with this name (JSON's last-wins rule for repeated names).
fn last<'m, 'a>(members: &'m [json::Member<'a>], key: &str) -> Option<&'m json::Member<'a>> {
    members.iter().rev().find(|m| m.name.as_str() == Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_set_of_raw_texts_keeps_every_text_byte_for_byte() {
        let raw = [r#"{"name":"a", "n":1.0}"#, r#"{ "name" : "b\u0041" }"#];
        assert_eq!(
            tools_document(&raw),
            r#"{"tools":[{"name":"a", "n":1.0},{ "name" : "b\u0041" }]}"#
        );
        let set = ToolSet::of_raw(&raw).unwrap();
        let texts: Vec<&str> = set.tools.iter().map(|t| &*t.raw).collect();
        assert_eq!(texts, raw);
        assert_eq!(tools_document::<&str>(&[]), r#"{"tools":[]}"#);
    }

    #[test]
    fn accepts_every_shape_and_keeps_raw_text() {
        let list = br#"{"tools":[ {"name":"a", "x" : 1.50} ],"nextCursor":"c2"}"#;
        let s = ToolSet::parse(list).unwrap();
        assert_eq!(s.shape, Shape::Object);
        assert_eq!(&*s.tools[0].raw, r#"{"name":"a", "x" : 1.50}"#);
        assert_eq!(s.next_cursor, Some(Json::String("c2".into())));

        let bare = b"\xEF\xBB\xBF [{\"name\":\"a\"}]";
        let s = ToolSet::parse(bare).unwrap();
        assert_eq!(s.shape, Shape::Array);
        assert_eq!(s.tools[0].name(), Some("a"));

        let wrapped = br#"{"server_info":{"name":"m","tools":"decoy"},"tools":[{"name":"b"}]}"#;
        let s = ToolSet::parse(wrapped).unwrap();
        assert_eq!(s.tools[0].name(), Some("b"));

        let rpc = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"c"}]}}"#;
        let s = ToolSet::parse(rpc).unwrap();
        assert_eq!(s.shape, Shape::JsonRpc);
        assert_eq!(&*s.tools[0].raw, r#"{"name":"c"}"#);
    }

    #[test]
    fn repeated_tools_member_takes_the_last_like_the_parser() {
        let s = ToolSet::parse(br#"{"tools":[{"name":"old"}],"tools":[{"name":"new"}]}"#).unwrap();
        assert_eq!(s.tools.len(), 1);
        assert_eq!(s.tools[0].name(), Some("new"));
        assert_eq!(&*s.tools[0].raw, r#"{"name":"new"}"#);
    }

    #[test]
    fn refuses_what_is_not_a_tool_set() {
        assert!(matches!(
            ToolSet::parse(b"{\"server\":1}"),
            Err(ParseError::NotAToolSet(_))
        ));
        assert!(matches!(
            ToolSet::parse(b"{\"tools\":{}}"),
            Err(ParseError::NotAToolSet(_))
        ));
        assert!(matches!(
            ToolSet::parse(b"42"),
            Err(ParseError::NotAToolSet(_))
        ));
        assert!(matches!(
            ToolSet::parse(b"\xff[]"),
            Err(ParseError::NotUtf8(0))
        ));
        assert!(matches!(ToolSet::parse(b"[1,"), Err(ParseError::Json(_))));
    }
}
