//! `POST /api/v1/check`: is the tool set a client received the one toolmark observed?
//!
//! Wire-compatible with HISTOR's request (`endpoint` | `package` | `name`, `tools` |
//! `toolSetDigest`) and answer members (`match`, `target`, `observed`, `seenBefore`, `note`,
//! `log`), with three differences a client can rely on (documented in `docs/api.md`):
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
//!    query, fragment and userinfo do not matter (`toolmark_index::index::endpoint_key`).
//!
//! The whole answer is signed: Ed25519 over the RFC 8785 bytes of the answer without its
//! `signature` member, with the key published at `/api/v1/issuer` (not the log key).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use ed25519_dalek::Signer;
use serde_json::{Map, Value, json};
use toolmark_index::index::TargetRow;
use toolmark_log::entry::Entry;
use toolmark_toolset::json::{self as tjson, Json};
use toolmark_toolset::{Sri, ToolSet, full, mtl1};

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

/// The answer's `type`: inside the signed bytes, so an answer cannot be replayed as anything
/// else the key signs.
pub const ANSWER_TYPE: &str = "toolmark.check/v1";

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
        "publicKeyHex": hex(&public),
        "publicKeyBase64": base64::engine::general_purpose::STANDARD.encode(public),
        "alg": "Ed25519",
        "keyId": key_id(&state),
        "signs": "RFC 8785 (JCS) bytes of a /check answer without its \"signature\" member",
        "answerType": ANSWER_TYPE,
        "logVkey": state.log.vkey(),
    }))
    .into_response()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A short, stable name for the answer key: the first 16 hex digits of SHA-256(public key).
fn key_id(state: &AppState) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(state.answer_key.verifying_key().to_bytes());
    hex(&d[..8])
}

/// What the client asked.
#[derive(Default)]
struct Query {
    endpoint: Option<String>,
    package: Option<String>,
    name: Option<String>,
    tools: Option<Vec<String>>,
    tool_set_digest: Option<String>,
    full_digest: Option<String>,
}

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

fn digest_string(name: &str, v: &Json) -> Result<String, ApiError> {
    let Some(s) = v.as_str() else {
        return Err(bad(format!("\"{name}\" must be a string")));
    };
    let valid =
        s.len() == 51 && s.starts_with("sha256-") && s.ends_with('=') && s.parse::<Sri>().is_ok();
    if !valid {
        return Err(bad(format!(
            "\"{name}\" must match ^sha256-[A-Za-z0-9+/]{{43}}=$"
        )));
    }
    Ok(s.to_owned())
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
            "toolSetDigest" => q.tool_set_digest = Some(digest_string(name, &m.value)?),
            "fullDigest" => q.full_digest = Some(digest_string(name, &m.value)?),
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
            "contribute" if !matches!(m.value, Json::Bool(_)) => {
                return Err(bad("\"contribute\" must be a boolean"));
            }
            _ => {}
        }
    }
    if q.endpoint.is_none() && q.package.is_none() && q.name.is_none() {
        return Err(bad("send endpoint, package or name"));
    }
    Ok(q)
}

/// The digests of the client's set, and how it is compared.
struct Client {
    mtl1: Option<String>,
    mtl1_error: Option<(String, String)>,
    full: Option<String>,
    /// Compare on the full digest (tools or fullDigest sent) rather than MTL/1.
    by_full: bool,
}

fn client_digests(q: &Query) -> Client {
    if let Some(tools) = &q.tools {
        let doc = format!("{{\"tools\":[{}]}}", tools.join(","));
        // The elements were parsed already, so the document parses.
        return match ToolSet::parse(doc.as_bytes()) {
            Ok(set) => {
                let (mtl1, mtl1_error) = match mtl1::tool_set_digest(&set) {
                    Ok(d) => (Some(d.to_string()), None),
                    Err(e) => (None, Some((e.code.as_str().to_owned(), e.detail))),
                };
                Client {
                    mtl1,
                    mtl1_error,
                    full: Some(full::digest(&set).to_string()),
                    by_full: true,
                }
            }
            Err(e) => Client {
                mtl1: None,
                mtl1_error: Some(("PARSE".into(), e.to_string())),
                full: None,
                by_full: true,
            },
        };
    }
    Client {
        mtl1: q.tool_set_digest.clone(),
        mtl1_error: None,
        full: q.full_digest.clone(),
        by_full: q.full_digest.is_some(),
    }
}

/// Find the target: by normalised endpoint or package, else by server name; a listed target
/// first, and one of the named server when a name is also given.
fn find_target(state: &AppState, q: &Query) -> Result<Option<TargetRow>, ApiError> {
    let index = state.index.get();
    let candidates = match (&q.endpoint, &q.package, &q.name) {
        (Some(e), _, _) => index.find_target_by_key(e)?,
        (None, Some(p), _) => index.find_target_by_key(p)?,
        (None, None, Some(n)) => index.targets_of(n)?,
        (None, None, None) => Vec::new(),
    };
    let rank = |t: &TargetRow| {
        (
            q.name.as_ref().is_some_and(|n| *n != t.server),
            t.delisted_at.is_some(),
            t.current_full.is_none(),
        )
    };
    Ok(candidates.into_iter().min_by_key(rank))
}

/// A log entry read from the log's bundles and decoded, with its canonical bytes.
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
    if entry.status != "ok" {
        return false;
    }
    if client.by_full {
        client.full.is_some() && entry.full == client.full
    } else {
        client.mtl1.is_some() && entry.mtl1 == client.mtl1
    }
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
    /// (`checkedAt`, checkpoint size, checkpoint root) the entries belong to.
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
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    use sha2::Digest;
    let body = crate::servers::body_or_error(body, MAX_BODY_BYTES)?;
    let q = parse_query(&body)?;
    let at = state.checkpoint().map_err(ApiError::internal)?;
    let epoch = (
        toolmark_index::time::utc((state.clock)()),
        at.checkpoint.size,
        at.checkpoint.root.0,
    );
    let key: [u8; 32] = sha2::Sha256::digest(&body).into();
    let compute = || async {
        let state2 = state.clone();
        let checked_at = epoch.0.clone();
        // SQLite and file reads are blocking; keep them off the async workers.
        let answer = tokio::task::spawn_blocking(move || answer(&state2, &q, &at, &checked_at))
            .await
            .map_err(ApiError::internal)??;
        let signed = sign(&state, answer)?;
        Ok::<_, ApiError>(Bytes::from(
            serde_json::to_vec(&signed).map_err(ApiError::internal)?,
        ))
    };
    let bytes = match state.answers.slot(&epoch, key) {
        Some(slot) => slot.get_or_try_init(compute).await?.clone(),
        None => compute().await?,
    };
    Ok(json_response(bytes))
}

fn answer(
    state: &AppState,
    q: &Query,
    at: &toolmark_log::reader::Signed,
    checked_at: &str,
) -> Result<Map<String, Value>, ApiError> {
    let client = client_digests(q);
    let target = find_target(state, q)?;

    let mut query = Map::new();
    for (k, v) in [
        ("endpoint", &q.endpoint),
        ("package", &q.package),
        ("name", &q.name),
    ] {
        if let Some(v) = v {
            query.insert(k.into(), json!(v));
        }
    }
    if let Some(d) = &client.mtl1 {
        query.insert("toolSetDigest".into(), json!(d));
    }
    if let Some(d) = &client.full {
        query.insert("fullDigest".into(), json!(d));
    }
    if let Some((code, detail)) = &client.mtl1_error {
        query.insert(
            "digestError".into(),
            json!({"code": code, "detail": detail}),
        );
    }
    query.insert(
        "comparedBy".into(),
        json!(if client.by_full {
            "toolmark/1"
        } else {
            "MTL/1"
        }),
    );

    let mut out = Map::new();
    out.insert("type".into(), json!(ANSWER_TYPE));
    out.insert("checkedAt".into(), json!(checked_at));
    out.insert(
        "issuer".into(),
        json!(format!("{}/api/v1/issuer", state.base_url)),
    );
    out.insert("query".into(), Value::Object(query));
    let cp = &at.checkpoint;
    out.insert(
        "log".into(),
        json!({
            "origin": cp.origin,
            "treeSize": cp.size,
            "rootHash": cp.root.to_base64(),
            "checkpoint": String::from_utf8_lossy(&at.note),
            "vkey": state.log.vkey(),
        }),
    );

    let Some(t) = target else {
        out.insert("match".into(), json!("not-listed"));
        out.insert(
            "note".into(),
            json!("toolmark lists no server at this endpoint, package or name"),
        );
        return Ok(out);
    };
    let (ok_count, first_ok, changes) = state.index.get().target_counts(&t.id)?;
    let page = format!("{}/s/{}", state.base_url, t.id);
    out.insert(
        "target".into(),
        json!({
            "id": t.id,
            "name": t.server,
            "endpoint": t.target,
            "page": page,
            "lastStatus": t.last_status,
            "lastObserved": t.last_observed_at,
            "listed": t.delisted_at.is_none(),
            "skipReason": t.skip_reason,
        }),
    );

    let mut note = Vec::new();
    if t.delisted_at.is_some() {
        note.push(format!(
            "the server was delisted from the registry on {}",
            t.delisted_at.as_deref().unwrap_or("?")
        ));
    }
    if t.last_status.as_deref().is_some_and(|s| s != "ok") && t.current_full.is_some() {
        note.push(format!(
            "the latest observation ended as {}; the comparison is with the last successful one",
            t.last_status.as_deref().unwrap_or("?")
        ));
    }

    let Some(current_entry) = t.last_ok_entry else {
        out.insert("match".into(), json!("not-observed"));
        note.insert(
            0,
            format!(
                "toolmark lists this target but has never read its tool set ({})",
                t.skip_reason
                    .clone()
                    .or(t.last_status.clone())
                    .unwrap_or_else(|| "not yet observed".into())
            ),
        );
        out.insert("note".into(), json!(note.join("; ")));
        return Ok(out);
    };
    let current = read_entry(state, at, current_entry)?;
    let mut observed = Map::new();
    for (k, v) in [
        ("toolSetDigest", json!(current.entry.mtl1)),
        ("toolSetDigestError", json!(current.entry.mtl1_error)),
        ("fullDigest", json!(current.entry.full)),
        ("toolCount", json!(current.entry.tools)),
        ("lastObserved", json!(current.entry.observed_at)),
        ("firstObserved", json!(first_ok)),
        ("observations", json!(ok_count)),
        ("changes", json!(changes)),
    ] {
        if !v.is_null() {
            observed.insert(k.into(), v);
        }
    }
    out.insert("observed".into(), Value::Object(observed));

    let compared = if client.by_full {
        &client.full
    } else {
        &client.mtl1
    };
    if compared.is_none() {
        let (m, n) = if q.tools.is_some() {
            ("undigestible", "the tools sent could not be digested")
        } else {
            (
                "no-digest",
                "send tools, toolSetDigest or fullDigest to compare",
            )
        };
        out.insert("match".into(), json!(m));
        note.insert(0, n.into());
        out.insert("note".into(), json!(note.join("; ")));
        return Ok(out);
    }
    if !client.by_full && current.entry.mtl1.is_none() {
        out.insert("match".into(), json!("undigestible"));
        note.insert(
            0,
            format!(
                "the observed tool set has no MTL/1 digest ({}); send tools or fullDigest to compare by the full digest",
                current.entry.mtl1_error.as_deref().unwrap_or("?")
            ),
        );
        out.insert("note".into(), json!(note.join("; ")));
        return Ok(out);
    }

    let backing = if entry_matches(&current.entry, &client) {
        out.insert("match".into(), json!("same"));
        note.insert(
            0,
            "the tool set equals toolmark's latest successful observation".into(),
        );
        Some(current)
    } else {
        // Earlier entries with this digest, located by the index, decided by the log.
        let candidates = {
            let index = state.index.get();
            if client.by_full {
                index.entries_with_full(&t.id, compared.as_deref().unwrap_or(""))?
            } else {
                index.entries_with_mtl1(&t.id, compared.as_deref().unwrap_or(""))?
            }
        };
        let mut matched: Vec<Backing> = Vec::new();
        for i in candidates.into_iter().take(MAX_PREVIOUS_ENTRIES) {
            if i >= at.checkpoint.size {
                continue;
            }
            let b = read_entry(state, at, i)?;
            let same_subject = b.entry.subject.id() == t.id;
            if same_subject && entry_matches(&b.entry, &client) {
                matched.push(b);
            }
        }
        matched.sort_by_key(|b| b.index);
        if let (Some(first), Some(last)) = (matched.first(), matched.last()) {
            out.insert("match".into(), json!("previously-observed"));
            out.insert(
                "seenBefore".into(),
                json!({
                    "first_seen": first.entry.observed_at,
                    "last_seen": last.entry.observed_at,
                    "observations": matched.len(),
                }),
            );
            note.insert(
                0,
                "the tool set is not the latest observed one but toolmark observed it before"
                    .into(),
            );
            matched.pop()
        } else {
            out.insert("match".into(), json!("different"));
            note.insert(
                0,
                "toolmark never observed this tool set at this target".into(),
            );
            None
        }
    };
    if let Some(b) = backing {
        let bundle = state
            .log
            .tlog_proof(b.index, at)
            .map_err(ApiError::internal)?;
        out.insert(
            "proof".into(),
            json!({
                "entryIndex": b.index,
                "entry": String::from_utf8_lossy(&b.bytes),
                "tlogProof": bundle,
            }),
        );
    }
    out.insert("note".into(), json!(note.join("; ")));
    Ok(out)
}

/// RFC 8785 bytes of a JSON value (answers hold only strings, integers, booleans and null).
pub fn canonical(value: &Value) -> Result<Vec<u8>, ApiError> {
    let text = serde_json::to_string(value).map_err(ApiError::internal)?;
    let parsed = tjson::parse(&text).map_err(ApiError::internal)?;
    toolmark_toolset::canon::to_vec(&parsed, toolmark_toolset::canon::Numbers::Ecmascript)
        .map_err(ApiError::internal)
}

/// What a client learns from an answer that verifies: the proved log entry and the checkpoint.
#[derive(Debug, Clone)]
pub struct VerifiedAnswer {
    /// The log entry the answer rests on (canonical, decoded).
    pub entry: Entry,
    /// Its index in the log.
    pub index: u64,
    /// The checkpoint it is proved in (signature checked against the log's key).
    pub checkpoint: toolmark_log::note::Checkpoint,
}

/// Check a `/check` answer the way docs/api.md tells a client to, offline: the Ed25519
/// signature (by the answer key, given as the 64 hex digits `/api/v1/issuer` publishes as
/// `publicKeyHex`) over RFC 8785 of the answer without `signature`; the tlog-proof bundle
/// against the log's verifier key `log_vkey`; that the bundle's entry is the answer's entry,
/// canonical, a successful observation (`status` `ok`) of the answer's target; for `same`,
/// that its digests are the answer's `observed` ones; and, when the client passes the digest
/// it `compared` (MTL/1 or full), that a `same` or `previously-observed` entry carries it.
/// Returns why not, in words, on the first failure.
pub fn verify_answer(
    answer: &Value,
    answer_key_hex: &str,
    log_vkey: &str,
    compared: Option<&str>,
) -> Result<VerifiedAnswer, String> {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let hex = answer_key_hex.len() == 64 && answer_key_hex.bytes().all(|b| b.is_ascii_hexdigit());
    let bytes: Option<Vec<u8>> = hex
        .then(|| {
            (0..32)
                .map(|i| u8::from_str_radix(answer_key_hex.get(2 * i..2 * i + 2)?, 16).ok())
                .collect()
        })
        .flatten();
    let key: [u8; 32] = bytes
        .and_then(|b| b.try_into().ok())
        .ok_or("the answer key is not 64 hex digits")?;
    let key =
        ed25519_dalek::VerifyingKey::from_bytes(&key).map_err(|e| format!("answer key: {e}"))?;
    let mut unsigned = answer
        .as_object()
        .ok_or("the answer is not an object")?
        .clone();
    let signature = unsigned.remove("signature").ok_or("no signature")?;
    let sig = signature["value"]
        .as_str()
        .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
        .ok_or("signature.value is not base64url")?;
    let sig = ed25519_dalek::Signature::from_slice(&sig).map_err(|e| format!("signature: {e}"))?;
    let bytes = canonical(&Value::Object(unsigned)).map_err(|e| format!("{e:?}"))?;
    key.verify_strict(&bytes, &sig)
        .map_err(|_| "the signature does not verify".to_owned())?;
    let bundle = answer["proof"]["tlogProof"]
        .as_str()
        .ok_or("no proof.tlogProof")?;
    let entry_bytes = answer["proof"]["entry"]
        .as_str()
        .ok_or("no proof.entry")?
        .as_bytes();
    let parsed =
        toolmark_log::proof::decode_tlog_proof(bundle).map_err(|e| format!("proof bundle: {e}"))?;
    if parsed.extra.as_deref() != Some(entry_bytes) {
        return Err("the bundle's entry is not the answer's entry".into());
    }
    let checkpoint = toolmark_log::proof::verify_tlog_proof(&parsed, entry_bytes, log_vkey)
        .map_err(|e| format!("inclusion proof: {e}"))?;
    if answer["proof"]["entryIndex"].as_u64() != Some(parsed.index) {
        return Err("proof.entryIndex is not the bundle's index".into());
    }
    let entry = Entry::decode(entry_bytes).map_err(|e| format!("entry: {e}"))?;
    if answer["target"]["id"].as_str() != Some(entry.subject.id().as_str()) {
        return Err("the entry is about another target".into());
    }
    if entry.status != "ok" {
        return Err(format!(
            "the entry is not a successful observation (status {})",
            entry.status
        ));
    }
    let verdict = answer["match"].as_str().unwrap_or("");
    if verdict == "same" {
        let observed = &answer["observed"];
        for (member, digest) in [
            ("fullDigest", entry.full.as_deref()),
            ("toolSetDigest", entry.mtl1.as_deref()),
        ] {
            if observed[member].as_str() != digest {
                return Err(format!("observed.{member} is not the entry's"));
            }
        }
    }
    if let Some(d) = compared {
        let carries = entry.full.as_deref() == Some(d) || entry.mtl1.as_deref() == Some(d);
        if matches!(verdict, "same" | "previously-observed") && !carries {
            return Err("the entry does not carry the digest that was compared".into());
        }
    }
    Ok(VerifiedAnswer {
        entry,
        index: parsed.index,
        checkpoint,
    })
}

fn sign(state: &AppState, mut answer: Map<String, Value>) -> Result<Value, ApiError> {
    answer.remove("signature");
    let bytes = canonical(&Value::Object(answer.clone()))?;
    let signature = state.answer_key.sign(&bytes);
    answer.insert(
        "signature".into(),
        json!({
            "alg": "Ed25519",
            "keyId": key_id(state),
            "publicKeyHex": hex(&state.answer_key.verifying_key().to_bytes()),
            "value": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signature.to_bytes()),
        }),
    );
    Ok(Value::Object(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

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
