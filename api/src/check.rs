//! `POST /api/v1/check`: is the tool set a client received the one toolmark observed?
//!
//! Wire-compatible with HISTOR's request (`endpoint` | `package` | `name`, `tools` |
//! `toolSetDigest`) and answer members (`match`, `target`, `observed`, `seenBefore`, `note`,
//! `log`), with four differences a client can rely on (documented in `docs/api.md`):
//!
//! 1. **Proof in the answer.** For `same` and `previously-observed` the answer carries the log
//!    entry that backs it (`proof.entry`, its canonical JSON), its index and a
//!    `c2sp.org/tlog-proof@v1` bundle (inclusion proof + signed checkpoint). The decision is
//!    made from that entry, read from the log's own bundles: the index only locates it.
//! 2. **Full-fidelity comparison.** When `tools` are sent, they are compared by the
//!    `toolmark/1` full digest (every member of every tool, any number), so a flipped
//!    annotation is `different` even where MTL/1 cannot see it; `toolSetDigest` alone compares
//!    MTL/1 as HISTOR does, and `fullDigest` alone compares the full digest.
//! 3. **Normalised endpoints.** Scheme and host case, the default port, trailing slashes,
//!    fragment and userinfo do not matter; the query does, compared as written
//!    (`toolmark_index::index::EndpointKey`). An endpoint with a query is the target with that
//!    query. One without a query (WARDEN strips queries before it asks) stands for every target
//!    at its scheme, host and path, with or without a query: it is compared with each, `same` or
//!    `previously-observed` resting on the one that matches (`target` names it, `proof` is its
//!    entry), `different` listing them in `note` — as for a name with several targets.
//! 4. **`name` narrows.** With an endpoint or package, the target must be the named server's
//!    (else `not-listed`, and `note` says whose it is); alone, for a server with several
//!    targets, the answer is about the one that observed the client's set, or about none of
//!    them, with `note` listing them — never an arbitrary one. The same holds for every
//!    question several targets answer (`choose`).
//!
//! `"contribute": true` (HISTOR's opt-in) counts the compared digest for a listed target once
//! per client and UTC day (`crate::contribute`: counts only, nothing of the client kept) and
//! adds `contributed` to the answer; the shared, cached answer is read back, completed and
//! signed again for that client.
//!
//! The whole answer is signed: Ed25519 over the RFC 8785 bytes of the answer without its
//! `signature` member, with the key published at `/api/v1/issuer` (not the log key).
//!
//! A request goes: parse the body into typed values ([`Sri`] digests, checked subjects) →
//! read what the decision rests on (the target from the index, its latest successful entry from
//! the log, and only when that one does not match, the earlier entries the index locates) →
//! [`decide`], a pure function of those facts → assemble the wire [`Answer`] (the type
//! `toolmark-client` reads back) → sign. Clients verify answers with
//! `toolmark_client::verify_answer`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use ed25519_dalek::Signer;
use serde_json::json;
pub use toolmark_client::ANSWER_TYPE;
use toolmark_client::answer::{
    self as wire, Answer, ComparedBy, DigestError, LogState, Match, Observed, SeenBefore,
};
use toolmark_index::contributions::{Day, DigestKind};
use toolmark_index::index::TargetRow;
use toolmark_log::entry::{Entry, KindEntry, TargetId};
use toolmark_toolset::json::{self as tjson, Json};
use toolmark_toolset::{Sri, ToolSet, full, hex, mtl1};

use crate::ops::AnsweredOn;
use crate::{ApiError, AppState};

/// Largest request body: HISTOR's limit, so every request HISTOR takes we take (a 5,000-tool
/// set of real tools is about 7 MB; clients with such sets send a digest).
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// Most tools accepted in `tools` (HISTOR's and the crawler's cap).
pub const MAX_TOOLS: usize = 5_000;

/// Longest `endpoint`, `package` or `name` (HISTOR's limit; URLs in practice stay far below).
pub const MAX_SUBJECT_CHARS: usize = 2_000;

/// Most log entries examined for `previously-observed` (a target observed daily for ten years
/// has 3,650; each is read from its bundle and checked).
pub const MAX_PREVIOUS_ENTRIES: usize = 4_000;

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/api/v1/check",
            post(check).layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        )
        .route("/api/v1/issuer", get(issuer))
}

/// `GET /api/v1/issuer`: the key that signs `/check` answers, and how.
async fn issuer(State(state): State<Arc<AppState>>) -> Response {
    let public = state.answer_key.verifying_key().to_bytes();
    axum::Json(json!({
        "name": "toolmark",
        "publicKeyHex": hex::encode(&public),
        "publicKeyBase64": base64::engine::general_purpose::STANDARD.encode(public),
        "alg": "Ed25519",
        "keyId": key_id(&state),
        "signs": "RFC 8785 (JCS) bytes of a /check answer without its \"signature\" member",
        "answerType": ANSWER_TYPE,
        "logVkey": state.log.vkey(),
        "rules": toolmark_toolset::rules::RULES_ID,
        "rulesDigest": crate::rules::digest(),
    }))
    .into_response()
}

/// A short, stable name for the answer key: the first 16 hex digits of SHA-256(public key).
fn key_id(state: &AppState) -> String {
    key_id_of(&state.answer_key)
}

/// [`key_id`] of `key`.
fn key_id_of(key: &ed25519_dalek::SigningKey) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(key.verifying_key().to_bytes());
    hex::encode(&d[..8])
}

/// What the client asked, every value parsed into its type.
#[derive(Default)]
struct Query {
    endpoint: Option<String>,
    package: Option<String>,
    name: Option<String>,
    /// The raw text of each element of `tools`, as sent.
    tools: Option<Vec<String>>,
    tool_set_digest: Option<Sri>,
    full_digest: Option<Sri>,
    /// A kind of the surface sent to compare (`prompts`, `resources`, `resourceTemplates`),
    /// with its per-kind digest.
    surface: Option<(ComparedBy, Sri)>,
    /// One tool sent to compare (`tool`: its `toolmark-tool/1` digest and name) or its digest
    /// alone (`toolDigest`: no name).
    tool: Option<(Sri, Option<String>)>,
    /// `"contribute": true`: count the compared digest for the target today
    /// (`crate::contribute`).
    contribute: bool,
}

/// A request compares one thing: the tool set, one kind of the surface, or one tool.
const ONE_KIND: &str = "compare one of tools (or toolSetDigest/fullDigest), prompts, resources, resourceTemplates or tool (or toolDigest) per request";

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::BadRequest(msg.into())
}

fn subject_string(name: &str, v: &Json) -> Result<String, ApiError> {
    let Some(s) = v.as_str() else {
        return Err(bad(format!("\"{name}\" must be a string")));
    };
    if s.is_empty() || s.chars().count() > MAX_SUBJECT_CHARS || s.contains('\0') {
        return Err(bad(format!(
            "\"{name}\" must be 1–{MAX_SUBJECT_CHARS} characters without NUL"
        )));
    }
    Ok(s.to_owned())
}

/// HISTOR's digest form, `^sha256-[A-Za-z0-9+/]{43}=$`, canonical ([`Sri`]'s rules).
fn digest(name: &str, v: &Json) -> Result<Sri, ApiError> {
    let Some(s) = v.as_str() else {
        return Err(bad(format!("\"{name}\" must be a string")));
    };
    s.parse().map_err(|_| {
        bad(format!(
            "\"{name}\" must match ^sha256-[A-Za-z0-9+/]{{43}}=$"
        ))
    })
}

fn parse_query(body: &[u8]) -> Result<Query, ApiError> {
    let text = std::str::from_utf8(body).map_err(|_| bad("the body is not UTF-8"))?;
    let members = tjson::parse_members(text, "tools").map_err(|e| bad(format!("the body: {e}")))?;
    crate::servers::refuse_duplicate_members(text, &members)?;
    let mut q = Query::default();
    for m in &members {
        let Some(name) = m.name.as_str() else {
            continue;
        };
        match name {
            "endpoint" => q.endpoint = Some(subject_string(name, &m.value)?),
            "package" => q.package = Some(subject_string(name, &m.value)?),
            "name" => q.name = Some(subject_string(name, &m.value)?),
            "toolSetDigest" => q.tool_set_digest = Some(digest(name, &m.value)?),
            "fullDigest" => q.full_digest = Some(digest(name, &m.value)?),
            "tools" => {
                if !matches!(m.value, Json::Array(_)) {
                    return Err(bad("\"tools\" must be an array"));
                }
                if m.raw_elements.len() > MAX_TOOLS {
                    return Err(bad(format!(
                        "\"tools\" holds more than {MAX_TOOLS} entries"
                    )));
                }
                q.tools = Some(m.raw_elements.iter().map(|s| (*s).to_owned()).collect());
            }
            "prompts" | "resources" | "resourceTemplates" => {
                let Json::Array(entries) = &m.value else {
                    return Err(bad(format!("\"{name}\" must be an array")));
                };
                if entries.len() > MAX_TOOLS {
                    return Err(bad(format!(
                        "\"{name}\" holds more than {MAX_TOOLS} entries"
                    )));
                }
                if q.surface.is_some() {
                    return Err(bad(ONE_KIND));
                }
                let kind = toolmark_toolset::surface::Kind::from_name(name)
                    .expect("one of the paged kinds");
                let key = toolmark_toolset::surface::items::key_member(kind)
                    .expect("a paged kind has a key");
                let by = match kind {
                    toolmark_toolset::surface::Kind::Prompts => ComparedBy::Prompts,
                    toolmark_toolset::surface::Kind::Resources => ComparedBy::Resources,
                    _ => ComparedBy::ResourceTemplates,
                };
                q.surface = Some((by, full::digest_by(entries.iter(), key)));
            }
            "tool" | "toolDigest" => {
                if q.tool.is_some() {
                    return Err(bad(ONE_KIND));
                }
                q.tool = Some(if name == "tool" {
                    let Json::Object(_) = &m.value else {
                        return Err(bad("\"tool\" must be an object"));
                    };
                    let Some(tool_name) = m.value.get("name").and_then(Json::as_str) else {
                        return Err(bad("\"tool\" must have a string \"name\""));
                    };
                    (
                        Sri::of(&full::entry_bytes(&m.value)),
                        Some(tool_name.to_owned()),
                    )
                } else {
                    (digest(name, &m.value)?, None)
                });
            }
            "contribute" => match m.value {
                Json::Bool(b) => q.contribute = b,
                _ => return Err(bad("\"contribute\" must be a boolean")),
            },
            _ => {}
        }
    }
    if q.endpoint.is_none() && q.package.is_none() && q.name.is_none() {
        return Err(bad("send endpoint, package or name"));
    }
    let tool_set_sent = q.tools.is_some() || q.tool_set_digest.is_some() || q.full_digest.is_some();
    let sent = [tool_set_sent, q.surface.is_some(), q.tool.is_some()];
    if sent.iter().filter(|s| **s).count() > 1 {
        return Err(bad(ONE_KIND));
    }
    Ok(q)
}

/// The digests of the client's set, and how it is compared.
struct Client {
    /// The MTL/1 digest sent or computed from `tools`, or why the tools sent have none.
    mtl1: Option<Result<Sri, DigestError>>,
    /// The full digest sent or computed from `tools`.
    full: Option<Sri>,
    /// The digest of the kind of the surface sent, when one was ([`Client::by`] names it).
    surface: Option<Sri>,
    /// The `toolmark-tool/1` digest of the one tool sent, and its name when the tool was sent.
    tool: Option<(Sri, Option<String>)>,
    by: ComparedBy,
}

impl Client {
    fn mtl1_digest(&self) -> Option<&Sri> {
        self.mtl1.as_ref().and_then(|r| r.as_ref().ok())
    }

    /// The digest compared: the full one or the MTL/1 one, as [`Client::by`] says.
    fn compared(&self) -> Option<&Sri> {
        match self.by {
            ComparedBy::Full => self.full.as_ref(),
            ComparedBy::Mtl1 => self.mtl1_digest(),
            ComparedBy::Prompts | ComparedBy::Resources | ComparedBy::ResourceTemplates => {
                self.surface.as_ref()
            }
            ComparedBy::Tool => self.tool.as_ref().map(|(d, _)| d),
        }
    }

    /// What was compared, in words ("the tool set", "the prompts", …).
    fn what(&self) -> &'static str {
        match self.by {
            ComparedBy::Full | ComparedBy::Mtl1 => "the tool set",
            ComparedBy::Prompts => "the prompts",
            ComparedBy::Resources => "the resources",
            ComparedBy::ResourceTemplates => "the resource templates",
            ComparedBy::Tool => "the tool",
        }
    }
}

/// What `entry` says of the kind `client` compares: `None` for the tool set; for a kind,
/// `Some` of its entry in the surface (`None` inside when the surface was read and the server
/// declared no such kind), or `Err(())` when the entry has no surface at all.
fn kind_in(entry: &Entry, client: &Client) -> Option<Result<Option<KindEntry>, ()>> {
    let kind = client.by.kind()?;
    Some(match &entry.surface {
        None => Err(()),
        Some(kinds) => Ok(kinds
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, e)| e.clone())),
    })
}

fn client_digests(q: &Query) -> Client {
    if let Some((by, digest)) = q.surface {
        return Client {
            mtl1: None,
            full: None,
            surface: Some(digest),
            tool: None,
            by,
        };
    }
    if let Some(tool) = &q.tool {
        return Client {
            mtl1: None,
            full: None,
            surface: None,
            tool: Some(tool.clone()),
            by: ComparedBy::Tool,
        };
    }
    if let Some(tools) = &q.tools {
        // The elements were parsed already, so the document parses.
        return match ToolSet::of_raw(tools) {
            Ok(set) => Client {
                mtl1: Some(mtl1::tool_set_digest(&set).map_err(|e| DigestError {
                    code: e.code.as_str().to_owned(),
                    detail: e.detail,
                })),
                full: Some(full::digest(&set)),
                surface: None,
                tool: None,
                by: ComparedBy::Full,
            },
            Err(e) => Client {
                mtl1: Some(Err(DigestError {
                    code: "PARSE".into(),
                    detail: e.to_string(),
                })),
                full: None,
                surface: None,
                tool: None,
                by: ComparedBy::Full,
            },
        };
    }
    Client {
        mtl1: q.tool_set_digest.map(Ok),
        full: q.full_digest,
        surface: None,
        tool: None,
        by: if q.full_digest.is_some() {
            ComparedBy::Full
        } else {
            ComparedBy::Mtl1
        },
    }
}

/// Most servers or targets a note names (the rest are counted): a note stays short enough for
/// a scanner to show (WARDEN shows 400 characters).
pub const MAX_NOTE_NAMES: usize = 5;

/// Most targets examined for one question several targets answer: a name-only question (a
/// registry server lists a handful of remotes; the largest real ones about 30), or an endpoint
/// without a query and the targets with queries at its path (two in real data), or one listed
/// under several names. The note counts all of them.
pub const MAX_NAME_TARGETS: usize = 256;

/// Why a question was matched to no target.
enum NoTarget {
    /// No target at this endpoint, package or name.
    Unlisted,
    /// The endpoint or package is listed, but only under other server names than `name`.
    OtherName {
        /// `endpoint` or `package`.
        what: &'static str,
        /// The name asked about.
        name: String,
        /// The servers that list it, sorted.
        servers: Vec<String>,
    },
    /// A question several targets answer (a name-only question about a server with several
    /// targets; an endpoint without a query listed with several queries, or under several
    /// servers), none of which toolmark observed with the client's set (or there is no set to
    /// compare by): no one of them is the one the client uses more than another.
    Several {
        /// What was asked.
        about: Asked,
        /// How many targets answer it.
        count: usize,
        /// They, in the order they are listed (at most [`MAX_NAME_TARGETS`]).
        targets: Vec<TargetRow>,
    },
}

/// What a question several targets answer was about ([`NoTarget::Several`]).
enum Asked {
    /// A server name alone.
    Server(String),
    /// An endpoint or package, normalised (`toolmark_index::index::endpoint_key`).
    Endpoint(String),
}

/// The rank of a candidate target: listed first, then one with a tool set.
fn rank(t: &TargetRow) -> (bool, bool) {
    (t.delisted_at.is_some(), t.current_full.is_none())
}

/// Find the target: by normalised endpoint or package (of the named server when a name is
/// also given), else by server name. When several targets answer the question (an endpoint
/// without a query and the targets at its scheme, host and path with any query; a server's
/// targets), it is compared with each ([`choose`]).
///
/// `None` when `budget` is [`Budget::Small`] and several targets answer the question.
fn find_target(
    index: &toolmark_index::Index,
    q: &Query,
    client: &Client,
    budget: Budget,
) -> Result<Option<Result<TargetRow, NoTarget>>, ApiError> {
    let subject = q.endpoint.as_ref().or(q.package.as_ref());
    if let Some(subject) = subject {
        // With a name, only that server's targets at the endpoint: filtered in the query, so
        // the row limit never cuts off the named server's target.
        let limit = MAX_NAME_TARGETS as u32;
        let (candidates, total) = index.targets_at(subject, q.name.as_deref(), limit)?;
        let count = usize::try_from(total).unwrap_or(usize::MAX);
        if let Some(name) = &q.name
            && candidates.is_empty()
        {
            // Whom the endpoint is listed for instead, if anyone.
            let (others, _) = index.targets_at(subject, None, limit)?;
            if others.is_empty() {
                return Ok(Some(Err(NoTarget::Unlisted)));
            }
            let mut servers: Vec<String> = others.into_iter().map(|t| t.server).collect();
            servers.sort();
            servers.dedup();
            return Ok(Some(Err(NoTarget::OtherName {
                what: if q.endpoint.is_some() {
                    "endpoint"
                } else {
                    "package"
                },
                name: name.clone(),
                servers,
            })));
        }
        if budget == Budget::Small && count > 1 {
            return Ok(None);
        }
        let about = Asked::Endpoint(toolmark_index::index::endpoint_key(subject));
        return choose(index, candidates, count, client, about).map(Some);
    }
    let Some(name) = &q.name else {
        return Ok(Some(Err(NoTarget::Unlisted)));
    };
    if budget == Budget::Small {
        return Ok(None);
    }
    let mut candidates = index.targets_of(name)?;
    let count = candidates.len();
    candidates.truncate(MAX_NAME_TARGETS);
    choose(
        index,
        candidates,
        count,
        client,
        Asked::Server(name.clone()),
    )
    .map(Some)
}

/// The target a question rests on among `candidates` (`count` answer it, the first
/// [`MAX_NAME_TARGETS`] are examined): the only one; else the one whose current set is the
/// client's, else the one that observed it most recently (a listed one first, then the first
/// in `candidates`' order); else none ([`NoTarget::Several`]), rather than an arbitrary one.
fn choose(
    index: &toolmark_index::Index,
    mut candidates: Vec<TargetRow>,
    count: usize,
    client: &Client,
    about: Asked,
) -> Result<Result<TargetRow, NoTarget>, ApiError> {
    if count <= 1 || candidates.len() <= 1 {
        return Ok(candidates.into_iter().next().ok_or(NoTarget::Unlisted));
    }
    let several = |targets| {
        Ok(Err(NoTarget::Several {
            about,
            count,
            targets,
        }))
    };
    let Some(compared) = client.compared().map(Sri::to_string) else {
        return several(candidates);
    };
    if client.by == ComparedBy::Tool {
        // One tool is located by reading each target's tool sets (`tool_facts`), too much to
        // do for every target of a name: the client asks with the endpoint it uses.
        return several(candidates);
    }
    let current_is_the_clients = |t: &TargetRow| {
        let current = match client.by {
            ComparedBy::Full => &t.current_full,
            ComparedBy::Mtl1 => &t.current_mtl1,
            // A kind is located by its entries below.
            _ => return false,
        };
        current.as_deref() == Some(compared.as_str())
    };
    if let Some(i) = (0..candidates.len())
        .filter(|&i| current_is_the_clients(&candidates[i]))
        .min_by_key(|&i| rank(&candidates[i]))
    {
        return Ok(Ok(candidates.swap_remove(i)));
    }
    // No current set is the client's: the target that observed it most recently, if any.
    let mut newest: Option<(u64, usize)> = None;
    for (i, t) in candidates.iter().enumerate() {
        let entries = entries_with(index, &t.id, client.by, &compared)?;
        if let Some(&last) = entries.last() {
            if newest.is_none_or(|(n, _)| last > n) {
                newest = Some((last, i));
            }
        }
    }
    match newest {
        Some((_, i)) => Ok(Ok(candidates.swap_remove(i))),
        None => several(candidates),
    }
}

/// The first of `items` joined with ", ", at most [`MAX_NOTE_NAMES`] of them, and a count of
/// the rest of `total`.
fn bounded_list<'a>(items: impl Iterator<Item = &'a str>, total: usize) -> String {
    let more = total.saturating_sub(MAX_NOTE_NAMES);
    let mut out = items.take(MAX_NOTE_NAMES).collect::<Vec<_>>().join(", ");
    if more > 0 {
        out.push_str(&format!(", and {more} more"));
    }
    out
}

/// What `targets` are, in words: `remotes`, `packages`, or `remotes and packages`.
fn kinds(targets: &[TargetRow]) -> &'static str {
    let remotes = targets.iter().filter(|t| t.kind == "remote").count();
    match (remotes, targets.len() - remotes) {
        (_, 0) => "remotes",
        (0, _) => "packages",
        _ => "remotes and packages",
    }
}

/// A log entry read from the log's bundles and decoded, with its canonical bytes.
#[derive(Clone)]
struct Backing {
    index: u64,
    bytes: Vec<u8>,
    entry: Entry,
}

fn read_entry(
    state: &AppState,
    at: &toolmark_log::reader::Signed,
    index: u64,
) -> Result<Backing, ApiError> {
    let bytes = state.log.entry(index, at).map_err(ApiError::internal)?;
    let entry = Entry::decode(&bytes).map_err(ApiError::internal)?;
    Ok(Backing {
        index,
        bytes,
        entry,
    })
}

/// Whether the logged entry holds the client's digest (the comparison the answer rests on).
fn entry_matches(entry: &Entry, client: &Client) -> bool {
    if !entry.status.is_ok() {
        return false;
    }
    match client.by {
        ComparedBy::Full => client.full.is_some() && entry.full == client.full,
        ComparedBy::Mtl1 => {
            client.mtl1_digest().is_some() && entry.mtl1_digest() == client.mtl1_digest()
        }
        ComparedBy::Prompts | ComparedBy::Resources | ComparedBy::ResourceTemplates => {
            matches!(
                (kind_in(entry, client), client.surface),
                (Some(Ok(Some(KindEntry::Read { digest, .. }))), Some(sent)) if digest == sent
            )
        }
        // Decided by [`decide_tool`] from the entries' tool digests.
        ComparedBy::Tool => false,
    }
}

/// The target a question matched, with its id parsed.
struct Found<'a> {
    row: &'a TargetRow,
    id: TargetId,
}

/// What a decision rests on, all of it read before deciding.
struct Facts<'a> {
    client: &'a Client,
    /// Whether `tools` were sent (rather than digests).
    sent_tools: bool,
    /// The target the question matched.
    target: Option<&'a Found<'a>>,
    /// Why it matched none, when it did not.
    no_target: &'a NoTarget,
    /// The entry of the target's latest successful observation, when it has one.
    current: Option<&'a Backing>,
    /// Entries of the target the index located with the compared digest (at most
    /// [`MAX_PREVIOUS_ENTRIES`], all inside the checkpoint). Read only when deciding without them
    /// gives [`Match::Different`], the one verdict they can change.
    earlier: &'a [Backing],
    /// For a question about one tool: what the target's tool sets say of it.
    tool: Option<&'a ToolFacts>,
}

/// What the answer says.
struct Decision<'a> {
    verdict: Match,
    /// Why, clause by clause (the answer's `note` joins them with "; ").
    note: Vec<String>,
    /// The entry a `same` or `previously-observed` answer proves.
    backing: Option<&'a Backing>,
    /// For `previously-observed`: when the set was seen.
    seen_before: Option<SeenBefore>,
    /// For one tool: the backing entry's tool digests, in its tool index's order.
    tool_digests: Option<Vec<Sri>>,
    /// For one tool: its name, as sent or as the backing entry (or the target's history) has it.
    tool_name: Option<String>,
}

impl<'a> Decision<'a> {
    fn unproved(verdict: Match, note: Vec<String>) -> Decision<'a> {
        Decision {
            verdict,
            note,
            backing: None,
            seen_before: None,
            tool_digests: None,
            tool_name: None,
        }
    }
}

/// The verdict and its reasons, from the facts alone (no I/O).
fn decide<'a>(facts: &Facts<'a>) -> Decision<'a> {
    let Some(found) = facts.target else {
        return no_target(facts);
    };
    let t = found.row;
    let mut note = Vec::new();
    if let Some(delisted) = &t.delisted_at {
        note.push(format!(
            "the server was delisted from the registry on {delisted}"
        ));
    }
    let without = &t.withheld_headers;
    if !without.is_empty() {
        note.push(format!(
            "toolmark observes it without the declared header(s) {} (it never sends secrets or values a user supplies): a client that sends them may be served more or other tools",
            without.join(", ")
        ));
    }
    if let Some(status) = t.last_status.as_deref().filter(|s| *s != "ok") {
        if t.current_full.is_some() {
            note.push(format!(
                "the latest observation ended as {status}; the comparison is with the last successful one"
            ));
        }
    }
    let Some(current) = facts.current else {
        note.insert(
            0,
            format!(
                "toolmark lists this target but has never read its tool set ({})",
                t.skip_reason
                    .as_deref()
                    .or(t.last_status.as_deref())
                    .unwrap_or("not yet observed")
            ),
        );
        return Decision::unproved(Match::NotObserved, note);
    };
    if facts.client.compared().is_none() {
        let (verdict, why) = if facts.sent_tools {
            (Match::Undigestible, "the tools sent could not be digested")
        } else {
            (
                Match::NoDigest,
                "send tools, toolSetDigest or fullDigest to compare",
            )
        };
        note.insert(0, why.into());
        return Decision::unproved(verdict, note);
    }
    match kind_in(&current.entry, facts.client) {
        Some(Err(())) => {
            note.insert(
                0,
                format!(
                    "toolmark's latest successful observation of this target did not read {} (it was made before toolmark read the surface, or with the surface off)",
                    facts.client.what()
                ),
            );
            return Decision::unproved(Match::NotObserved, note);
        }
        Some(Ok(Some(KindEntry::Unread(status)))) => {
            note.insert(
                0,
                format!(
                    "toolmark's latest successful observation did not read {} completely ({status})",
                    facts.client.what()
                ),
            );
            return Decision::unproved(Match::Undigestible, note);
        }
        Some(Ok(None)) => note.push(format!(
            "the server's handshake declared no {} when toolmark observed it",
            facts.client.what().trim_start_matches("the ")
        )),
        _ => {}
    }
    if facts.client.by == ComparedBy::Mtl1 && current.entry.mtl1_digest().is_none() {
        note.insert(
            0,
            format!(
                "the observed tool set has no MTL/1 digest ({}); send tools or fullDigest to compare by the full digest",
                current.entry.mtl1_error().unwrap_or("?")
            ),
        );
        return Decision::unproved(Match::Undigestible, note);
    }
    if let Some(tool) = facts.tool {
        return decide_tool(tool, current, note);
    }
    if entry_matches(&current.entry, facts.client) {
        note.insert(
            0,
            format!(
                "{} equals toolmark's latest successful observation",
                facts.client.what()
            ),
        );
        return Decision {
            verdict: Match::Same,
            note,
            backing: Some(current),
            seen_before: None,
            tool_digests: None,
            tool_name: None,
        };
    }
    // Earlier entries with this digest, located by the index, decided by the log.
    let mut matched: Vec<&Backing> = facts
        .earlier
        .iter()
        .filter(|b| b.entry.subject.id() == found.id && entry_matches(&b.entry, facts.client))
        .collect();
    matched.sort_by_key(|b| b.index);
    let (Some(first), Some(last)) = (matched.first(), matched.last()) else {
        note.insert(
            0,
            format!(
                "toolmark never observed {} at this target",
                facts
                    .client
                    .what()
                    .replace("the ", "these ")
                    .replace("these tool set", "this tool set")
            ),
        );
        return Decision::unproved(Match::Different, note);
    };
    note.insert(
        0,
        match facts.client.by.kind() {
            None => {
                "the tool set is not the latest observed one but toolmark observed it before".into()
            }
            Some(_) => format!(
                "{} are not the latest observed but toolmark observed them before",
                facts.client.what()
            ),
        },
    );
    Decision {
        verdict: Match::PreviouslyObserved,
        seen_before: Some(SeenBefore {
            first_seen: first.entry.observed_at.clone(),
            last_seen: last.entry.observed_at.clone(),
            observations: matched.len() as u64,
        }),
        backing: Some(last),
        note,
        tool_digests: None,
        tool_name: None,
    }
}

/// Most distinct tool sets of a target read for a question about one tool, newest first (each
/// is a stored document read and digested tool by tool). A target whose set changes every day
/// reaches it after eight months; real servers change their tools a few times a year, so every
/// set they ever served is read. Past it, an answer says so in its note.
pub const MAX_TOOL_SETS: usize = 256;

/// Most bytes of stored documents read for one question about one tool (or one tool's
/// history, `crate::tools`): the tool sets are read until this much has been, then the search
/// stops as at [`MAX_TOOL_SETS`]. A real server's document is tens of kilobytes, so every set
/// of the bound fits; a server serving cap-sized (16 MiB) sets would otherwise cost 256 of them
/// (4 GiB read and parsed) per question, which anyone may ask.
pub const MAX_TOOL_SET_BYTES: u64 = 64 * 1024 * 1024;

/// What a target's tool sets say of one tool ([`tool_facts`]), read before deciding.
struct ToolFacts {
    /// The current entry's tool digests in its index's order; `None` when the entry carries
    /// no `toolIndex` (it was logged before toolmark logged one).
    current_digests: Option<Vec<Sri>>,
    /// Whether the current set holds a tool with the client's digest.
    in_current: bool,
    /// The tool's name: as sent, else as the newest set holding its digest has it.
    name: Option<String>,
    /// The digest of the tool of that name the current set serves, when it is another one.
    other: Option<Sri>,
    /// The newest earlier entry whose set holds the tool and that proves it (it carries a
    /// `toolIndex`), its tool digests, and when the tool was seen.
    earlier: Option<(Backing, Vec<Sri>, SeenBefore)>,
    /// The newest entry whose set holds the tool but that carries no `toolIndex` (so cannot
    /// prove it), with its time, when no later one proves it.
    unprovable: Option<(u64, String)>,
    /// Whether [`MAX_TOOL_SETS`] or [`MAX_TOOL_SET_BYTES`] cut the target's history short.
    cut: bool,
}

/// Read the target's tool sets, newest first (at most [`MAX_TOOL_SETS`], each from its stored
/// document, its full digest checked), up to the first one holding the client's tool when
/// that is the current one, else all of them: which hold the tool's digest, and which serve a
/// tool of its name with another digest.
fn tool_facts(
    state: &AppState,
    index: &toolmark_index::Index,
    at: &toolmark_log::reader::Signed,
    found: &Found<'_>,
    current: &Backing,
    client: &Client,
) -> Result<ToolFacts, ApiError> {
    let (digest, sent_name) = client.tool.clone().expect("a question about one tool");
    let mut runs = index.tool_set_runs(&found.row.id, at.checkpoint.size, MAX_TOOL_SETS + 1)?;
    let cut = runs.len() > MAX_TOOL_SETS;
    runs.truncate(MAX_TOOL_SETS);
    let mut facts = ToolFacts {
        current_digests: None,
        in_current: false,
        name: sent_name,
        other: None,
        earlier: None,
        unprovable: None,
        cut,
    };
    // The current set's digest of each named tool (the first of a name, as the diff matches).
    let mut current_named: Vec<(String, Sri)> = Vec::new();
    let mut bytes = 0u64;
    for run in &runs {
        let Some(stored) = &run.tool_set else {
            continue;
        };
        if bytes >= MAX_TOOL_SET_BYTES {
            facts.cut = true;
            break;
        }
        let read = stored.read(&state.blobs).map_err(ApiError::internal)?;
        bytes += read.document_bytes;
        let set = read.set;
        let tool_index = full::ToolIndex::of(&set);
        let holder = set.tools.iter().find(|t| full::tool_digest(t) == digest);
        if (run.first_entry..=run.last_entry).contains(&current.index) {
            match current.entry.tool_index {
                Some(logged) if logged == tool_index.digest => {
                    facts.current_digests = Some(tool_index.digests.clone());
                }
                Some(_) => {
                    return Err(ApiError::internal(format!(
                        "entry {}: the stored tool set's index is not the logged toolIndex",
                        current.index
                    )));
                }
                None => {}
            }
            for t in &set.tools {
                if let Some(n) = t.name()
                    && !current_named.iter().any(|(m, _)| m == n)
                {
                    current_named.push((n.to_owned(), full::tool_digest(t)));
                }
            }
            if let Some(t) = holder {
                facts.in_current = true;
                if facts.name.is_none() {
                    facts.name = t.name().map(str::to_owned);
                }
                return Ok(facts);
            }
            continue;
        }
        let Some(t) = holder else {
            continue;
        };
        if facts.name.is_none() {
            facts.name = t.name().map(str::to_owned);
        }
        if let Some((_, _, seen)) = &mut facts.earlier {
            seen.first_seen = run.first_at.clone();
            seen.observations += run.observations;
            continue;
        }
        if facts.unprovable.is_some() {
            continue;
        }
        let backing = read_entry(state, at, run.last_entry)?;
        match backing.entry.tool_index {
            Some(logged) if logged == tool_index.digest => {
                let seen = SeenBefore {
                    first_seen: run.first_at.clone(),
                    last_seen: run.last_at.clone(),
                    observations: run.observations,
                };
                facts.earlier = Some((backing, tool_index.digests, seen));
            }
            Some(_) => {
                return Err(ApiError::internal(format!(
                    "entry {}: the stored tool set's index is not the logged toolIndex",
                    run.last_entry
                )));
            }
            None => facts.unprovable = Some((run.last_entry, run.last_at.clone())),
        }
    }
    if let Some(name) = &facts.name {
        facts.other = current_named
            .into_iter()
            .find(|(n, d)| n == name && *d != digest)
            .map(|(_, d)| d);
    }
    Ok(facts)
}

/// The verdict about one tool, from [`ToolFacts`]: `same` when the current entry's set holds
/// its digest, `previously-observed` when an earlier one does (the newest), `different` when
/// the current set serves a tool of its name with another digest, else `not-observed`.
fn decide_tool<'a>(
    tool: &'a ToolFacts,
    current: &'a Backing,
    mut note: Vec<String>,
) -> Decision<'a> {
    let named = match &tool.name {
        Some(n) => format!("the tool {n}"),
        None => "the tool".to_owned(),
    };
    let Some(current_digests) = &tool.current_digests else {
        note.insert(
            0,
            "toolmark's latest successful observation of this target carries no tool index (it was logged before toolmark logged one), so it cannot prove one tool".into(),
        );
        return Decision::unproved(Match::NotObserved, note);
    };
    let unproved = |verdict, note| Decision {
        tool_name: tool.name.clone(),
        ..Decision::unproved(verdict, note)
    };
    if tool.in_current {
        note.insert(
            0,
            format!("{named} is one of the tools of toolmark's latest successful observation"),
        );
        return Decision {
            verdict: Match::Same,
            note,
            backing: Some(current),
            seen_before: None,
            tool_digests: Some(current_digests.clone()),
            tool_name: tool.name.clone(),
        };
    }
    let other = tool.other.as_ref().map(|d| {
        format!(
            "the target now serves a tool named {} with another definition ({d})",
            tool.name.as_deref().unwrap_or("?")
        )
    });
    if let Some((backing, digests, seen)) = &tool.earlier {
        note.insert(
            0,
            format!(
                "{named} is not in toolmark's latest observed tool set but toolmark observed it before"
            ),
        );
        note.extend(other);
        return Decision {
            verdict: Match::PreviouslyObserved,
            note,
            backing: Some(backing),
            seen_before: Some(seen.clone()),
            tool_digests: Some(digests.clone()),
            tool_name: tool.name.clone(),
        };
    }
    if let Some((entry, at)) = &tool.unprovable {
        note.push(format!(
            "toolmark observed it last in entry {entry} ({at}), logged before toolmark logged tool indexes, which cannot prove one tool"
        ));
    }
    if tool.cut {
        note.push(format!(
            "only the target's newest distinct tool sets were read (at most {MAX_TOOL_SETS}, \
             {MAX_TOOL_SET_BYTES} bytes of documents)"
        ));
    }
    if let Some(other) = other {
        note.insert(0, other);
        return unproved(Match::Different, note);
    }
    note.insert(0, "toolmark never observed this tool at this target".into());
    unproved(Match::NotObserved, note)
}

/// The verdict when the question matched no target ([`Facts::no_target`]).
fn no_target<'a>(facts: &Facts<'a>) -> Decision<'a> {
    match facts.no_target {
        NoTarget::Unlisted => Decision::unproved(
            Match::NotListed,
            vec!["toolmark lists no server at this endpoint, package or name".into()],
        ),
        NoTarget::OtherName {
            what,
            name,
            servers,
        } => Decision::unproved(
            Match::NotListed,
            vec![format!(
                "toolmark lists this {what} under {}, not under {name}",
                bounded_list(servers.iter().map(String::as_str), servers.len())
            )],
        ),
        NoTarget::Several {
            about,
            count,
            targets,
        } => {
            let n = *count;
            let endpoints = bounded_list(targets.iter().map(|t| t.target.as_str()), n);
            let kinds = kinds(targets);
            // "<what has them>", "the targets, among others" and what to ask instead.
            let (has, them, ask) = match about {
                Asked::Server(name) => (
                    format!("{name} has {n} {kinds}"),
                    format!("the {n} {kinds} of {name}"),
                    "ask with the endpoint (or package) you use to compare with one of them",
                ),
                Asked::Endpoint(key) => (
                    format!("toolmark lists {n} {kinds} at {key}"),
                    format!("the {n} {kinds} listed at {key}"),
                    "ask with the endpoint's query, or the server's name, to compare with one of them",
                ),
            };
            let (verdict, why) = if targets.iter().all(|t| t.current_full.is_none()) {
                (
                    Match::NotObserved,
                    format!("{has} and toolmark has read the tool set of none"),
                )
            } else if facts.client.compared().is_none() {
                let what = if facts.sent_tools {
                    (Match::Undigestible, "the tools sent could not be digested")
                } else {
                    (
                        Match::NoDigest,
                        "send tools, toolSetDigest or fullDigest to compare",
                    )
                };
                (what.0, format!("{}; {has}", what.1))
            } else {
                (
                    Match::Different,
                    format!("toolmark never observed this tool set at any of {them}"),
                )
            };
            Decision::unproved(verdict, vec![format!("{why}: {endpoints}; {ask}")])
        }
    }
}

/// The entries of `target` the index locates with the compared digest, read from the log.
fn read_earlier(
    state: &AppState,
    index: &toolmark_index::Index,
    at: &toolmark_log::reader::Signed,
    client: &Client,
    target: &Found<'_>,
) -> Result<Vec<Backing>, ApiError> {
    let Some(compared) = client.compared() else {
        return Ok(Vec::new());
    };
    let digest = compared.to_string();
    let candidates = entries_with(index, &target.row.id, client.by, &digest)?;
    candidates
        .into_iter()
        .take(MAX_PREVIOUS_ENTRIES)
        .filter(|&i| i < at.checkpoint.size)
        .map(|i| read_entry(state, at, i))
        .collect()
}

/// Entries of target `id` holding `digest` as `by` compares it, oldest first.
fn entries_with(
    index: &toolmark_index::Index,
    id: &str,
    by: ComparedBy,
    digest: &str,
) -> Result<Vec<u64>, ApiError> {
    Ok(match by {
        ComparedBy::Full => index.entries_with_full(id, digest)?,
        ComparedBy::Mtl1 => index.entries_with_mtl1(id, digest)?,
        // One tool is located through the target's tool sets ([`tool_facts`]), not by a column.
        ComparedBy::Tool => Vec::new(),
        _ => {
            let kind = by.kind().expect("a kind of the surface");
            index.entries_with_kind(id, kind, digest)?
        }
    })
}

/// Most answers kept by [`AnswerCache`]: one second's worth of distinct questions (about 3 KB
/// each, so at most ~12 MB); past it, answers are computed without being kept.
pub const MAX_CACHED_ANSWERS: usize = 4_096;

/// Signed answers of the current second for the current checkpoint, by SHA-256 of the request
/// body. An answer is a function of the body, the log (named by its checkpoint) and `checkedAt`
/// (whole seconds), so within one second and one checkpoint the same body gets the same bytes;
/// the cache empties when either moves on. Staleness is thus at most the second the answer
/// names. Popular endpoints are checked by many scanners at once; they then cost a hash and a
/// lookup.
#[derive(Default)]
pub struct AnswerCache {
    inner: std::sync::Mutex<CacheState>,
}

/// One answer, computed once however many ask for it at the same time (when a second rolls
/// over, every connection asking about a popular endpoint misses at once).
type Slot = Arc<tokio::sync::OnceCell<Bytes>>;

#[derive(Default)]
struct CacheState {
    /// (`checkedAt`, checkpoint size, SHA-256 of the checkpoint note) the entries belong to.
    epoch: Option<(String, u64, [u8; 32])>,
    answers: std::collections::HashMap<[u8; 32], Slot>,
}

impl AnswerCache {
    /// The slot for `key` in `epoch` (a fresh epoch empties the cache); `None` when the cache is
    /// full and the answer must be computed without being kept.
    fn slot(&self, epoch: &(String, u64, [u8; 32]), key: [u8; 32]) -> Option<Slot> {
        let mut c = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if c.epoch.as_ref() != Some(epoch) {
            c.epoch = Some(epoch.clone());
            c.answers.clear();
        }
        if let Some(slot) = c.answers.get(&key) {
            return Some(slot.clone());
        }
        if c.answers.len() >= MAX_CACHED_ANSWERS {
            return None;
        }
        let slot = Slot::default();
        c.answers.insert(key, slot.clone());
        Some(slot)
    }
}

fn json_response(bytes: Bytes) -> Response {
    let mut response = bytes.into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn check(
    State(state): State<Arc<AppState>>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    use sha2::Digest;
    let body = crate::servers::body_or_error(body, MAX_BODY_BYTES)?;
    let q = parse_query(&body)?;
    let contribute = q.contribute;
    let at = state.checkpoint().map_err(ApiError::internal)?;
    let now = (state.clock)();
    let epoch = (
        toolmark_index::time::utc(now),
        at.checkpoint.size,
        // The whole note, not only the root: a heartbeat's new cosignatures on the same tree
        // change the answer's `log`.
        sha2::Sha256::digest(&at.note).into(),
    );
    let key: [u8; 32] = sha2::Sha256::digest(&body).into();
    let compute = || async {
        let state2 = state.clone();
        let checked_at = epoch.0.clone();
        // A small question ([`Budget::Small`]) is answered here, on the async worker, when an
        // index connection is free now and the log's files are read on this thread: its
        // few indexed reads cost less than the hand-off to a blocking thread and back
        // (docs/benchmarks.md, "/check answered where it is read").
        let quick = if state.log.public().reads_on_caller() {
            match state.index.try_get() {
                Some(index) => answer(&state, &index, &q, &at, &checked_at, Budget::Small)?,
                None => None,
            }
        } else {
            None
        };
        let answer = match quick {
            Some(answer) => {
                state.metrics.answered(AnsweredOn::AsyncWorker);
                answer
            }
            None => {
                // SQLite and file reads are blocking; keep them off the async workers. At
                // most one answer per index connection is read at a time
                // (`AppState::answering`): more only queue on the connections' mutexes and
                // share the cores among more threads, which makes every answer slower and the
                // slowest much slower (docs/benchmarks.md).
                let place = state
                    .answering
                    .acquire()
                    .await
                    .map_err(ApiError::internal)?;
                let full = tokio::task::spawn_blocking(move || {
                    let index = state2.index.get();
                    answer(&state2, &index, &q, &at, &checked_at, Budget::Full)
                })
                .await
                .map_err(ApiError::internal)??;
                drop(place);
                state.metrics.answered(AnsweredOn::BlockingThread);
                full.ok_or_else(|| ApiError::internal("a full budget never gives up"))?
            }
        };
        Ok::<_, ApiError>(Bytes::from(signed_text(&state.answer_key, answer)?))
    };
    let bytes = match state.answers.slot(&epoch, key) {
        Some(slot) => slot.get_or_try_init(compute).await?.clone(),
        None => compute().await?,
    };
    if !contribute {
        return Ok(json_response(bytes));
    }
    // The answer is the same for every client asking the same in the same second, but whether
    // this client's report counts is not: read the shared answer back (the wire type reads
    // back losslessly), add `contributed` and sign it again. The same peer key as the rate
    // limit's (no `ConnectInfo`: not served by `toolmark_server`, one client).
    let peer = peer.map_or(IpAddr::from([127u8, 0, 0, 1]), |c| c.0.0.ip());
    let answer: Answer = serde_json::from_slice(&bytes).map_err(ApiError::internal)?;
    let state2 = state.clone();
    let answer = tokio::task::spawn_blocking(move || contribute_to(&state2, answer, peer, now))
        .await
        .map_err(ApiError::internal)??;
    Ok(json_response(Bytes::from(signed_text(
        &state.answer_key,
        answer,
    )?)))
}

/// Count the client's report for the answer's target and compared digest
/// (`crate::contribute`), and say in the answer whether it was counted (`contributed`, and
/// when not, why in `note`). Only a listed target with a compared digest is counted.
fn contribute_to(
    state: &AppState,
    mut answer: Answer,
    peer: IpAddr,
    now: std::time::SystemTime,
) -> Result<Answer, ApiError> {
    let compared = match answer.query.compared_by {
        ComparedBy::Full => answer.query.full_digest.map(|d| (DigestKind::Full, d)),
        ComparedBy::Mtl1 => answer.query.tool_set_digest.map(|d| (DigestKind::Mtl1, d)),
        // Client reports count tool sets (cloaking evidence): a kind of the surface is not one.
        _ => None,
    };
    let outcome = match (&answer.target, compared) {
        (Some(t), _) if !t.listed => Err("not counted: only reports about a listed target count"),
        (None, _) => Err("not counted: only reports about a listed target count"),
        (_, None) => Err("not counted: the request carried no digest to count"),
        (Some(t), Some((kind, digest))) => {
            state
                .client_reports
                .report(peer, &t.id.to_string(), kind, &digest, Day::of(now))?
        }
    };
    answer.contributed = Some(outcome.is_ok());
    if let Err(why) = outcome {
        if !answer.note.is_empty() {
            answer.note.push_str("; ");
        }
        answer.note.push_str(why);
    }
    Ok(answer)
}

/// How much an answer may read, by where it is computed ([`answer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Budget {
    /// On the async worker that read the request, between its socket reads and writes: only a
    /// question whose whole answer is a few indexed reads and one entry with its proof. An
    /// `endpoint` alone (with or without a digest: what WARDEN sends), matched to at most one
    /// target, not answered `different` (that reads up to [`MAX_PREVIOUS_ENTRIES`] earlier
    /// entries). `tools` (up to [`MAX_TOOLS`] tools hashed), a `name` (up to
    /// [`MAX_NAME_TARGETS`] targets, the look-alike names) or a `package` (its signals) go
    /// to a blocking thread, as does a question matched to several targets.
    Small,
    /// On a blocking thread: any question.
    Full,
}

/// Read the facts, decide, and assemble the (unsigned) answer, reading the index through
/// `index`. `None` when the question needs more than `budget` allows (only
/// [`Budget::Small`] gives up; what it read is dropped and the question asked again with
/// [`Budget::Full`]).
fn answer(
    state: &AppState,
    index: &toolmark_index::Index,
    q: &Query,
    at: &toolmark_log::reader::Signed,
    checked_at: &str,
    budget: Budget,
) -> Result<Option<Answer>, ApiError> {
    let small = budget == Budget::Small;
    if small
        && (q.tools.is_some()
            || q.surface.is_some()
            || q.tool.is_some()
            || q.name.is_some()
            || q.package.is_some())
    {
        return Ok(None);
    }
    let client = client_digests(q);
    let Some(found_or_not) = find_target(index, q, &client, budget)? else {
        return Ok(None);
    };
    let (row, no_target) = match found_or_not {
        Ok(row) => (Some(row), NoTarget::Unlisted),
        Err(why) => (None, why),
    };
    let found = match &row {
        Some(row) => Some(Found {
            row,
            id: row.id.parse().map_err(ApiError::internal)?,
        }),
        None => None,
    };
    // The latest successful observation: what `observed` says (the tools are listed on every
    // crawl).
    let latest = match found.as_ref().and_then(|f| f.row.last_ok_entry) {
        Some(i) => Some(read_entry(state, at, i)?),
        None => None,
    };
    // What the answer rests on: the latest successful observation, except for a kind of the
    // surface when it did not read the surface — then the latest one that did (a remote's is
    // read one crawl in `crawl.surface_days`).
    let read_at = match (client.by.kind(), &latest, &found) {
        (Some(_), Some(l), Some(f)) if l.entry.surface.is_none() => index
            .latest_surface_entry(f.row.id.as_str())?
            .filter(|&j| j < l.index),
        _ => None,
    };
    let current = match read_at {
        Some(j) => Some(read_entry(state, at, j)?),
        None => latest.clone(),
    };
    let tool = match (&found, &current, client.by) {
        (Some(f), Some(c), ComparedBy::Tool) => Some(tool_facts(state, index, at, f, c, &client)?),
        _ => None,
    };
    let mut facts = Facts {
        client: &client,
        sent_tools: q.tools.is_some(),
        target: found.as_ref(),
        no_target: &no_target,
        current: current.as_ref(),
        earlier: &[],
        tool: tool.as_ref(),
    };
    let earlier;
    if let (Match::Different, Some(f), None) = (decide(&facts).verdict, &found, &tool) {
        if small {
            return Ok(None);
        }
        earlier = read_earlier(state, index, at, &client, f)?;
        facts.earlier = &earlier;
    }
    let decision = decide(&facts);

    let observed = match (&found, &latest) {
        (Some(f), Some(latest)) => Some(observed(index, f, latest)?),
        _ => None,
    };
    let proof = match decision.backing {
        Some(b) => Some(wire::Proof {
            entry: String::from_utf8_lossy(&b.bytes).into_owned(),
            entry_index: b.index,
            tlog_proof: state
                .log
                .tlog_proof_of(b.index, &b.bytes, at)
                .map_err(ApiError::internal)?,
            tool_digests: decision.tool_digests.clone(),
        }),
        None => None,
    };
    let (pattern_scan, legs) = scan_part(index, q, &client, found.as_ref(), decision.verdict)?;
    let cp = &at.checkpoint;
    let (cosignatures, cosigned_at) = crate::witnesses::answer_cosignatures(state, at);
    Ok(Some(Answer {
        checked_at: checked_at.to_owned(),
        contributed: None,
        issuer: format!("{}/api/v1/issuer", state.base_url),
        legs,
        log: LogState {
            checkpoint: String::from_utf8_lossy(&at.note).into_owned(),
            cosignatures,
            cosigned_at,
            origin: cp.origin.clone(),
            root_hash: cp.root.to_base64(),
            tree_size: cp.size,
            vkey: state.log.vkey().to_owned(),
        },
        verdict: decision.verdict,
        note: decision.note.join("; "),
        observed,
        package_lookalike: q.package.as_deref().and_then(|p| state.names.package(p)),
        pattern_scan,
        proof,
        query: wire::Query {
            compared_by: client.by,
            digest_error: client.mtl1.clone().and_then(Result::err),
            endpoint: q.endpoint.clone(),
            full_digest: client.full,
            name: q.name.clone(),
            package: q.package.clone(),
            surface_digest: client.surface,
            tool_digest: client.tool.as_ref().map(|(d, _)| *d),
            tool_name: decision
                .tool_name
                .clone()
                .or_else(|| client.tool.as_ref().and_then(|(_, n)| n.clone())),
            tool_set_digest: client.mtl1_digest().copied(),
        },
        seen_before: decision.seen_before,
        server_lookalike: match &q.name {
            Some(name) => state.names.server(index, name)?,
            None => None,
        },
        signature: None,
        target: found
            .as_ref()
            .map(|f| target(state, index, f, current.as_ref()))
            .transpose()?,
        kind: ANSWER_TYPE.to_owned(),
    }))
}

/// `patternScan` and `legs`: the tools sent, scanned now (they are bounded by the body limit,
/// and a scan is pure and linear); else the target's stored scan when the answer is about its
/// current set (`same`, or nothing compared) and the row was made from that set; else, for a
/// target, `not-scanned` (toolmark keeps the scans of current sets only).
fn scan_part(
    index: &toolmark_index::Index,
    q: &Query,
    client: &Client,
    found: Option<&Found<'_>>,
    verdict: Match,
) -> Result<(Option<wire::PatternScan>, Option<wire::Legs>), ApiError> {
    use toolmark_toolset::{legs, rules};
    let rules_digest = crate::rules::digest().to_owned();
    if let Some(tools) = &q.tools {
        let Ok(set) = ToolSet::of_raw(tools) else {
            return Ok((None, None));
        };
        let scan = rules::scan(&set, None);
        let tool_legs = legs::set_legs(&set);
        let note = "the tools sent, scanned when answered (instructions are not sent)";
        return Ok((
            Some(pattern_scan(
                scan,
                rules_digest,
                note,
                client.mtl1_digest().copied(),
                client.full,
            )),
            Some({
                let (total, toxic) = (tool_legs.len() as u64, legs::toxic_flow(&tool_legs));
                answer_legs(tool_legs, total, toxic)
            }),
        ));
    }
    let Some(f) = found else {
        return Ok((None, None));
    };
    if client.by == ComparedBy::Tool {
        // The answer is about one tool, not the set a scan reads.
        return Ok((None, None));
    }
    let current = verdict == Match::Same || client.compared().is_none();
    let stored = if current {
        index
            .target_scan(&f.row.id)?
            .filter(|s| f.row.current_full.as_deref() == Some(s.full.as_str()))
    } else {
        None
    };
    let digests = (
        f.row.current_mtl1.as_deref().and_then(|d| d.parse().ok()),
        f.row.current_full.as_deref().and_then(|d| d.parse().ok()),
    );
    match stored {
        Some(s) => match s.scan {
            Some(scan) => {
                let mut note = String::from(
                    "toolmark's current tool set and server instructions of this target, \
                     scanned when observed",
                );
                if s.rules_digest != rules_digest {
                    note.push_str(" with an earlier rule set (a re-scan is pending)");
                }
                if client.by == ComparedBy::Mtl1 && client.compared().is_some() {
                    // MTL/1 covers names, descriptions and schemas: the rest the scan read
                    // (titles, annotations, `_meta`, instructions) is the set `fullDigest` names.
                    note.push_str(
                        "; compared by MTL/1, which covers names, descriptions and schemas only: \
                         matches and legs from titles, annotations, _meta and the instructions \
                         are those of the set fullDigest names",
                    );
                }
                let ps = pattern_scan(scan, s.rules_digest, &note, digests.0, digests.1);
                let legs = answer_legs(s.legs, s.legs_total, s.toxic_flow);
                Ok((Some(ps), Some(legs)))
            }
            None => Ok((
                Some(not_scanned(
                    "the observed tool set could not be read to scan it",
                )),
                None,
            )),
        },
        None if f.row.current_full.is_none() => Ok((None, None)),
        None if current => Ok((
            Some(not_scanned(
                "toolmark's current tool set of this target has no scan yet (a re-scan is \
                 pending)",
            )),
            None,
        )),
        None => Ok((
            Some(not_scanned(
                "the set compared is not toolmark's current one: toolmark keeps the scans of \
                 current sets only (send `tools` to have them scanned)",
            )),
            None,
        )),
    }
}

fn pattern_scan(
    scan: toolmark_toolset::rules::Scan,
    rules_digest: String,
    note: &str,
    tool_set_digest: Option<Sri>,
    full_digest: Option<Sri>,
) -> wire::PatternScan {
    wire::PatternScan {
        advise: scan.advise as u64,
        block: scan.block as u64,
        flagged: scan.flagged(),
        full_digest,
        matches: scan.matches,
        note: format!("{note}. A match is a reason to read the definition, not a finding of fact."),
        pattern_set: rules_digest,
        rules: scan.rules,
        status: wire::ScanStatus::Scanned,
        tool_set_digest,
        truncated: scan.truncated as u64,
    }
}

fn not_scanned(note: &str) -> wire::PatternScan {
    wire::PatternScan {
        advise: 0,
        block: 0,
        flagged: false,
        full_digest: None,
        matches: Vec::new(),
        note: note.to_owned(),
        pattern_set: crate::rules::digest().to_owned(),
        rules: toolmark_toolset::rules::RULES_ID.to_owned(),
        status: wire::ScanStatus::NotScanned,
        tool_set_digest: None,
        truncated: 0,
    }
}

/// `legs`: the first tools (at most `MAX_ANSWER_LEG_TOOLS`), `total` tools with a leg in all,
/// and the toxic flow over all of them.
fn answer_legs(
    mut tools: Vec<toolmark_toolset::legs::ToolLegs>,
    total: u64,
    toxic_flow: Option<toolmark_toolset::legs::Certainty>,
) -> wire::Legs {
    tools.truncate(wire::MAX_ANSWER_LEG_TOOLS);
    let truncated = total.saturating_sub(tools.len() as u64);
    wire::Legs {
        tools,
        toxic_flow,
        truncated,
    }
}

/// A package target's `packageVersion` and `packageSignals`. With `current` (the latest `ok`
/// entry the answer reads from the log at its checkpoint): that entry's version and what the
/// sandbox saw of it, so the signals describe the entry the verdict rests on. Without one
/// (never observed successfully): no `packageVersion`, and the signals of the newest
/// observation, whatever its status.
fn package_signals(
    index: &toolmark_index::Index,
    t: &TargetRow,
    current: Option<&Backing>,
) -> Result<(Option<String>, Option<wire::PackageSignals>), ApiError> {
    if t.kind != "package" {
        return Ok((None, None));
    }
    let shown = match current {
        Some(c) => index.package_observation(c.index)?,
        None => index.package_observations(&t.id, 1)?.pop(),
    };
    let Some(shown) = shown else {
        return Ok((None, None));
    };
    // The version the registry signals were compared with, when they were; else the version
    // observed before it.
    let compared = match shown.registry_previous {
        Some(entry) => index.package_observation(entry)?,
        None => None,
    };
    let previous_version = match &compared {
        Some(p) => Some(p.version.clone()),
        None => index.package_version_before(&t.id, shown.entry, &shown.version)?,
    };
    let previous_dependencies_known = compared
        .as_ref()
        .and_then(|p| p.registry.as_ref())
        .is_some_and(|r| r.dependencies.is_some());
    let version = current.map(|_| shown.version.clone());
    Ok((
        version,
        Some(signals_of(
            shown,
            previous_version,
            previous_dependencies_known,
        )),
    ))
}

/// The answer's `packageSignals` for an indexed package observation: its behaviour and its
/// registry signals (the facts of the entry the answer rests on, and their comparison with the
/// previous observed version's, both as the index derived them).
fn signals_of(
    shown: toolmark_index::packages::PackageObservation,
    previous_version: Option<String>,
    previous_dependencies_known: bool,
) -> wire::PackageSignals {
    let read = shown.registry.is_some();
    let facts = shown.registry.unwrap_or_default();
    let dependencies_compared = previous_dependencies_known && facts.dependencies.is_some();
    let comparison = shown.registry_comparison.unwrap_or_default();
    wire::PackageSignals {
        behaviour: shown.behaviour,
        behaviour_entry: shown.entry,
        bins: facts.bins.as_ref().map(|b| b.keys().cloned().collect()),
        dependency_specs_changed: comparison.dependency_specs_changed,
        deprecated: facts.deprecated.clone().flatten(),
        flags: comparison.flags,
        install_scripts: (read && facts.install_scripts.is_some())
            .then(|| facts.install_script_names()),
        maintainers: facts.maintainers.clone(),
        new_dependencies: dependencies_compared.then_some(comparison.new_dependencies),
        previous_publisher: comparison.previous_publisher,
        previous_version,
        provenance: facts.provenance_present(),
        publisher: facts.publisher_label(),
        repository: facts.repository.clone().flatten(),
        version: shown.version,
        yanked: facts.yanked,
    }
}

/// The answer's `target`.
fn target(
    state: &AppState,
    index: &toolmark_index::Index,
    found: &Found<'_>,
    current: Option<&Backing>,
) -> Result<wire::Target, ApiError> {
    let t = found.row;
    let (package_version, package_signals) = package_signals(index, t, current)?;
    Ok(wire::Target {
        endpoint: t.target.clone(),
        id: found.id.clone(),
        last_observed: t.last_observed_at.clone(),
        last_status: t.last_status.clone(),
        listed: t.delisted_at.is_none(),
        name: t.server.clone(),
        package_signals,
        package_version,
        page: format!("{}/s/{}", state.base_url, t.id),
        skip_reason: t.skip_reason.clone(),
        withheld_headers: t.withheld_headers.clone(),
    })
}

/// The answer's `observed`: the latest successful entry, and the target's counts.
fn observed(
    index: &toolmark_index::Index,
    found: &Found<'_>,
    current: &Backing,
) -> Result<Observed, ApiError> {
    let (at, current) = (current.index, &current.entry);
    let (ok_count, first_ok, changes) = index.target_counts(&found.row.id)?;
    let unchanged_since = match &current.full {
        Some(full) => index.unchanged_since(&found.row.id, at, &full.to_string())?,
        None => None,
    };
    Ok(Observed {
        changes,
        first_observed: first_ok,
        full_digest: current.full,
        last_observed: current.observed_at.clone(),
        observations: ok_count,
        tool_count: current.tools,
        tool_set_digest: current.mtl1_digest().copied(),
        tool_set_digest_error: current.mtl1_error().map(str::to_owned),
        unchanged_since,
    })
}

/// The answer with its `signature`: Ed25519 by the answer key over RFC 8785 of the rest.
fn sign(key: &ed25519_dalek::SigningKey, mut answer: Answer) -> Result<Answer, ApiError> {
    answer.signature = None;
    let bytes = toolmark_client::canonical(&answer).map_err(ApiError::internal)?;
    answer.signature = Some(signature_of(key, &bytes));
    Ok(answer)
}

/// The `signature` member over `bytes` (an answer's RFC 8785 bytes without it).
fn signature_of(key: &ed25519_dalek::SigningKey, bytes: &[u8]) -> wire::Signature {
    let signature = key.sign(bytes);
    wire::Signature {
        alg: "Ed25519".into(),
        key_id: key_id_of(key),
        public_key_hex: hex::encode(&key.verifying_key().to_bytes()),
        value: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signature.to_bytes()),
    }
}

/// The text of [`sign`]'s answer as `serde_json` writes it, written once: when the text of the
/// answer without `signature` is its own RFC 8785 form (`toolmark_toolset::canon::is_canonical`:
/// the answer types declare their members in that order), that text is what is signed, and the
/// signed text is it with the `signature` member put before the members written after it
/// (`target`, `type`). Otherwise (a text that is not canonical as written) [`sign`] and a
/// second write.
fn signed_text(key: &ed25519_dalek::SigningKey, mut answer: Answer) -> Result<Vec<u8>, ApiError> {
    answer.signature = None;
    let text = serde_json::to_vec(&answer).map_err(ApiError::internal)?;
    let canonical = std::str::from_utf8(&text).is_ok_and(toolmark_toolset::canon::is_canonical);
    // The members after `signature`, as serde_json writes them at the end of the answer.
    let mut tail = Vec::new();
    if let Some(target) = &answer.target {
        tail.extend_from_slice(b",\"target\":");
        serde_json::to_writer(&mut tail, target).map_err(ApiError::internal)?;
    }
    tail.extend_from_slice(b",\"type\":");
    serde_json::to_writer(&mut tail, &answer.kind).map_err(ApiError::internal)?;
    tail.push(b'}');
    if !canonical || !text.ends_with(&tail) || text.len() <= tail.len() + 1 {
        let signed = sign(key, answer)?;
        return serde_json::to_vec(&signed).map_err(ApiError::internal);
    }
    let signature = signature_of(key, &text);
    let before = text.len() - tail.len();
    let mut out = Vec::with_capacity(text.len() + 256);
    out.extend_from_slice(&text[..before]);
    out.extend_from_slice(b",\"signature\":");
    serde_json::to_writer(&mut out, &signature).map_err(ApiError::internal)?;
    out.extend_from_slice(&tail);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_lists_at_most_five_names_and_counts_the_rest() {
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        assert_eq!(bounded_list(names[..3].iter().copied(), 3), "a, b, c");
        assert_eq!(bounded_list(names[..5].iter().copied(), 5), "a, b, c, d, e");
        assert_eq!(
            bounded_list(names.iter().copied(), 7),
            "a, b, c, d, e, and 2 more"
        );
        // Of a longer list only the first were read: the count is of the whole.
        assert_eq!(
            bounded_list(names.iter().copied(), 300),
            "a, b, c, d, e, and 295 more"
        );
    }

    /// [`signed_text`] writes the bytes [`sign`] and `serde_json` wrote: for every golden
    /// answer (with and without `target`), and for one whose text is not canonical as written
    /// (a 16-digit tree size), which takes the second write.
    #[test]
    fn the_signed_text_is_the_signed_answers_serde_json_text() {
        let golden: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../tests/fixtures/check-golden.json")).unwrap();
        let key = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
        let mut without_target = 0;
        for g in golden.iter().filter(|g| g["status"] == 200) {
            let answer: Answer = serde_json::from_str(g["body"].as_str().unwrap()).unwrap();
            without_target += usize::from(answer.target.is_none());
            let want = serde_json::to_vec(&sign(&key, answer.clone()).unwrap()).unwrap();
            assert_eq!(signed_text(&key, answer).unwrap(), want, "{}", g["name"]);
        }
        assert!(without_target > 0);
        let mut long: Answer = serde_json::from_str(golden[0]["body"].as_str().unwrap()).unwrap();
        long.log.tree_size = 10_000_000_000_000_000;
        let want = serde_json::to_vec(&sign(&key, long.clone()).unwrap()).unwrap();
        assert_eq!(signed_text(&key, long).unwrap(), want);
    }

    #[test]
    fn answer_cache_is_per_second_and_checkpoint() {
        let cache = AnswerCache::default();
        let a = ("2026-11-30T10:00:00Z".to_owned(), 10, [1u8; 32]);
        let key = [7u8; 32];
        let slot = cache.slot(&a, key).unwrap();
        assert!(slot.get().is_none());
        slot.set(Bytes::from_static(b"answer")).unwrap();
        assert_eq!(
            cache.slot(&a, key).unwrap().get().map(|b| &b[..]),
            Some(&b"answer"[..])
        );
        // The next second, or a grown log, starts empty.
        let later = ("2026-11-30T10:00:01Z".to_owned(), 10, [1u8; 32]);
        assert!(cache.slot(&later, key).unwrap().get().is_none());
        let grown = ("2026-11-30T10:00:01Z".to_owned(), 11, [2u8; 32]);
        assert!(cache.slot(&grown, key).unwrap().get().is_none());
        // Bounded: past the cap, answers are computed without a slot.
        for i in 0..MAX_CACHED_ANSWERS + 10 {
            let mut k = [0u8; 32];
            k[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let _ = cache.slot(&grown, k);
        }
        assert_eq!(
            cache.inner.lock().unwrap().answers.len(),
            MAX_CACHED_ANSWERS
        );
        assert!(cache.slot(&grown, [0xff; 32]).is_none());
    }
}
