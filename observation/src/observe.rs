//! What one observation of one target produced: a named status, its detail, and everything the
//! server sent that a later reader may need (raw `initialize` result, raw `tools/list` pages,
//! the auth challenge), plus the fixed client identity it was sent.

use std::fmt;
use std::time::{Duration, SystemTime};

use toolmark_toolset::surface::KindDigest;
use toolmark_toolset::{Sri, ToolSet};

/// The `clientInfo` every observation sends. Fixed, because servers may answer differently to
/// different clients; recorded with every observation.
pub const CLIENT_NAME: &str = "toolmark";
/// The crawler's version in `clientInfo`.
pub const CLIENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `clientInfo` object sent in `initialize` (and in the 2026-07-28 request `_meta`).
pub fn client_info() -> serde_json::Value {
    serde_json::json!({
        "name": CLIENT_NAME,
        "version": CLIENT_VERSION,
        "title": "toolmark transparency-log crawler (read-only: initialize + tools/list)",
    })
}

/// The second look's client unless the operator names another (`crawl.second_client`): a
/// neutral name and version that do not name toolmark, as a generic MCP client's would.
pub const SECOND_CLIENT: &str = "mcp-client/1.0.0";

/// Who the second look says it is ([`SecondLook`]): `clientInfo` `{"name","version"}` and the
/// `User-Agent` `name/version`, written `name/version` (`crawl.second_client`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondClient {
    name: String,
    version: String,
}

/// Why a `crawl.second_client` value is not a second client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecondClientError {
    /// Not `name/version`, each part 1–64 visible ASCII characters without a space or `/`
    /// (what a `User-Agent` product token holds).
    #[error("{0:?} is not name/version (each 1-64 visible ASCII characters, no space or '/')")]
    Form(String),
    /// It names toolmark: the second look is to be seen as another client.
    #[error("{0:?} names toolmark; the second look must be seen as another client")]
    NamesToolmark(String),
}

/// Longest name or version of a [`SecondClient`]: real clients' are a few words
/// (`claude-ai/0.1.0`, `mcp-remote/0.1.29`); a product token needs no more.
pub const MAX_SECOND_CLIENT_PART: usize = 64;

impl SecondClient {
    /// The `clientInfo` object it sends.
    pub fn client_info(&self) -> serde_json::Value {
        serde_json::json!({"name": self.name, "version": self.version})
    }
}

impl Default for SecondClient {
    fn default() -> Self {
        SECOND_CLIENT
            .parse()
            .expect("SECOND_CLIENT is name/version")
    }
}

impl std::str::FromStr for SecondClient {
    type Err = SecondClientError;

    fn from_str(s: &str) -> Result<SecondClient, SecondClientError> {
        let part = |p: &str| {
            (1..=MAX_SECOND_CLIENT_PART).contains(&p.len())
                && p.bytes().all(|b| b.is_ascii_graphic() && b != b'/')
        };
        let (name, version) = s
            .split_once('/')
            .filter(|(n, v)| part(n) && part(v))
            .ok_or_else(|| SecondClientError::Form(s.to_owned()))?;
        if s.to_ascii_lowercase().contains(CLIENT_NAME) {
            return Err(SecondClientError::NamesToolmark(s.to_owned()));
        }
        Ok(SecondClient {
            name: name.to_owned(),
            version: version.to_owned(),
        })
    }
}

impl fmt::Display for SecondClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.name, self.version)
    }
}

/// The `capabilities` every observation declares: none. server-everything lists 13 tools to a
/// client with `{}` and 16 to one declaring roots/sampling/elicitation; declaring nothing asks
/// for the baseline every client gets and never invites server→client requests.
pub fn client_capabilities() -> serde_json::Value {
    serde_json::json!({})
}

/// How an observation ended. Every outcome has a name; none is an error of the crawler itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Status {
    /// The tool set was read completely.
    Ok,
    /// The server answered 401 (or 403 with a Bearer challenge): it wants credentials.
    AuthRequired,
    /// Any other HTTP status that ended the exchange.
    Http(u16),
    /// A timeout: connect, request, idle read or the observation deadline.
    Timeout,
    /// The host name did not resolve.
    Dns,
    /// The TCP connection failed (refused, reset, unreachable).
    Connect,
    /// The TLS handshake or certificate check failed.
    Tls,
    /// The server broke the protocol: not JSON, not UTF-8, wrong shape, JSON-RPC error,
    /// duplicate members, bad SSE, no answer for our id, no transport worked…
    Protocol,
    /// A size limit was hit (response, tool set, tools, compression ratio, SSE line).
    TooLarge,
    /// Tools were read but the listing did not finish (page cap, repeated cursor).
    Partial,
    /// The host is or resolves to an address we do not dial (private, loopback, link-local…).
    BlockedAddress,
    /// The server answered with a redirect; redirects are never followed.
    Redirect,
    /// The URL is not dialable as given (no host, userinfo, bad port, wrong scheme).
    BadUrl,
    /// The target was listed but not dialled; the reason id (`templated-url`,
    /// `header-required`, `cleartext-url`, `unsupported-transport`, `invalid-url`).
    Skipped(&'static str),
    /// A package's run that ended without its tools, by the sandbox's name for it
    /// (`install-failed`, `no-entry-point`, `exited`, `out-of-memory`, `sandbox-error`,
    /// `sandbox-unavailable`, `not-found`, `no-wheel`).
    Package(&'static str),
}

impl Status {
    /// The status name written to the log, the index and reports.
    pub fn name(&self) -> String {
        match self {
            Status::Ok => "ok".into(),
            Status::AuthRequired => "auth-required".into(),
            Status::Http(code) => format!("http-{code}"),
            Status::Timeout => "timeout".into(),
            Status::Dns => "dns".into(),
            Status::Connect => "connect".into(),
            Status::Tls => "tls".into(),
            Status::Protocol => "protocol".into(),
            Status::TooLarge => "too-large".into(),
            Status::Partial => "partial".into(),
            Status::BlockedAddress => "blocked-address".into(),
            Status::Redirect => "redirect".into(),
            Status::BadUrl => "bad-url".into(),
            Status::Skipped(reason) | Status::Package(reason) => (*reason).into(),
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Which protocol actually answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// 2026-07-28 streamable HTTP without sessions (`server/discover`).
    Stateless,
    /// Streamable HTTP, 2025-03-26 … 2025-11-25 (`initialize`, optional session).
    StreamableHttp,
    /// The deprecated HTTP+SSE transport of 2024-11-05.
    Sse,
}

impl Transport {
    /// The transport named by [`Transport::as_str`].
    pub fn parse(name: &str) -> Option<Transport> {
        match name {
            "stateless" => Some(Transport::Stateless),
            "streamable-http" => Some(Transport::StreamableHttp),
            "sse" => Some(Transport::Sse),
            _ => None,
        }
    }

    /// Stable name: `stateless`, `streamable-http` or `sse`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stateless => "stateless",
            Transport::StreamableHttp => "streamable-http",
            Transport::Sse => "sse",
        }
    }
}

/// What a server said when it asked for credentials; stored as is in the observation document
/// (`auth`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthChallenge {
    /// The HTTP status (401, or 403 with a challenge).
    pub http_status: u16,
    /// Which request got it (`initialize`, `tools/list`, `server/discover`, `GET sse`).
    pub method: String,
    /// The raw `WWW-Authenticate` header, at most the crawler's `limits::MAX_HEADER_KEPT` bytes.
    pub www_authenticate: Option<String>,
    /// Its auth scheme (`Bearer`, …).
    pub scheme: Option<String>,
    /// `resource_metadata` (RFC 9728): the protected-resource metadata URL.
    pub resource_metadata: Option<String>,
    /// `scope` (RFC 6750).
    pub scope: Option<String>,
    /// `error` (RFC 6750), e.g. `invalid_token`, `insufficient_scope`.
    pub error: Option<String>,
    /// `realm`.
    pub realm: Option<String>,
    /// The protected-resource metadata (RFC 9728) fetched for this challenge; absent when none
    /// was fetched (and in every document written before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected_resource: Option<ProtectedResource>,
}

/// What one unauthenticated `GET` of a protected resource's metadata (RFC 9728) found: where it
/// was fetched from, how it ended, and the members that say who may grant access.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProtectedResource {
    /// The URL fetched: the challenge's `resource_metadata`, else the well-known URL for the
    /// endpoint (RFC 9728 §3.1).
    pub url: String,
    /// Whether `url` came from the challenge (`true`) or is the well-known fallback.
    pub from_challenge: bool,
    /// The HTTP status, when one answered.
    pub http_status: Option<u16>,
    /// Why nothing usable was read (blocked address, timeout, not JSON, …); `None` when the
    /// metadata was read.
    pub error: Option<String>,
    /// `resource`: the resource identifier the metadata is for.
    pub resource: Option<String>,
    /// `authorization_servers`: issuer URLs of the authorization servers that grant access.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`.
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    /// `bearer_methods_supported`.
    #[serde(default)]
    pub bearer_methods_supported: Vec<String>,
}

/// One transport attempt of an observation, in the order tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The transport tried.
    pub transport: Transport,
    /// How it ended (`ok` for the one that answered).
    pub status: Status,
    /// Why.
    pub detail: String,
}

/// Everything one observation of one target produced: the core every observer fills, and
/// [`Via`], what was particular to how it was made.
///
/// The target itself is not part of it: observers are handed targets and return an observation
/// for each (the crawler's `TargetOutcome` pairs them), so the target is never copied into what
/// the observer writes.
#[derive(Debug, Clone)]
pub struct Observation {
    /// When it started.
    pub started: SystemTime,
    /// How long it took.
    pub elapsed: Duration,
    /// How it ended.
    pub status: Status,
    /// A short human-readable reason (empty for `ok`).
    pub detail: String,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// The raw JSON text of the `initialize` (or `server/discover`) result.
    pub initialize: Option<String>,
    /// The raw JSON text of each `tools/list` result, in order.
    pub pages: Vec<String>,
    /// The surface beyond `tools/list` read in the same session (prompts, resources,
    /// templates, `ui://` pages) and the Server Card; `None` when it was not read (a failed
    /// listing, a crawl with the surface off, a document written before it).
    pub surface: Option<toolmark_toolset::surface::RawSurface>,
    /// The tools listed a second time, in a separate session from a second client identity
    /// (cloaking: a server serving toolmark one tool set and other clients another); `None`
    /// when none was made (a failed first listing, a package, a crawl with the second look
    /// off, a document written before it).
    pub second: Option<SecondLook>,
    /// How it was made.
    pub via: Via,
}

/// How an observation was made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "a crawl holds at most a few hundred observations at once, and most are a remote's: boxing buys nothing"
)]
pub enum Via {
    /// A remote endpoint dialled over HTTP by the crawler.
    Remote(Dialled),
    /// A registry package run in the sandbox (issue #14 supplies the observer).
    Package(Sandboxed),
}

/// What was particular to dialling a remote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dialled {
    /// The transport that answered (or the last one tried).
    pub transport: Option<Transport>,
    /// Every transport tried, in order, with its outcome.
    pub attempts: Vec<Attempt>,
    /// Whether the server issued an `Mcp-Session-Id` (or an SSE session endpoint).
    pub session: bool,
    /// The HTTP status of the `DELETE` that ended an issued `Mcp-Session-Id` after the
    /// listing; `None` when no session was issued or the `DELETE` got no answer.
    pub session_closed: Option<u16>,
    /// Whether any response came as an SSE stream (rather than one JSON body).
    pub sse_responses: bool,
    /// The challenge of an `auth-required` outcome.
    pub auth: Option<AuthChallenge>,
    /// HTTP requests sent.
    pub requests: u32,
    /// Bytes received after decompression.
    pub bytes: u64,
    /// The address dialled (after the SSRF check).
    pub address: Option<std::net::SocketAddr>,
    /// The first `Deprecation` response header the server sent (RFC 9745), as sent (at most
    /// `MAX_HEADER_KEPT` bytes).
    pub deprecation: Option<String>,
    /// The first `Sunset` response header (RFC 8594), as sent.
    pub sunset: Option<String>,
    /// What the registry's declaration made it send: URL template values filled in, declared
    /// headers sent and withheld (empty for a remote that declares none).
    pub declared: crate::registry::Declared,
}

/// What was particular to running a package. The sandbox's own facts (what the package tried to
/// read, dial or spawn) are the next issue's to add; the document format keeps room for them
/// (new members of `package`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandboxed {
    /// `npm:<name>@<version>` or `pypi:<name>==<version>`: the log subject's `package`.
    pub package: String,
    /// The digest of the artifact as fetched (tarball, wheel), when one was fetched.
    pub artifact: Option<Sri>,
    /// What the sandbox saw, as it reports it (`toolmark_sandbox::observe::Report::facts`:
    /// the runtime, the phases' behaviour and completeness, the calls, the findings); kept
    /// whole in the document's `package.sandbox`.
    pub sandbox: Option<serde_json::Value>,
    /// What the package's registry says about the version (provenance, publisher, install
    /// scripts, dependencies, …), when its metadata was read; kept in the document's
    /// `package.registry`.
    pub registry: Option<crate::registry_facts::RegistryFacts>,
}

impl Observation {
    /// A fresh observation made `via`, started now, that has not produced anything yet.
    pub fn start(via: Via) -> Self {
        Observation {
            started: SystemTime::now(),
            elapsed: Duration::ZERO,
            status: Status::Protocol,
            detail: String::new(),
            protocol_version: None,
            initialize: None,
            pages: Vec::new(),
            surface: None,
            second: None,
            via,
        }
    }

    /// A fresh observation of a remote ([`Observation::start`] with nothing dialled yet).
    pub fn remote() -> Self {
        Observation::start(Via::Remote(Dialled::default()))
    }

    /// What dialling found, for an observation of a remote.
    pub fn dialled(&self) -> Option<&Dialled> {
        match &self.via {
            Via::Remote(d) => Some(d),
            Via::Package(_) => None,
        }
    }

    /// [`Observation::dialled`], to fill in.
    pub fn dialled_mut(&mut self) -> Option<&mut Dialled> {
        match &mut self.via {
            Via::Remote(d) => Some(d),
            Via::Package(_) => None,
        }
    }

    /// The transport that answered a remote (`None` for a package, or when none answered).
    pub fn transport(&self) -> Option<Transport> {
        self.dialled().and_then(|d| d.transport)
    }

    /// The tool set read, assembled from every page in order, when any page was read.
    ///
    /// Each page is a `tools/list` result; the assembled document is `{"tools":[…]}` holding
    /// every page's entries byte for byte, so both digests see exactly what was served.
    pub fn tool_set(&self) -> Option<ToolSet> {
        assemble(&self.pages)
    }

    /// The digests of a completely read tool set (`ok` only): MTL/1 (or its error code), the
    /// full digest and the tool count.
    pub fn digests(&self) -> Option<Digests> {
        if self.status != Status::Ok {
            return None;
        }
        let set = self.tool_set()?;
        let mtl1 =
            toolmark_toolset::mtl1::tool_set_digest(&set).map_err(|e| e.code.as_str().to_owned());
        Some(Digests {
            mtl1,
            full: toolmark_toolset::full::digest(&set),
            tool_index: toolmark_toolset::full::ToolIndex::of(&set).digest,
            tools: set.tools.len(),
        })
    }
}

/// The tool set of `pages` (each a `tools/list` result), when there is any page and every page
/// parses: the document `{"tools":[…]}` holding every page's entries byte for byte, so both
/// digests see exactly what was served.
pub fn assemble(pages: &[String]) -> Option<ToolSet> {
    if pages.is_empty() {
        return None;
    }
    let mut raw: Vec<Box<str>> = Vec::new();
    for page in pages {
        let set = ToolSet::parse(page.as_bytes()).ok()?;
        raw.extend(set.tools.into_iter().map(|t| t.raw));
    }
    ToolSet::of_raw(&raw).ok()
}

/// The second look at a remote's tools: a separate session, after a complete listing, from
/// another client identity (another `clientInfo`, another protocol version where the
/// transport has one, from the second source address where the operator configures one),
/// listing the tools only. What it read is kept as the first listing's is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondLook {
    /// The `clientInfo` it sent.
    pub client_info: serde_json::Value,
    /// The protocol version its handshake asked for (`2026-07-28` for a `server/discover`).
    pub asked_version: String,
    /// How its listing ended (`ok`: read completely).
    pub status: Status,
    /// Why, when not `ok`.
    pub detail: String,
    /// The protocol version the server negotiated with it.
    pub protocol_version: Option<String>,
    /// The raw JSON text of each `tools/list` result it read, in order.
    pub pages: Vec<String>,
}

impl SecondLook {
    /// The tool set it read ([`assemble`]), when any page was read.
    pub fn tool_set(&self) -> Option<ToolSet> {
        assemble(&self.pages)
    }

    /// What an entry says of it, in the shape of a surface kind: its tools' `toolmark/1` full
    /// digest (the one the first listing's `full` is) and their number when it listed
    /// completely, else the status it ended with (`protocol` when its pages do not parse). A
    /// digest that differs from the first listing's `full` is the cloaking signal.
    pub fn digest(&self) -> KindDigest {
        if self.status != Status::Ok {
            return KindDigest::Unread(self.status.name());
        }
        match self.tool_set() {
            Some(set) => KindDigest::Read {
                digest: toolmark_toolset::full::digest(&set),
                count: set.tools.len() as u64,
            },
            None => KindDigest::Unread(Status::Protocol.name()),
        }
    }

    /// Heap bytes held of what the server sent (for memory budgets), by capacity.
    pub fn held_bytes(&self) -> usize {
        self.pages
            .iter()
            .map(String::capacity)
            .sum::<usize>()
            .saturating_add(self.detail.capacity())
    }
}

/// The digests of one observed tool set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digests {
    /// The MTL/1 digest, or the MTL/1 error code when the set is not digestible under MTL/1.
    pub mtl1: Result<Sri, String>,
    /// The `toolmark/1` full digest.
    pub full: Sri,
    /// The digest of the tools' own `toolmark-tool/1` digests (the entry's `toolIndex`).
    pub tool_index: Sri,
    /// Number of tools.
    pub tools: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGES: [&str; 2] = [
        r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}"#,
        r#"{"tools":[{"name":"b","description":"B.","inputSchema":{"type":"object"}}]}"#,
    ];

    fn second(status: Status, pages: &[&str]) -> SecondLook {
        SecondLook {
            client_info: serde_json::json!({"name": "mcp-client", "version": "1.0.0"}),
            asked_version: "2025-06-18".into(),
            status,
            detail: String::new(),
            protocol_version: Some("2025-06-18".into()),
            pages: pages.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    #[test]
    fn the_second_client_is_name_slash_version_and_never_names_toolmark() {
        let c = SecondClient::default();
        assert_eq!(c.to_string(), "mcp-client/1.0.0");
        assert_eq!(
            c.client_info(),
            serde_json::json!({"name": "mcp-client", "version": "1.0.0"})
        );
        let set: SecondClient = "claude-ai/0.1.0".parse().unwrap();
        assert_eq!(set.client_info()["name"], "claude-ai");
        for bad in [
            "",
            "mcp-client",
            "/1.0",
            "a/",
            "a/b/c",
            "a b/1",
            "é/1",
            "a/1\n",
        ] {
            assert_eq!(
                bad.parse::<SecondClient>(),
                Err(SecondClientError::Form(bad.into())),
                "{bad:?}"
            );
        }
        let long = format!("{}/1", "a".repeat(MAX_SECOND_CLIENT_PART + 1));
        assert!(long.parse::<SecondClient>().is_err());
        for named in ["toolmark/1.0", "my-ToolMark-client/2", "x/toolmark"] {
            assert_eq!(
                named.parse::<SecondClient>(),
                Err(SecondClientError::NamesToolmark(named.into()))
            );
        }
    }

    #[test]
    fn a_complete_second_look_digests_as_the_first_listing_of_the_same_pages() {
        let first = Observation {
            status: Status::Ok,
            pages: PAGES.iter().map(|p| (*p).to_owned()).collect(),
            ..Observation::remote()
        };
        let full = first.digests().unwrap().full;
        assert_eq!(
            second(Status::Ok, &PAGES).digest(),
            KindDigest::Read {
                digest: full,
                count: 2
            }
        );
    }

    #[test]
    fn an_unfinished_second_look_is_its_status_and_unparseable_pages_are_protocol() {
        assert_eq!(
            second(Status::Timeout, &PAGES[..1]).digest(),
            KindDigest::Unread("timeout".into())
        );
        assert_eq!(
            second(Status::Ok, &["{\"tools\":7}"]).digest(),
            KindDigest::Unread("protocol".into())
        );
        assert_eq!(
            second(Status::Ok, &[]).digest(),
            KindDigest::Unread("protocol".into())
        );
    }
}
