//! The observation document, `toolmark-observation/1`: everything one observation of one remote
//! or one package produced, stored as a blob whose name is the `raw` member of the observation's
//! log entry.
//!
//! The format, member by member, is documented in `docs/observation-format.md`.
//!
//! What this module does not do: store the document (the index's blob store does) or decide anything
//! from it.

use crate::observe::{AuthChallenge, Observation, Via};
use serde::{Deserialize, Serialize};
use toolmark_toolset::ToolSet;
use toolmark_toolset::canon::{self, Numbers};
use toolmark_toolset::surface::RawSurface;

/// The format name in `v` of every document written: version 2 adds the `surface` and
/// `secondLook` members (and a remote's optional `deprecation` and `sunset`).
pub const FORMAT: &str = "toolmark-observation/2";

/// The first version, still read: documents without `surface` and `secondLook` (read as not
/// observed).
pub const FORMAT_V1: &str = "toolmark-observation/1";

/// Why bytes are not an observation document, or a document could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON of the document's shape.
    #[error("not an observation document: {0}")]
    Json(#[from] serde_json::Error),
    /// `v` is neither [`FORMAT`] nor [`FORMAT_V1`].
    #[error("observation document format {0:?} is not {FORMAT} or {FORMAT_V1}")]
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
    /// The remote URL exactly as published, or `npm:<name>` / `pypi:<name>` for a package (the
    /// entry's `subject.target`).
    pub endpoint: String,
    /// The remote's declared `type`, or the package's declared `transport.type`.
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

/// An observation document; see the module documentation for the format.
///
/// On the wire it is one flat object: the core members, then the members of its kind (a
/// remote's at the top level, as version 1 has always written them; a package's under
/// `package`), with `kind` written only for packages: a document without `kind` is a remote's.
///
/// `P` is how the `tools/list` pages are held: as text (`String`, the default: what is written,
/// and what every reader of a tool set decodes), or as [`RawPage`]s, checked but neither
/// unescaped nor copied until a tool set is asked for ([`Document::decode_raw_pages`]: an index
/// following a log reads a million documents and needs the set of few of them).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Wire<P>", bound(deserialize = "P: Deserialize<'de>"))]
pub struct Document<P = String> {
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
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// Raw `initialize` (or `server/discover`) result text.
    pub initialize: Option<String>,
    /// Raw `tools/list` result texts.
    pub pages: Vec<P>,
    /// The surface beyond `tools/list` and the Server Card, as read (`null` when not read;
    /// absent in version 1, read as `None`).
    pub surface: Option<RawSurface>,
    /// The tools listed a second time from a second client identity (`null` when none was
    /// made; absent in version 1, read as `None`).
    pub second_look: Option<DocSecondLook>,
    /// How the observation was made.
    pub via: DocVia,
}

/// The second look in a document ([`crate::observe::SecondLook`]), its status by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocSecondLook {
    /// The `clientInfo` it sent.
    pub client_info: serde_json::Value,
    /// The protocol version its handshake asked for.
    pub asked_version: String,
    /// How its listing ended (`ok`, or a status name as the observation's).
    pub status: String,
    /// Why, when not `ok`.
    pub detail: String,
    /// The protocol version the server negotiated with it.
    pub protocol_version: Option<String>,
    /// Raw `tools/list` result texts it read.
    pub pages: Vec<String>,
}

impl DocSecondLook {
    /// The tool set it read, assembled as the first listing's is; `None` when there are no
    /// pages or one does not parse.
    pub fn tool_set(&self) -> Option<ToolSet> {
        crate::observe::assemble(&self.pages)
    }
}

impl From<&crate::observe::SecondLook> for DocSecondLook {
    fn from(s: &crate::observe::SecondLook) -> DocSecondLook {
        DocSecondLook {
            client_info: s.client_info.clone(),
            asked_version: s.asked_version.clone(),
            status: s.status.name(),
            detail: s.detail.clone(),
            protocol_version: s.protocol_version.clone(),
            pages: s.pages.clone(),
        }
    }
}

/// A `tools/list` page as a stored document holds it: the JSON string, checked when the
/// document is decoded exactly as far as decoding it into a `String` checks it (its escapes,
/// UTF-8, and every `\u` escape a character: surrogates paired), but kept as written, so a
/// document whose tool set is not needed costs no unescaping and no copy per page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawPage(Box<str>);

impl RawPage {
    /// The page's text (the string unescaped); `None` only if it is not a JSON string, which
    /// decoding refused already.
    pub fn text(&self) -> Option<String> {
        serde_json::from_str(&self.0).ok()
    }

    /// The page as written in the document: a JSON string literal, quotes and escapes kept
    /// (for a cheap look for a member name before the page is unescaped).
    pub fn as_escaped(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for RawPage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawPage, D::Error> {
        use serde::de::Error;
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        let raw: Box<str> = raw.into();
        // A raw value is valid JSON, its strings' escapes well-formed and its bytes UTF-8;
        // what a `String` checks beyond that is that every `\u` escape is a character.
        if !raw.starts_with('"') {
            return Err(D::Error::invalid_type(
                serde::de::Unexpected::Other(&raw),
                &"a string",
            ));
        }
        if !unicode_escapes_are_characters(&raw) {
            return Err(D::Error::custom(
                "a page holds a \\u escape of a lone surrogate",
            ));
        }
        Ok(RawPage(raw))
    }
}

/// Whether every `\u` escape of the JSON string literal `raw` (its escapes well-formed) is a
/// character: no trailing surrogate alone, every leading one followed at once by a `\u`
/// escape of a trailing one — what serde_json requires of a string it unescapes.
fn unicode_escapes_are_characters(raw: &str) -> bool {
    // Most pages have no `\u` escape at all (a substring search, no walk).
    if !raw.contains("\\u") {
        return true;
    }
    let bytes = raw.as_bytes();
    let hex = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u16::from_str_radix(h, 16).ok())
    };
    let mut at = 0;
    while let Some(found) = raw[at..].find('\\') {
        let escape = at + found;
        if bytes.get(escape + 1) != Some(&b'u') {
            at = escape + 2;
            continue;
        }
        let Some(n) = hex(escape + 2) else {
            return false;
        };
        match n {
            0xDC00..=0xDFFF => return false,
            0xD800..=0xDBFF => {
                let paired = bytes.get(escape + 6..escape + 8) == Some(b"\\u")
                    && hex(escape + 8).is_some_and(|m| (0xDC00..=0xDFFF).contains(&m));
                if !paired {
                    return false;
                }
                at = escape + 12;
            }
            _ => at = escape + 6,
        }
    }
    true
}

/// The members particular to how an observation was made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "documents are read one at a time, and most are a remote's: boxing buys nothing"
)]
pub enum DocVia {
    /// A remote, dialled.
    Remote(DocRemote),
    /// A package, run in the sandbox.
    Package(DocPackage),
}

/// A remote's members (top level in the document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocRemote {
    /// The transport that answered or was tried last.
    pub transport: Option<String>,
    /// Every transport tried.
    pub attempts: Vec<DocAttempt>,
    /// Whether a session was issued.
    pub session: bool,
    /// The status of the `DELETE` that ended it; absent when none was answered (and in every
    /// document written before sessions were closed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_closed: Option<u16>,
    /// Whether any response was an SSE stream.
    pub sse_responses: bool,
    /// HTTP requests sent.
    pub requests: u32,
    /// Bytes received after decompression.
    pub bytes: u64,
    /// The address dialled.
    pub address: Option<String>,
    /// The auth challenge.
    pub auth: Option<AuthChallenge>,
    /// The first `Deprecation` response header (RFC 9745), as sent; absent when none was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<String>,
    /// The first `Sunset` response header (RFC 8594), as sent; absent when none was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sunset: Option<String>,
    /// The headers the registry declares for the remote, each sent or withheld (with why);
    /// absent when it declares none (and in every document written before they were dialled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared_headers: Vec<DocHeader>,
    /// URL template variables filled in to dial it, with the values used; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub url_variables: Vec<DocVariable>,
}

/// A declared header in a remote's document: its name, whether it was sent, and why not. Values
/// are never written, not even the literal ones sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocHeader {
    /// The name as declared.
    pub name: String,
    /// Whether the declaration marks it `isRequired`.
    pub required: bool,
    /// Whether it was sent (with its declared literal value).
    pub sent: bool,
    /// Why it was not sent ([`crate::registry::WithheldWhy::as_str`]); absent when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
}

/// A URL template variable filled in: its name and the value dialled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocVariable {
    /// The variable's name.
    pub name: String,
    /// The value used (a declared `default` or single `choice`; never secret).
    pub value: String,
}

/// A package's members (`package` in the document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocPackage {
    /// `npm:<name>@<version>` or `pypi:<name>==<version>` (the entry's `subject.package`).
    pub id: String,
    /// `sha256-<base64>` of the artifact as fetched, when one was.
    pub artifact: Option<String>,
    /// What the sandbox saw (absent in documents written before the sandbox existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<serde_json::Value>,
    /// What the package's registry says about the version
    /// ([`crate::registry_facts::RegistryFacts`]); absent when its metadata was not read (and
    /// in documents written before registry signals existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<crate::registry_facts::RegistryFacts>,
}

/// The `kind` of a package's document; a remote's document has no `kind`.
const PACKAGE_KIND: &str = "package";

/// The members of a remote's document beyond the core, every one required in it and refused in
/// a package's.
const REMOTE_MEMBERS: [&str; 8] = [
    "transport",
    "attempts",
    "session",
    "sseResponses",
    "requests",
    "bytes",
    "address",
    "auth",
];

/// The document as serde reads it: the core, `kind`, and the members of its kind
/// collected in `rest` (a remote's at the top level, so a remote's document is exactly what
/// version 1 wrote; a package's `package`). Members of no kind are ignored, as version 1 did.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire<P> {
    v: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    target: DocTarget,
    client: DocClient,
    started_at: String,
    elapsed_ms: u64,
    status: String,
    detail: String,
    protocol_version: Option<String>,
    initialize: Option<String>,
    pages: Vec<P>,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// The document as it is written: [`Wire`]'s members, borrowed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireOut<'a> {
    v: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    target: &'a DocTarget,
    client: &'a DocClient,
    started_at: &'a str,
    elapsed_ms: u64,
    status: &'a str,
    detail: &'a str,
    protocol_version: &'a Option<String>,
    initialize: &'a Option<String>,
    pages: &'a [String],
    /// Written by version 2 (`null` when not read), never by version 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    surface: Option<&'a Option<RawSurface>>,
    /// Written by version 2 (`null` when none was made), never by version 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    second_look: Option<&'a Option<DocSecondLook>>,
    #[serde(flatten)]
    remote: Option<&'a DocRemote>,
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<&'a DocPackage>,
}

impl Serialize for Document {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (kind, remote, package) = match &self.via {
            DocVia::Remote(r) => (None, Some(r), None),
            DocVia::Package(p) => (Some(PACKAGE_KIND), None, Some(p)),
        };
        WireOut {
            v: &self.v,
            kind,
            target: &self.target,
            client: &self.client,
            started_at: &self.started_at,
            elapsed_ms: self.elapsed_ms,
            status: &self.status,
            detail: &self.detail,
            protocol_version: &self.protocol_version,
            initialize: &self.initialize,
            pages: &self.pages,
            surface: (self.v != FORMAT_V1).then_some(&self.surface),
            second_look: (self.v != FORMAT_V1).then_some(&self.second_look),
            remote,
            package,
        }
        .serialize(serializer)
    }
}

impl<P> TryFrom<Wire<P>> for Document<P> {
    type Error = String;

    fn try_from(mut w: Wire<P>) -> Result<Document<P>, String> {
        // Version 2 always writes `surface`; version 1 never did (nor is one read from it).
        let surface = match w.rest.remove("surface") {
            _ if w.v == FORMAT_V1 => None,
            Some(s) => {
                Option::<RawSurface>::deserialize(s).map_err(|e| format!("`surface`: {e}"))?
            }
            None if w.v == FORMAT => return Err("a version 2 document has no `surface`".into()),
            None => None,
        };
        let second_look = match w.rest.remove("secondLook") {
            _ if w.v == FORMAT_V1 => None,
            Some(s) => {
                Option::<DocSecondLook>::deserialize(s).map_err(|e| format!("`secondLook`: {e}"))?
            }
            None if w.v == FORMAT => {
                return Err("a version 2 document has no `secondLook`".into());
            }
            None => None,
        };
        let via = match w.kind.as_deref() {
            None => {
                if let Some(missing) = REMOTE_MEMBERS.iter().find(|m| !w.rest.contains_key(**m)) {
                    return Err(format!("a remote's document has no `{missing}`"));
                }
                if w.rest.contains_key("package") {
                    return Err("a remote's document has a `package` member".to_owned());
                }
                let members = serde_json::Value::Object(std::mem::take(&mut w.rest));
                DocVia::Remote(
                    DocRemote::deserialize(members)
                        .map_err(|e| format!("a remote's members: {e}"))?,
                )
            }
            Some(PACKAGE_KIND) => {
                if let Some(member) = REMOTE_MEMBERS.iter().find(|m| w.rest.contains_key(**m)) {
                    return Err(format!("a package's document has a remote's `{member}`"));
                }
                let package = w
                    .rest
                    .remove("package")
                    .ok_or("a package's document has no `package`")?;
                DocVia::Package(
                    DocPackage::deserialize(package).map_err(|e| format!("`package`: {e}"))?,
                )
            }
            Some(other) => return Err(format!("unknown document kind {other:?}")),
        };
        Ok(Document {
            v: w.v,
            target: w.target,
            client: w.client,
            started_at: w.started_at,
            elapsed_ms: w.elapsed_ms,
            status: w.status,
            detail: w.detail,
            protocol_version: w.protocol_version,
            initialize: w.initialize,
            pages: w.pages,
            surface,
            second_look,
            via,
        })
    }
}

/// The declared headers of `declared`, sent ones first, in declaration order within each.
fn doc_headers(declared: &crate::registry::Declared) -> Vec<DocHeader> {
    let sent = declared.headers.iter().map(|h| DocHeader {
        name: h.name.clone(),
        required: h.required,
        sent: true,
        withheld: None,
    });
    let withheld = declared.withheld.iter().map(|w| DocHeader {
        name: w.name.clone(),
        required: w.required,
        sent: false,
        withheld: Some(w.why.as_str().to_owned()),
    });
    sent.chain(withheld).collect()
}

impl Document {
    /// The document of `obs`, an observation of `target`.
    pub fn new(target: DocTarget, obs: &Observation) -> Document {
        let via = match &obs.via {
            Via::Remote(d) => DocVia::Remote(DocRemote {
                transport: d.transport.map(|t| t.as_str().to_owned()),
                attempts: d
                    .attempts
                    .iter()
                    .map(|a| DocAttempt {
                        transport: a.transport.as_str().to_owned(),
                        status: a.status.name(),
                        detail: a.detail.clone(),
                    })
                    .collect(),
                session: d.session,
                session_closed: d.session_closed,
                sse_responses: d.sse_responses,
                requests: d.requests,
                bytes: d.bytes,
                address: d.address.map(|a| a.to_string()),
                auth: d.auth.clone(),
                deprecation: d.deprecation.clone(),
                sunset: d.sunset.clone(),
                declared_headers: doc_headers(&d.declared),
                url_variables: d
                    .declared
                    .variables
                    .iter()
                    .map(|(name, value)| DocVariable {
                        name: name.clone(),
                        value: value.clone(),
                    })
                    .collect(),
            }),
            Via::Package(p) => DocVia::Package(DocPackage {
                id: p.package.clone(),
                artifact: p.artifact.map(|a| a.to_string()),
                sandbox: p.sandbox.clone(),
                registry: p.registry.clone(),
            }),
        };
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
            protocol_version: obs.protocol_version.clone(),
            initialize: obs.initialize.clone(),
            pages: obs.pages.clone(),
            surface: obs.surface.clone(),
            second_look: obs.second.as_ref().map(DocSecondLook::from),
            via,
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

    /// Read a stored document: its format first (a later version is [`DocumentError::Format`]
    /// whatever its shape), then the core and the members of its kind, all required.
    pub fn decode(bytes: &[u8]) -> Result<Document, DocumentError> {
        decode(bytes)
    }

    /// The tool set, assembled from `pages` exactly as the crawler assembles it for its digests;
    /// `None` when there are no pages or one does not parse.
    pub fn tool_set(&self) -> Option<ToolSet> {
        crate::observe::assemble(&self.pages)
    }
}

impl Document<RawPage> {
    /// [`Document::decode`], every check the same (a document one refuses, the other refuses),
    /// with the pages kept as [`RawPage`]s: unescaped only by [`Document::<RawPage>::tool_set`].
    pub fn decode_raw_pages(bytes: &[u8]) -> Result<Document<RawPage>, DocumentError> {
        decode(bytes)
    }

    /// [`Document::tool_set`] of the pages unescaped now.
    pub fn tool_set(&self) -> Option<ToolSet> {
        let pages: Option<Vec<String>> = self.pages.iter().map(RawPage::text).collect();
        crate::observe::assemble(&pages?)
    }
}

impl<P> Document<P> {
    /// A remote's members, for the document of a remote.
    pub fn remote(&self) -> Option<&DocRemote> {
        match &self.via {
            DocVia::Remote(r) => Some(r),
            DocVia::Package(_) => None,
        }
    }
}

/// [`Document::decode`] with the pages held as `P`.
fn decode<P: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<Document<P>, DocumentError> {
    #[derive(Deserialize)]
    struct Version {
        v: String,
    }
    // One pass over a stored document (they are read by the million when an index follows a
    // log); only a document that does not decode is read again, for `v` alone, so a later
    // format is named whatever its shape.
    match serde_json::from_slice::<Document<P>>(bytes) {
        Ok(doc) if doc.v == FORMAT || doc.v == FORMAT_V1 => Ok(doc),
        Ok(doc) => Err(DocumentError::Format(doc.v)),
        Err(e) => {
            let Version { v } = serde_json::from_slice(bytes)?;
            if v != FORMAT && v != FORMAT_V1 {
                return Err(DocumentError::Format(v));
            }
            Err(e.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Attempt, Dialled, Sandboxed, Status, Transport};
    use std::time::{Duration, UNIX_EPOCH};
    use toolmark_toolset::Sri;

    fn observation() -> Observation {
        Observation {
            started: UNIX_EPOCH + Duration::from_secs(1_796_047_200),
            elapsed: Duration::from_millis(1234),
            status: Status::AuthRequired,
            detail: "401 from tools/list".into(),
            protocol_version: Some("2025-06-18".into()),
            initialize: Some("{\"protocolVersion\":\"2025-06-18\", \"a\":1,\"a\":2.50}".into()),
            pages: vec!["{\"tools\":[ {\"name\":\"x\",\"n\":1.0} ]}".into()],
            via: Via::Remote(Dialled {
                transport: Some(Transport::StreamableHttp),
                attempts: vec![Attempt {
                    transport: Transport::StreamableHttp,
                    status: Status::AuthRequired,
                    detail: "401".into(),
                }],
                session: true,
                session_closed: Some(200),
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
                    protected_resource: None,
                }),
                requests: 3,
                bytes: 999,
                address: Some("[2001:db8::1]:443".parse().unwrap()),
                deprecation: Some("@1798761600".into()),
                sunset: Some("Wed, 30 Jun 2027 23:59:59 GMT".into()),
                declared: Default::default(),
            }),
            surface: Some(RawSurface {
                prompts: Some(toolmark_toolset::surface::RawList {
                    status: "ok".into(),
                    detail: String::new(),
                    pages: vec!["{\"prompts\":[ {\"name\":\"p\"} ],\"ttlMs\":1.0}".into()],
                }),
                ..RawSurface::default()
            }),
            second: Some(crate::observe::SecondLook {
                client_info: serde_json::json!({"name": "mcp-client", "version": "1.0.0"}),
                asked_version: "2025-06-18".into(),
                status: Status::Ok,
                detail: String::new(),
                protocol_version: Some("2025-06-18".into()),
                pages: vec!["{\"tools\":[ {\"name\":\"x\",\"n\":2.0} ]}".into()],
            }),
        }
    }

    fn package_observation() -> Observation {
        Observation {
            status: Status::Ok,
            detail: String::new(),
            via: Via::Package(Sandboxed {
                package: "npm:@acme/weather@1.2.3".into(),
                artifact: Some(Sri::of(b"the tarball")),
                sandbox: Some(serde_json::json!({"complete": true, "findings": []})),
                registry: None,
            }),
            second: None,
            ..observation()
        }
    }

    fn package_target() -> DocTarget {
        DocTarget {
            server: "io.example/x".into(),
            endpoint: "npm:@acme/weather".into(),
            declared_transport: "stdio".into(),
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
        doc.v = "toolmark-observation/3".into();
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

    #[test]
    fn a_version_2_document_keeps_the_surface_and_the_sunset_headers_exactly() {
        let obs = observation();
        let bytes = Document::new(target(), &obs).encode().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["v"], "toolmark-observation/2");
        assert_eq!(v["sunset"], "Wed, 30 Jun 2027 23:59:59 GMT");
        assert_eq!(v["deprecation"], "@1798761600");
        assert_eq!(v["surface"]["resources"], serde_json::Value::Null);
        let back = Document::decode(&bytes).unwrap();
        assert_eq!(back.surface, obs.surface);
        assert_eq!(back.remote().unwrap().sunset, obs.dialled().unwrap().sunset);
        // Not read: `null`, still present.
        let none = Observation {
            surface: None,
            ..observation()
        };
        let bytes = Document::new(target(), &none).encode().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v.get("surface"), Some(&serde_json::Value::Null));
        let without = edited(&bytes, |m| {
            m.remove("surface");
        });
        assert!(
            Document::decode(&without)
                .unwrap_err()
                .to_string()
                .contains("no `surface`")
        );
    }

    #[test]
    fn a_version_2_document_keeps_the_second_look_exactly_and_null_when_none_was_made() {
        let obs = observation();
        let bytes = Document::new(target(), &obs).encode().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let second = &v["secondLook"];
        assert_eq!(second["clientInfo"]["name"], "mcp-client");
        assert_eq!(second["askedVersion"], "2025-06-18");
        assert_eq!(second["status"], "ok");
        assert_eq!(second["protocolVersion"], "2025-06-18");
        // The page as the server sent it, `2.0` and spaces kept.
        assert_eq!(
            second["pages"][0],
            "{\"tools\":[ {\"name\":\"x\",\"n\":2.0} ]}"
        );
        let back = Document::decode(&bytes).unwrap();
        let kept = back.second_look.as_ref().unwrap();
        assert_eq!(kept, &DocSecondLook::from(obs.second.as_ref().unwrap()));
        assert_eq!(
            &*kept.tool_set().unwrap().tools[0].raw,
            "{\"name\":\"x\",\"n\":2.0}"
        );
        // None made (a package's, a failed listing's): `null`, still present.
        let bytes = Document::new(package_target(), &package_observation())
            .encode()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v.get("secondLook"), Some(&serde_json::Value::Null));
        assert_eq!(Document::decode(&bytes).unwrap().second_look, None);
    }

    #[test]
    fn a_version_2_document_without_its_second_look_member_or_with_a_malformed_one_is_refused() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let without = edited(&bytes, |m| {
            m.remove("secondLook");
        });
        assert_eq!(
            refusal(&without),
            "not an observation document: a version 2 document has no `secondLook`"
        );
        let malformed = edited(&bytes, |m| {
            m["secondLook"]["pages"] = serde_json::json!("one");
        });
        assert!(
            refusal(&malformed).contains("`secondLook`: invalid type"),
            "{}",
            refusal(&malformed)
        );
    }

    #[test]
    fn a_version_1_document_reads_without_a_surface_and_writes_its_own_bytes_again() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let v1 = edited(&bytes, |m| {
            m.insert("v".into(), FORMAT_V1.into());
            m.remove("surface");
            m.remove("secondLook");
            m.remove("deprecation");
            m.remove("sunset");
        });
        let doc = Document::decode(&v1).unwrap();
        assert_eq!(doc.v, FORMAT_V1);
        assert_eq!(doc.surface, None);
        assert_eq!(doc.second_look, None);
        assert_eq!(doc.encode().unwrap(), v1);
    }

    #[test]
    fn a_remote_document_written_before_sessions_were_closed_reads() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["sessionClosed"], 200);
        let older = edited(&bytes, |m| {
            m.remove("sessionClosed");
        });
        let doc = Document::decode(&older).unwrap();
        assert_eq!(doc.remote().unwrap().session_closed, None);
        // And writes the same bytes again: the member is absent, not null.
        assert_eq!(doc.encode().unwrap(), older);
    }

    #[test]
    fn a_remote_document_has_no_kind_member() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert!(v.get("kind").is_none());
        assert!(v.get("package").is_none());
        assert_eq!(v["requests"], 3);
    }

    #[test]
    fn a_package_document_round_trips_with_kind_package() {
        let obs = package_observation();
        let doc = Document::new(package_target(), &obs);
        let bytes = doc.encode().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["kind"], "package");
        assert_eq!(v["package"]["id"], "npm:@acme/weather@1.2.3");
        assert_eq!(
            v["package"]["artifact"],
            Sri::of(b"the tarball").to_string()
        );
        assert_eq!(
            v["package"]["sandbox"]["complete"], true,
            "the sandbox's facts kept"
        );
        // None of a remote's members.
        for member in [
            "transport",
            "attempts",
            "session",
            "requests",
            "address",
            "auth",
        ] {
            assert!(v.get(member).is_none(), "{member}");
        }
        let back = Document::decode(&bytes).unwrap();
        assert_eq!(back, doc);
        assert!(back.remote().is_none());
        assert_eq!(back.tool_set().unwrap().tools.len(), 1);
    }

    /// `bytes` (a document) with `edit` applied to its JSON, as bytes again.
    fn edited(
        bytes: &[u8],
        edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
    ) -> Vec<u8> {
        let mut v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        edit(v.as_object_mut().unwrap());
        serde_json::to_vec(&v).unwrap()
    }

    fn refusal(bytes: &[u8]) -> String {
        Document::decode(bytes).unwrap_err().to_string()
    }

    #[test]
    fn a_remote_document_with_a_malformed_member_is_refused() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let bad = edited(&bytes, |m| {
            m.insert("requests".into(), serde_json::json!("three"));
        });
        let err = refusal(&bad);
        assert!(err.contains("a remote's members: invalid type"), "{err}");
    }

    #[test]
    fn a_remote_document_missing_a_member_names_it() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        for member in REMOTE_MEMBERS {
            let bad = edited(&bytes, |m| {
                m.remove(member);
            });
            assert_eq!(
                refusal(&bad),
                format!("not an observation document: a remote's document has no `{member}`")
            );
        }
    }

    #[test]
    fn a_remote_document_with_a_package_member_is_refused() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let bad = edited(&bytes, |m| {
            m.insert("package".into(), serde_json::Value::Null);
        });
        assert!(refusal(&bad).contains("has a `package` member"));
    }

    #[test]
    fn a_package_document_with_a_remotes_member_is_refused() {
        let bytes = Document::new(package_target(), &package_observation())
            .encode()
            .unwrap();
        let bad = edited(&bytes, |m| {
            m.insert("address".into(), serde_json::Value::Null);
        });
        assert!(refusal(&bad).contains("has a remote's `address`"));
    }

    #[test]
    fn refuses_a_kind_it_does_not_know_and_a_kind_without_its_members() {
        let bytes = Document::new(package_target(), &package_observation())
            .encode()
            .unwrap();
        for kind in ["oci", "remote"] {
            let bad = edited(&bytes, |m| {
                m.insert("kind".into(), serde_json::json!(kind));
            });
            assert!(refusal(&bad).contains("unknown document kind"), "{kind}");
        }
        let bad = edited(&bytes, |m| {
            m.remove("package");
        });
        assert!(refusal(&bad).contains("has no `package`"));
        let bad = edited(&bytes, |m| {
            m.insert("package".into(), serde_json::Value::Null);
        });
        assert!(refusal(&bad).contains("`package`: invalid type: null"));
    }

    #[test]
    fn raw_pages_decode_to_the_same_document_and_tool_set() {
        for doc in [
            Document::new(target(), &observation()),
            Document::new(package_target(), &package_observation()),
        ] {
            let bytes = doc.encode().unwrap();
            let raw = Document::decode_raw_pages(&bytes).unwrap();
            let pages: Vec<String> = raw.pages.iter().map(|p| p.text().unwrap()).collect();
            assert_eq!(pages, doc.pages);
            assert_eq!(raw.tool_set(), doc.tool_set());
            assert!(raw.tool_set().is_some());
            assert_eq!((raw.via, raw.target), (doc.via, doc.target));
        }
    }

    /// Every document `decode` refuses for its pages, `decode_raw_pages` refuses too: a page that
    /// is not a string, a malformed escape, an escape of a lone surrogate (leading or trailing);
    /// paired surrogates and escaped backslashes before a `u` are characters.
    #[test]
    fn raw_pages_refuse_what_a_string_refuses() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        let page = "\"pages\":[\"";
        assert!(text.contains(page));
        let with = |inserted: &str| text.replacen(page, &format!("{page}{inserted}"), 1);
        for (inserted, refused) in [
            ("\\ud800", true),
            ("\\udc00", true),
            ("\\ud800x", true),
            ("\\ud800\\n", true),
            ("\\ud800\\u0041", true),
            ("\\ud800\\ud800", true),
            ("\\uzzzz", true),
            ("\\q", true),
            ("\\ud83d\\ude00", false),
            ("\\u00e9\\u0000", false),
            ("\\\\ud800", false),
            ("\\\\\\ud800", true),
        ] {
            let bytes = with(inserted);
            let eager = Document::decode(bytes.as_bytes());
            let raw = Document::decode_raw_pages(bytes.as_bytes());
            assert_eq!(eager.is_err(), refused, "{inserted}: {eager:?}");
            assert_eq!(raw.is_err(), refused, "{inserted}: {raw:?}");
            if let (Ok(eager), Ok(raw)) = (eager, raw) {
                assert_eq!(raw.pages[0].text().as_ref(), Some(&eager.pages[0]));
            }
        }
        let not_a_string = text.replacen(page, "\"pages\":[1,\"", 1);
        assert!(Document::decode(not_a_string.as_bytes()).is_err());
        assert!(Document::decode_raw_pages(not_a_string.as_bytes()).is_err());
    }

    #[test]
    fn a_later_format_is_named_whatever_its_shape() {
        assert!(matches!(
            Document::decode(b"{\"v\":\"toolmark-observation/3\",\"other\":1}"),
            Err(DocumentError::Format(v)) if v == "toolmark-observation/3"
        ));
    }

    #[test]
    fn members_of_no_kind_are_ignored_as_in_version_1() {
        let bytes = Document::new(target(), &observation()).encode().unwrap();
        let extra = edited(&bytes, |m| {
            m.insert("comment".into(), serde_json::json!("added by hand"));
        });
        assert_eq!(
            Document::decode(&extra).unwrap(),
            Document::decode(&bytes).unwrap()
        );
    }
}
