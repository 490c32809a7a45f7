//! The observation document, `toolmark-observation/1`: everything one observation of one remote
//! produced, stored as a blob whose name is the `raw` member of the observation's log entry.
//!
//! The format, member by member, is documented in `docs/observation-format.md`.
//!
//! What this module does not do: store the document (the index's blob store does) or decide anything
//! from it.

use crate::observe::{AuthChallenge, Observation, Status};
use serde::{Deserialize, Serialize};
use toolmark_toolset::ToolSet;
use toolmark_toolset::canon::{self, Numbers};

/// The format name in `v`.
pub const FORMAT: &str = "toolmark-observation/1";

/// Why bytes are not an observation document, or a document could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON of the document's shape.
    #[error("not an observation document: {0}")]
    Json(#[from] serde_json::Error),
    /// `v` is not [`FORMAT`].
    #[error("observation document format {0:?} is not {FORMAT}")]
    Format(String),
    /// The serialisation could not be re-read for canonicalisation (a bug, or a value nested
    /// deeper than `toolmark_toolset::json::MAX_DEPTH`).
    #[error("observation document cannot be canonicalised: {0}")]
    Canon(String),
}

/// What was observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocTarget {
    /// The registry server name.
    pub server: String,
    /// The remote URL exactly as published.
    pub endpoint: String,
    /// The remote's declared `type`.
    pub declared_transport: String,
}

/// The client identity sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocClient {
    /// `clientInfo`.
    pub client_info: serde_json::Value,
    /// Client `capabilities`.
    pub capabilities: serde_json::Value,
}

/// One transport attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocAttempt {
    /// `stateless`, `streamable-http` or `sse`.
    pub transport: String,
    /// How it ended.
    pub status: String,
    /// Why.
    pub detail: String,
}

/// An auth challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocAuth {
    /// 401, or 403 with a challenge.
    pub http_status: u16,
    /// The request that got it.
    pub method: String,
    /// The raw `WWW-Authenticate` header.
    pub www_authenticate: Option<String>,
    /// Its scheme.
    pub scheme: Option<String>,
    /// RFC 9728 `resource_metadata`.
    pub resource_metadata: Option<String>,
    /// RFC 6750 `scope`.
    pub scope: Option<String>,
    /// RFC 6750 `error`.
    pub error: Option<String>,
    /// `realm`.
    pub realm: Option<String>,
}

impl From<&AuthChallenge> for DocAuth {
    fn from(a: &AuthChallenge) -> Self {
        DocAuth {
            http_status: a.http_status,
            method: a.method.clone(),
            www_authenticate: a.www_authenticate.clone(),
            scheme: a.scheme.clone(),
            resource_metadata: a.resource_metadata.clone(),
            scope: a.scope.clone(),
            error: a.error.clone(),
            realm: a.realm.clone(),
        }
    }
}

/// An observation document; see the module documentation for the format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// [`FORMAT`].
    pub v: String,
    /// What was observed.
    pub target: DocTarget,
    /// The client identity sent.
    pub client: DocClient,
    /// UTC start, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_at: String,
    /// Duration in milliseconds.
    pub elapsed_ms: u64,
    /// The named outcome.
    pub status: String,
    /// The full reason.
    pub detail: String,
    /// The transport that answered or was tried last.
    pub transport: Option<String>,
    /// Every transport tried.
    pub attempts: Vec<DocAttempt>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// Whether a session was issued.
    pub session: bool,
    /// Whether any response was an SSE stream.
    pub sse_responses: bool,
    /// HTTP requests sent.
    pub requests: u32,
    /// Bytes received after decompression.
    pub bytes: u64,
    /// The address dialled.
    pub address: Option<String>,
    /// Raw `initialize` (or `server/discover`) result text.
    pub initialize: Option<String>,
    /// Raw `tools/list` result texts.
    pub pages: Vec<String>,
    /// The auth challenge.
    pub auth: Option<DocAuth>,
}

impl Document {
    /// The document of `obs`, an observation of `target`.
    pub fn new(target: DocTarget, obs: &Observation) -> Document {
        Document {
            v: FORMAT.to_owned(),
            target,
            client: DocClient {
                client_info: crate::observe::client_info(),
                capabilities: crate::observe::client_capabilities(),
            },
            started_at: crate::time::utc(obs.started),
            elapsed_ms: u64::try_from(obs.elapsed.as_millis()).unwrap_or(u64::MAX),
            status: obs.status.name(),
            detail: obs.detail.clone(),
            transport: obs.transport.map(|t| t.as_str().to_owned()),
            attempts: obs
                .attempts
                .iter()
                .map(|a| DocAttempt {
                    transport: a.transport.as_str().to_owned(),
                    status: a.status.name(),
                    detail: a.detail.clone(),
                })
                .collect(),
            protocol_version: obs.protocol_version.clone(),
            session: obs.session,
            sse_responses: obs.sse_responses,
            requests: obs.requests,
            bytes: obs.bytes,
            address: obs.address.map(|a| a.to_string()),
            initialize: obs.initialize.clone(),
            pages: obs.pages.clone(),
            auth: obs.auth.as_ref().map(DocAuth::from),
        }
    }

    /// The canonical bytes (RFC 8785) that are stored and hashed.
    pub fn encode(&self) -> Result<Vec<u8>, DocumentError> {
        let text = serde_json::to_string(self)?;
        let value = toolmark_toolset::json::parse(&text)
            .map_err(|e| DocumentError::Canon(e.to_string()))?;
        // The ECMAScript profile accepts every value; integers here are far below 2^53.
        canon::to_vec(&value, Numbers::Ecmascript).map_err(|e| DocumentError::Canon(e.to_string()))
    }

    /// Read a stored document.
    pub fn decode(bytes: &[u8]) -> Result<Document, DocumentError> {
        let doc: Document = serde_json::from_slice(bytes)?;
        if doc.v != FORMAT {
            return Err(DocumentError::Format(doc.v));
        }
        Ok(doc)
    }

    /// The tool set, assembled from `pages` exactly as the crawler assembles it for its digests;
    /// `None` when there are no pages or one does not parse.
    pub fn tool_set(&self) -> Option<ToolSet> {
        let obs = Observation {
            status: Status::Ok,
            pages: self.pages.clone(),
            ..Observation::start()
        };
        obs.tool_set()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Attempt, Transport};
    use std::time::{Duration, UNIX_EPOCH};

    fn observation() -> Observation {
        Observation {
            started: UNIX_EPOCH + Duration::from_secs(1_796_047_200),
            elapsed: Duration::from_millis(1234),
            status: Status::AuthRequired,
            detail: "401 from tools/list".into(),
            transport: Some(Transport::StreamableHttp),
            attempts: vec![Attempt {
                transport: Transport::StreamableHttp,
                status: Status::AuthRequired,
                detail: "401".into(),
            }],
            protocol_version: Some("2025-06-18".into()),
            session: true,
            initialize: Some("{\"protocolVersion\":\"2025-06-18\", \"a\":1,\"a\":2.50}".into()),
            pages: vec!["{\"tools\":[ {\"name\":\"x\",\"n\":1.0} ]}".into()],
            sse_responses: true,
            auth: Some(AuthChallenge {
                http_status: 401,
                method: "tools/list".into(),
                www_authenticate: Some("Bearer realm=\"mcp\", scope=\"read\"".into()),
                scheme: Some("Bearer".into()),
                resource_metadata: None,
                scope: Some("read".into()),
                error: None,
                realm: Some("mcp".into()),
            }),
            requests: 3,
            bytes: 999,
            address: Some("[2001:db8::1]:443".parse().unwrap()),
        }
    }

    fn target() -> DocTarget {
        DocTarget {
            server: "io.example/x".into(),
            endpoint: "https://x.example/mcp".into(),
            declared_transport: "streamable-http".into(),
        }
    }

    #[test]
    fn canonical_round_trip_keeps_raw_texts_exactly() {
        let obs = observation();
        let doc = Document::new(target(), &obs);
        let bytes = doc.encode().unwrap();
        // Canonical: re-canonicalising changes nothing, and encoding is deterministic.
        let text = std::str::from_utf8(&bytes).unwrap();
        let reparsed = toolmark_toolset::json::parse(text).unwrap();
        assert_eq!(
            canon::to_vec(&reparsed, Numbers::Ecmascript).unwrap(),
            bytes
        );
        assert_eq!(Document::new(target(), &obs).encode().unwrap(), bytes);
        assert!(text.starts_with("{\"address\":\"[2001:db8::1]:443\",\"attempts\":"));
        let back = Document::decode(&bytes).unwrap();
        assert_eq!(back, doc);
        assert_eq!(back.initialize, obs.initialize);
        assert_eq!(back.pages, obs.pages);
        assert_eq!(back.started_at, "2026-11-30T14:00:00Z");
        assert_eq!(back.elapsed_ms, 1234);
        assert_eq!(back.client.capabilities, serde_json::json!({}));
        assert_eq!(back.client.client_info["name"], "toolmark");
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v["auth"]["wwwAuthenticate"],
            "Bearer realm=\"mcp\", scope=\"read\""
        );
        assert_eq!(v["auth"]["resourceMetadata"], serde_json::Value::Null);
        assert_eq!(v["target"]["declaredTransport"], "streamable-http");
        assert_eq!(v["sseResponses"], true);
        let set = back.tool_set().unwrap();
        assert_eq!(&*set.tools[0].raw, "{\"name\":\"x\",\"n\":1.0}");
    }

    #[test]
    fn refuses_other_formats() {
        let mut doc = Document::new(target(), &observation());
        doc.v = "toolmark-observation/2".into();
        let bytes = doc.encode().unwrap();
        assert!(matches!(
            Document::decode(&bytes),
            Err(DocumentError::Format(_))
        ));
        assert!(matches!(
            Document::decode(b"{\"v\":1}"),
            Err(DocumentError::Json(_))
        ));
    }
}
