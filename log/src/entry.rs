//! The canonical log entry: one per observation, at most [`MAX_ENTRY_BYTES`].
//!
//! An entry is an RFC 8785 canonical JSON object (integers only), so anyone can parse it with any
//! JSON library and anyone can re-derive its exact bytes. [`Entry::decode`] refuses bytes that
//! are not already canonical, so one observation has exactly one encoding and one leaf hash.
//! `docs/log-format.md` documents every member with an example.
//!
//! The sequencer, not the caller, sets `prev` (the index of the previous entry of the same
//! subject), so a monitor walking the chain backwards from any entry sees every observation of
//! that subject and can tell when one was left out.

use sha2::{Digest, Sha256};
use toolmark_toolset::json::{self, Json, Str};
use toolmark_toolset::{Sri, canon};

/// The format version every entry carries in `v`.
pub const FORMAT: &str = "toolmark-entry/1";

/// Largest entry: the bundle's uint16 length prefix (see [`crate::tiles::MAX_ENTRY_BYTES`]).
pub use crate::tiles::MAX_ENTRY_BYTES;

/// Largest integer an entry may hold: RFC 8785 numbers must survive a round trip through an
/// IEEE double, and the integers-only profile stops at 2^53−1.
const MAX_INTEGER: u64 = toolmark_toolset::canon::MAX_SAFE_INTEGER as u64;

/// Longest `detail` text kept in an entry. A status detail is a short reason ("http-503",
/// "tls: certificate expired"); anything longer belongs in the stored raw response, and the cap
/// keeps a hostile server's error text from pushing an entry past [`MAX_ENTRY_BYTES`].
pub const MAX_DETAIL_CHARS: usize = 1_000;

/// Longest server name, endpoint or package string (registry names are ≤ 200 characters, URLs in
/// practice far below 2,000, HISTOR's `/check` limit).
pub const MAX_SUBJECT_CHARS: usize = 2_000;

/// A target id (HISTOR's): 16 lowercase hex digits, the first 8 bytes of
/// SHA-256(`server` ‖ "\n" ‖ `target`). Only ever holds that form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetId(String);

/// Text that is not 16 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a target id is 16 lowercase hex digits")]
pub struct TargetIdError;

impl TargetId {
    /// The id of `target` of `server`.
    pub fn of(server: &str, target: &str) -> TargetId {
        let mut h = Sha256::new();
        h.update(server.as_bytes());
        h.update(b"\n");
        h.update(target.as_bytes());
        let digest = h.finalize();
        TargetId(toolmark_toolset::hex::encode(&digest[..8]))
    }

    /// The 16 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for TargetId {
    type Err = TargetIdError;

    fn from_str(s: &str) -> Result<TargetId, TargetIdError> {
        if s.len() == 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(TargetId(s.to_owned()))
        } else {
            Err(TargetIdError)
        }
    }
}

impl std::fmt::Display for TargetId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<&str> for TargetId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for TargetId {
    fn eq(&self, other: &String) -> bool {
        self.0 == *other
    }
}

/// Longest status name, in bytes.
pub const MAX_STATUS_BYTES: usize = 64;

/// How an observation ended, by name: `ok` (a complete tool set was read), or why not
/// (`auth-required`, `http-503`, `timeout`, a skip reason, …). Always 1–[`MAX_STATUS_BYTES`]
/// bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Status(String);

impl Status {
    /// The name of a successful observation.
    pub const OK: &str = "ok";

    /// A successful observation.
    pub fn ok() -> Status {
        Status(Self::OK.to_owned())
    }

    /// The status named `name`.
    ///
    /// # Errors
    ///
    /// [`EntryError::Member`]`("status")` if `name` is empty or longer than
    /// [`MAX_STATUS_BYTES`].
    pub fn new(name: impl Into<String>) -> Result<Status, EntryError> {
        let name = name.into();
        if name.is_empty() || name.len() > MAX_STATUS_BYTES {
            return Err(EntryError::Member("status"));
        }
        Ok(Status(name))
    }

    /// Whether a complete tool set was read.
    pub fn is_ok(&self) -> bool {
        self.0 == Self::OK
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<&str> for Status {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// What MTL/1 made of a received tool set: its digest, or the code of the error that left it
/// without one (`MTL-NUM-001`, …). An entry holds at most one of the two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MtlResult {
    /// The MTL/1 tool-set digest (`mtl1`).
    Digest(Sri),
    /// The MTL/1 error code (`mtl1Error`).
    Error(String),
}

impl MtlResult {
    /// From the entry's two members, `mtl1` and `mtl1Error`, which are never both present.
    ///
    /// # Errors
    ///
    /// [`EntryError::Mtl1AndError`] when both are.
    pub fn from_members(
        digest: Option<Sri>,
        error: Option<String>,
    ) -> Result<Option<MtlResult>, EntryError> {
        match (digest, error) {
            (Some(_), Some(_)) => Err(EntryError::Mtl1AndError),
            (Some(d), None) => Ok(Some(MtlResult::Digest(d))),
            (None, Some(code)) => Ok(Some(MtlResult::Error(code))),
            (None, None) => Ok(None),
        }
    }

    /// The digest, when there is one.
    pub fn digest(&self) -> Option<&Sri> {
        match self {
            MtlResult::Digest(d) => Some(d),
            MtlResult::Error(_) => None,
        }
    }

    /// The error code, when there is no digest.
    pub fn error(&self) -> Option<&str> {
        match self {
            MtlResult::Digest(_) => None,
            MtlResult::Error(code) => Some(code),
        }
    }
}

/// What `toolmark_toolset::mtl1` (via an observation's digests) gives: a digest or an error code.
impl From<Result<Sri, String>> for MtlResult {
    fn from(r: Result<Sri, String>) -> MtlResult {
        match r {
            Ok(d) => MtlResult::Digest(d),
            Err(code) => MtlResult::Error(code),
        }
    }
}

/// What was observed: a remote endpoint of a registry server, or a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The registry server name, e.g. `io.github.acme/weather`.
    pub server: String,
    /// `https://…` for a remote; `npm:<name>` or `pypi:<name>` for a package (no version).
    pub target: String,
    /// For a package: `npm:<name>@<version>` as observed.
    pub package: Option<String>,
}

impl Subject {
    /// HISTOR's target id of `server` and `target` ([`TargetId::of`]). Versions are not part of
    /// it, so the `prev` chain of a package runs across versions.
    pub fn id(&self) -> TargetId {
        TargetId::of(&self.server, &self.target)
    }
}

/// What an entry says of one kind of a server's surface beyond `tools/list`
/// ([`toolmark_toolset::surface::Kind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KindEntry {
    /// Read completely: its `toolmark/1` digest and how many entries it has
    /// (`{"count":n,"digest":"sha256-…"}`; a card's count is 1).
    Read {
        /// The kind's digest (`toolmark_toolset::surface::items`).
        digest: Sri,
        /// How many entries (prompts, resources, templates, page contents; 1 for a card).
        count: u64,
    },
    /// Not read completely, and why (`{"status":"partial"}`; a card no location served is
    /// `absent`).
    Unread(Status),
}

/// What an observation's digests say of a kind ([`toolmark_toolset::surface::digests`], an
/// observation's `SecondLook::digest`): the same, with an unread status that is no status name
/// (empty, or longer than [`MAX_STATUS_BYTES`]) recorded as `protocol`.
impl From<toolmark_toolset::surface::KindDigest> for KindEntry {
    fn from(d: toolmark_toolset::surface::KindDigest) -> KindEntry {
        use toolmark_toolset::surface::KindDigest;
        match d {
            KindDigest::Read { digest, count } => KindEntry::Read { digest, count },
            KindDigest::Unread(status) => KindEntry::Unread(
                Status::new(status).unwrap_or_else(|_| Status("protocol".to_owned())),
            ),
        }
    }
}

/// The surface of an entry: each kind observed, in the order of their names. A kind the server
/// does not declare is not in it; an observation made without the surface has none at all.
pub type EntrySurface = Vec<(toolmark_toolset::surface::Kind, KindEntry)>;

/// One observation as the log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What was observed.
    pub subject: Subject,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub observed_at: String,
    /// How the observation ended.
    pub status: Status,
    /// A short reason for the status, when there is one.
    pub detail: Option<String>,
    /// The MTL/1 digest or error, when a tool set was received (`mtl1` / `mtl1Error`).
    pub mtl1: Option<MtlResult>,
    /// The `toolmark/1` full digest, when a tool set was received.
    pub full: Option<Sri>,
    /// Number of tools received.
    pub tools: Option<u64>,
    /// The digest of the list of the tools' own digests (`toolmark-tool/1`), when a tool set
    /// was received: what a `/check` about one tool is proven against.
    pub tool_index: Option<Sri>,
    /// The surface beyond `tools/list`, when it was read ([`EntrySurface`]).
    pub surface: Option<EntrySurface>,
    /// The tools listed a second time from a second client identity, when that was done: the
    /// second listing's `toolmark/1` full digest and tool count, or the status it ended with,
    /// in a surface kind's shape. A digest other than `full` is the cloaking signal.
    pub second: Option<KindEntry>,
    /// Content address of the stored raw response.
    pub raw: Option<Sri>,
    /// Index of the previous entry of the same subject; set by the sequencer.
    pub prev: Option<u64>,
}

/// Why bytes are not a valid entry, or an entry cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// The bytes are not JSON.
    #[error("entry is not JSON: {0}")]
    Json(#[from] json::JsonError),
    /// The bytes are JSON but not as [`Entry::encode`] writes them.
    #[error("entry is not in canonical form (RFC 8785); re-encoding gives different bytes")]
    NotCanonical,
    /// A member is missing or has the wrong type or value.
    #[error("entry member {0:?} is missing or has the wrong type")]
    Member(&'static str),
    /// A member the format does not have.
    #[error("entry has an unknown member {0:?}")]
    Unknown(String),
    /// `v` is not [`FORMAT`].
    #[error("entry format {0:?} is not {FORMAT}")]
    Format(String),
    /// `observedAt` is not a time in the format's form.
    #[error("observedAt {0:?} is not YYYY-MM-DDTHH:MM:SSZ")]
    Time(String),
    /// A text member is too long.
    #[error("{0} is longer than {1} characters")]
    TooLong(&'static str, usize),
    /// A digest member is not a canonical `sha256-…` SRI string.
    #[error("{0:?} is not a sha256-… SRI digest")]
    Digest(String),
    /// Both `mtl1` and `mtl1Error` (a set has a digest or an error, not both).
    #[error("entry has both mtl1 and mtl1Error")]
    Mtl1AndError,
    /// The encoding is larger than a bundle can hold.
    #[error("entry is {0} bytes, more than {MAX_ENTRY_BYTES}")]
    TooLarge(usize),
}

/// `YYYY-MM-DDTHH:MM:SSZ` with plausible field ranges (calendar validity beyond day ≤ 31 is the
/// writer's business; the format is what keeps entries comparable as strings).
pub fn valid_time(t: &str) -> bool {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let num = |r: std::ops::Range<usize>| t[r].parse::<u32>().unwrap_or(99);
    b.len() == 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'Z'
        && (1..=12).contains(&num(5..7))
        && (1..=31).contains(&num(8..10))
        && num(11..13) <= 23
        && num(14..16) <= 59
        && num(17..19) <= 60
}

fn check_len(what: &'static str, v: &str, max: usize) -> Result<(), EntryError> {
    if v.chars().count() > max {
        Err(EntryError::TooLong(what, max))
    } else {
        Ok(())
    }
}

impl Entry {
    /// Check the members the types do not already guarantee against the format's rules.
    pub fn validate(&self) -> Result<(), EntryError> {
        if !valid_time(&self.observed_at) {
            return Err(EntryError::Time(self.observed_at.clone()));
        }
        check_len("subject.server", &self.subject.server, MAX_SUBJECT_CHARS)?;
        check_len("subject.target", &self.subject.target, MAX_SUBJECT_CHARS)?;
        if let Some(p) = &self.subject.package {
            check_len("subject.package", p, MAX_SUBJECT_CHARS)?;
        }
        if let Some(d) = &self.detail {
            check_len("detail", d, MAX_DETAIL_CHARS)?;
        }
        if self.subject.server.is_empty() || self.subject.target.is_empty() {
            return Err(EntryError::Member("subject"));
        }
        Ok(())
    }

    /// The MTL/1 digest, when the set was digestible.
    pub fn mtl1_digest(&self) -> Option<&Sri> {
        self.mtl1.as_ref().and_then(MtlResult::digest)
    }

    /// The MTL/1 error code, when a set was received but MTL/1 could not digest it.
    pub fn mtl1_error(&self) -> Option<&str> {
        self.mtl1.as_ref().and_then(MtlResult::error)
    }

    /// The canonical bytes (what the leaf hash covers).
    pub fn encode(&self) -> Result<Vec<u8>, EntryError> {
        self.validate()?;
        // Written member by member in RFC 8785 order (names sorted by UTF-16 code units:
        // detail < full < mtl1 < mtl1Error < observedAt < prev < raw < second < status <
        // subject < surface < toolIndex < tools < v; id < package < server < target; count <
        // digest < status). `decode` re-parses with the general JSON reader
        // and compares, which keeps this order honest.
        let mut out = Vec::with_capacity(512);
        let mut first = true;
        let mut key = |out: &mut Vec<u8>, k: &str| {
            out.push(if std::mem::take(&mut first) {
                b'{'
            } else {
                b','
            });
            canon::write_text(k, out);
            out.push(b':');
        };
        let text = |out: &mut Vec<u8>, v: &str| canon::write_text(v, out);
        if let Some(d) = &self.detail {
            key(&mut out, "detail");
            text(&mut out, d);
        }
        if let Some(f) = &self.full {
            key(&mut out, "full");
            text(&mut out, &f.to_string());
        }
        match &self.mtl1 {
            Some(MtlResult::Digest(m)) => {
                key(&mut out, "mtl1");
                text(&mut out, &m.to_string());
            }
            Some(MtlResult::Error(code)) => {
                key(&mut out, "mtl1Error");
                text(&mut out, code);
            }
            None => {}
        }
        key(&mut out, "observedAt");
        text(&mut out, &self.observed_at);
        key(&mut out, "prev");
        match self.prev {
            Some(p) => out.extend_from_slice(p.to_string().as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
        if let Some(r) = &self.raw {
            key(&mut out, "raw");
            text(&mut out, &r.to_string());
        }
        if let Some(second) = &self.second {
            key(&mut out, "second");
            write_kind(&mut out, second)?;
        }
        key(&mut out, "status");
        text(&mut out, self.status.as_str());
        key(&mut out, "subject");
        out.extend_from_slice(b"{\"id\":");
        text(&mut out, self.subject.id().as_str());
        if let Some(p) = &self.subject.package {
            out.extend_from_slice(b",\"package\":");
            text(&mut out, p);
        }
        out.extend_from_slice(b",\"server\":");
        text(&mut out, &self.subject.server);
        out.extend_from_slice(b",\"target\":");
        text(&mut out, &self.subject.target);
        out.push(b'}');
        if let Some(surface) = &self.surface {
            key(&mut out, "surface");
            let mut kinds: Vec<&(toolmark_toolset::surface::Kind, KindEntry)> =
                surface.iter().collect();
            kinds.sort_by_key(|(k, _)| k.as_str());
            out.push(b'{');
            for (i, (kind, e)) in kinds.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                text(&mut out, kind.as_str());
                out.push(b':');
                write_kind(&mut out, e)?;
            }
            out.push(b'}');
        }
        if let Some(t) = &self.tool_index {
            key(&mut out, "toolIndex");
            text(&mut out, &t.to_string());
        }
        if let Some(t) = self.tools {
            key(&mut out, "tools");
            out.extend_from_slice(t.to_string().as_bytes());
        }
        key(&mut out, "v");
        text(&mut out, FORMAT);
        out.push(b'}');
        if self.prev.is_some_and(|p| p > MAX_INTEGER) || self.tools.is_some_and(|t| t > MAX_INTEGER)
        {
            return Err(EntryError::Member("a number beyond 2^53"));
        }
        if out.len() > MAX_ENTRY_BYTES {
            return Err(EntryError::TooLarge(out.len()));
        }
        Ok(out)
    }

    /// The canonical bytes of an entry from its canonical bytes without `prev` (what
    /// [`Entry::encode`] gives with `prev: None`) and the `prev` to set: the writer encodes each
    /// entry once, for its dedup key and for its leaf.
    ///
    /// `plain` must be [`Entry::encode`]'s output: every `"` inside a canonical string is
    /// escaped, so `"prev":null` occurs only as the member itself. (The writer is the
    /// `store` feature's.)
    #[cfg_attr(not(feature = "store"), allow(dead_code))]
    pub(crate) fn encode_with_prev(plain: &[u8], prev: Option<u64>) -> Result<Vec<u8>, EntryError> {
        const NULL: &[u8] = b"\"prev\":null";
        let Some(prev) = prev else {
            return Ok(plain.to_vec());
        };
        if prev > MAX_INTEGER {
            return Err(EntryError::Member("a number beyond 2^53"));
        }
        let at = plain
            .windows(NULL.len())
            .position(|w| w == NULL)
            .ok_or(EntryError::Member("prev"))?;
        let digits = prev.to_string();
        let mut out = Vec::with_capacity(plain.len() + digits.len());
        out.extend_from_slice(&plain[..at + NULL.len() - 4]);
        out.extend_from_slice(digits.as_bytes());
        out.extend_from_slice(&plain[at + NULL.len()..]);
        if out.len() > MAX_ENTRY_BYTES {
            return Err(EntryError::TooLarge(out.len()));
        }
        Ok(out)
    }

    /// Parse canonical entry bytes; anything not exactly as [`Entry::encode`] writes is refused.
    pub fn decode(bytes: &[u8]) -> Result<Entry, EntryError> {
        if bytes.len() > MAX_ENTRY_BYTES {
            return Err(EntryError::TooLarge(bytes.len()));
        }
        let text = std::str::from_utf8(bytes).map_err(|_| EntryError::NotCanonical)?;
        let v = json::parse(text)?;
        let obj = v.as_object().ok_or(EntryError::Member("entry"))?;
        const KNOWN: [&str; 14] = [
            "second",
            "surface",
            "toolIndex",
            "v",
            "subject",
            "observedAt",
            "status",
            "prev",
            "detail",
            "mtl1",
            "mtl1Error",
            "full",
            "tools",
            "raw",
        ];
        if let Some((k, _)) = obj
            .iter()
            .find(|(k, _)| !k.as_str().is_some_and(|k| KNOWN.contains(&k)))
        {
            return Err(EntryError::Unknown(k.lossy().into_owned()));
        }
        let text_of = |key: &'static str| -> Result<Option<String>, EntryError> {
            match v.get(key) {
                None => Ok(None),
                Some(Json::String(Str::Text(t))) => Ok(Some(t.to_string())),
                Some(_) => Err(EntryError::Member(key)),
            }
        };
        let need = |key: &'static str| text_of(key)?.ok_or(EntryError::Member(key));
        let sri_of = |key: &'static str| -> Result<Option<Sri>, EntryError> {
            text_of(key)?
                .map(|d| d.parse().map_err(|_| EntryError::Digest(d)))
                .transpose()
        };
        let number_of = |key: &'static str,
                         value: Option<&Json>|
         -> Result<Option<u64>, EntryError> {
            match value {
                None | Some(Json::Null) => Ok(None),
                Some(Json::Number(t)) => t.parse().map(Some).map_err(|_| EntryError::Member(key)),
                Some(_) => Err(EntryError::Member(key)),
            }
        };
        let format = need("v")?;
        if format != FORMAT {
            return Err(EntryError::Format(format));
        }
        let subj = v.get("subject").ok_or(EntryError::Member("subject"))?;
        let field = |key: &'static str| match subj.get(key) {
            Some(Json::String(Str::Text(t))) => Ok(Some(t.to_string())),
            None => Ok(None),
            Some(_) => Err(EntryError::Member("subject")),
        };
        let mtl1 = MtlResult::from_members(sri_of("mtl1")?, text_of("mtl1Error")?)?;
        let entry = Entry {
            subject: Subject {
                server: field("server")?.ok_or(EntryError::Member("subject"))?,
                target: field("target")?.ok_or(EntryError::Member("subject"))?,
                package: field("package")?,
            },
            observed_at: need("observedAt")?,
            status: Status::new(need("status")?)?,
            detail: text_of("detail")?,
            mtl1,
            full: sri_of("full")?,
            tools: number_of("tools", v.get("tools"))?,
            tool_index: sri_of("toolIndex")?,
            surface: v.get("surface").map(surface_of).transpose()?,
            second: v
                .get("second")
                .map(|e| kind_of(e, EntryError::Member("second")))
                .transpose()?,
            raw: sri_of("raw")?,
            prev: number_of("prev", v.get("prev"))?,
        };
        // Re-encoding must give the same bytes: this also checks the subject id, the member
        // order and that `prev` is present (null or an index).
        if entry.encode()? != bytes {
            return Err(EntryError::NotCanonical);
        }
        Ok(entry)
    }
}

/// One kind's object, `{"count":n,"digest":"…"}` or `{"status":"…"}`, in canonical order
/// (a surface kind, and `second`).
fn write_kind(out: &mut Vec<u8>, e: &KindEntry) -> Result<(), EntryError> {
    match e {
        KindEntry::Read { digest, count } => {
            if *count > MAX_INTEGER {
                return Err(EntryError::Member("a number beyond 2^53"));
            }
            out.extend_from_slice(b"{\"count\":");
            out.extend_from_slice(count.to_string().as_bytes());
            out.extend_from_slice(b",\"digest\":");
            canon::write_text(&digest.to_string(), out);
        }
        KindEntry::Unread(status) => {
            out.extend_from_slice(b"{\"status\":");
            canon::write_text(status.as_str(), out);
        }
    }
    out.push(b'}');
    Ok(())
}

/// One kind's object ([`write_kind`]), `bad` when it has neither shape (members beyond these
/// are refused by the canonical re-encoding).
fn kind_of(e: &Json, bad: EntryError) -> Result<KindEntry, EntryError> {
    let text = |k: &str| match e.get(k) {
        Some(Json::String(Str::Text(t))) => Some(t.to_string()),
        _ => None,
    };
    match (text("status"), text("digest"), e.get("count")) {
        (Some(status), None, None) => Ok(KindEntry::Unread(Status::new(status)?)),
        (None, Some(digest), Some(Json::Number(n))) => Ok(KindEntry::Read {
            digest: digest.parse().map_err(|_| EntryError::Digest(digest))?,
            count: n.parse().map_err(|_| bad)?,
        }),
        _ => Err(bad),
    }
}

/// An entry's `surface` member: an object of kinds, each `{"count","digest"}` or
/// `{"status"}` (the canonical re-encoding refuses anything else, and the order).
fn surface_of(v: &Json) -> Result<EntrySurface, EntryError> {
    const BAD: EntryError = EntryError::Member("surface");
    let kinds = v.as_object().ok_or(BAD)?;
    kinds
        .iter()
        .map(|(name, e)| {
            let kind = name
                .as_str()
                .and_then(toolmark_toolset::surface::Kind::from_name)
                .ok_or(BAD)?;
            Ok((kind, kind_of(e, BAD)?))
        })
        .collect()
}

/// One line of `toolmark log append`'s input: an entry as JSON without `prev` (the log sets
/// it), its members named as in the encoding (`observedAt`, `mtl1Error`, …), no other member.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EntryLine {
    subject: SubjectLine,
    observed_at: String,
    status: String,
    detail: Option<String>,
    mtl1: Option<Sri>,
    mtl1_error: Option<String>,
    full: Option<Sri>,
    tools: Option<u64>,
    raw: Option<Sri>,
}

/// [`EntryLine`]'s `subject`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SubjectLine {
    server: String,
    target: String,
    package: Option<String>,
}

/// Why a line is not an entry ([`Entry::from_line`]).
#[derive(Debug, thiserror::Error)]
pub enum EntryLineError {
    /// Not JSON of the line's shape (a member missing, unknown or of the wrong type).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Of the shape, but a member's value is refused (a status name, `mtl1` with `mtl1Error`).
    #[error(transparent)]
    Entry(#[from] EntryError),
}

impl Entry {
    /// The entry one JSON line describes (`toolmark log append`'s input): every member but
    /// `prev`, which the sequencer sets.
    ///
    /// # Errors
    ///
    /// [`EntryLineError`] when the line is not of that shape or a member's value is refused.
    pub fn from_line(line: &str) -> Result<Entry, EntryLineError> {
        let l: EntryLine = serde_json::from_str(line)?;
        Ok(Entry {
            subject: Subject {
                server: l.subject.server,
                target: l.subject.target,
                package: l.subject.package,
            },
            observed_at: l.observed_at,
            status: Status::new(l.status)?,
            detail: l.detail,
            mtl1: MtlResult::from_members(l.mtl1, l.mtl1_error)?,
            full: l.full,
            tools: l.tools,
            tool_index: None,
            surface: None,
            second: None,
            raw: l.raw,
            prev: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolmark_toolset::canon::Numbers;

    fn sri(s: &str) -> Sri {
        s.parse().unwrap()
    }

    #[test]
    fn a_line_is_an_entry_without_prev_and_refuses_unknown_members_and_both_mtl1_members() {
        let line = r#"{"subject":{"server":"s","target":"https://a.example/mcp"},
            "observedAt":"2026-01-01T00:00:00Z","status":"ok","tools":2,
            "mtl1":"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}"#;
        let e = Entry::from_line(line).unwrap();
        assert_eq!(e.subject.target, "https://a.example/mcp");
        assert_eq!(e.tools, Some(2));
        assert_eq!(e.prev, None);
        assert!(e.mtl1_digest().is_some());
        let unknown = line.replace("\"tools\"", "\"prev\":1,\"tools\"");
        assert!(matches!(
            Entry::from_line(&unknown),
            Err(EntryLineError::Json(_))
        ));
        let both = line.replace("\"tools\"", "\"mtl1Error\":\"MTL-NUM-001\",\"tools\"");
        assert!(matches!(
            Entry::from_line(&both),
            Err(EntryLineError::Entry(EntryError::Mtl1AndError))
        ));
    }

    pub(crate) fn sample() -> Entry {
        Entry {
            subject: Subject {
                server: "io.example/weather".into(),
                target: "https://example.com/mcp".into(),
                package: None,
            },
            observed_at: "2026-11-30T14:00:00Z".into(),
            status: Status::ok(),
            detail: None,
            mtl1: Some(MtlResult::Digest(sri(
                "sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c=",
            ))),
            full: Some(sri("sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c=")),
            tools: Some(2),
            tool_index: None,
            surface: None,
            second: None,
            raw: Some(sri("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")),
            prev: Some(41),
        }
    }

    #[test]
    fn encodes_canonically_and_round_trips() {
        let e = sample();
        let bytes = e.encode().unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"full":"sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c=","mtl1":"sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c=","observedAt":"2026-11-30T14:00:00Z","prev":41,"raw":"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","status":"ok","subject":{"id":"8b94d77765f58d0e","server":"io.example/weather","target":"https://example.com/mcp"},"tools":2,"v":"toolmark-entry/1"}"#
        );
        assert_eq!(Entry::decode(&bytes).unwrap(), e);
        let first = Entry {
            prev: None,
            ..sample()
        };
        let bytes = first.encode().unwrap();
        assert!(
            String::from_utf8(bytes.clone())
                .unwrap()
                .contains("\"prev\":null")
        );
        assert_eq!(Entry::decode(&bytes).unwrap(), first);
    }

    #[test]
    fn the_surface_and_the_tool_index_are_written_in_canonical_order_and_read_back() {
        use toolmark_toolset::surface::Kind;
        let d = sri("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        let e = Entry {
            tool_index: Some(d),
            surface: Some(vec![
                (
                    Kind::Prompts,
                    KindEntry::Read {
                        digest: d,
                        count: 3,
                    },
                ),
                (
                    Kind::Card,
                    KindEntry::Unread(Status::new("absent").unwrap()),
                ),
                (
                    Kind::Resources,
                    KindEntry::Read {
                        digest: d,
                        count: 0,
                    },
                ),
                (
                    Kind::Templates,
                    KindEntry::Unread(Status::new("partial").unwrap()),
                ),
            ]),
            ..sample()
        };
        let bytes = e.encode().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let d = d.to_string();
        assert!(text.contains(&format!(
            r#""subject":{{"id":"8b94d77765f58d0e","server":"io.example/weather","target":"https://example.com/mcp"}},"surface":{{"card":{{"status":"absent"}},"prompts":{{"count":3,"digest":"{d}"}},"resourceTemplates":{{"status":"partial"}},"resources":{{"count":0,"digest":"{d}"}}}},"toolIndex":"{d}","tools":2,"#
        )), "{text}");
        let back = Entry::decode(&bytes).unwrap();
        assert_eq!(back.tool_index, e.tool_index);
        // Read back in the order of the names.
        assert_eq!(back.encode().unwrap(), bytes);
        assert_eq!(back.surface.as_ref().unwrap()[0].0, Kind::Card);
        // Read without any kind: an empty object, not an absent member.
        let empty = Entry {
            surface: Some(Vec::new()),
            ..sample()
        };
        let bytes = empty.encode().unwrap();
        assert!(String::from_utf8_lossy(&bytes).contains(r#""surface":{},"#));
        assert_eq!(Entry::decode(&bytes).unwrap(), empty);
    }

    #[test]
    fn a_surface_member_of_another_shape_is_refused() {
        let good = Entry {
            surface: Some(Vec::new()),
            ..sample()
        }
        .encode()
        .unwrap();
        let good = String::from_utf8(good).unwrap();
        for bad in [
            r#""surface":{"tools":{"status":"ok"}}"#,
            r#""surface":{"prompts":{"status":"ok","count":1}}"#,
            r#""surface":{"prompts":{"count":1}}"#,
            r#""surface":{"prompts":{"count":1.5,"digest":"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}}"#,
            r#""surface":{"prompts":{"count":1,"digest":"md5-x"}}"#,
            r#""surface":[]"#,
        ] {
            let text = good.replace(r#""surface":{}"#, bad);
            assert!(Entry::decode(text.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_second_look_is_written_between_raw_and_status_and_read_back() {
        let d = sri("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        let e = Entry {
            second: Some(KindEntry::Read {
                digest: d,
                count: 2,
            }),
            ..sample()
        };
        let bytes = e.encode().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.contains(&format!(
                r#""raw":"{d}","second":{{"count":2,"digest":"{d}"}},"status":"ok","#
            )),
            "{text}"
        );
        assert_eq!(Entry::decode(&bytes).unwrap(), e);
        let timed_out = Entry {
            second: Some(KindEntry::Unread(Status::new("timeout").unwrap())),
            raw: None,
            ..sample()
        };
        let bytes = timed_out.encode().unwrap();
        assert!(
            String::from_utf8_lossy(&bytes)
                .contains(r#""prev":41,"second":{"status":"timeout"},"status":"ok","#)
        );
        assert_eq!(Entry::decode(&bytes).unwrap(), timed_out);
        // None made: no member at all.
        assert!(!String::from_utf8_lossy(&sample().encode().unwrap()).contains("second"));
    }

    #[test]
    fn a_second_member_of_another_shape_is_refused() {
        let good = Entry {
            second: Some(KindEntry::Unread(Status::new("timeout").unwrap())),
            ..sample()
        }
        .encode()
        .unwrap();
        let good = String::from_utf8(good).unwrap();
        let member = r#""second":{"status":"timeout"}"#;
        assert!(good.contains(member));
        for bad in [
            r#""second":{"status":"ok","count":1}"#,
            r#""second":{"count":1}"#,
            r#""second":{"count":-1,"digest":"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}"#,
            r#""second":{"count":1,"digest":"md5-x"}"#,
            r#""second":{"status":""}"#,
            r#""second":{"status":"timeout","extra":1}"#,
            r#""second":"sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=""#,
            r#""second":null"#,
        ] {
            let text = good.replace(member, bad);
            assert!(Entry::decode(text.as_bytes()).is_err(), "{bad}");
        }
        // Out of canonical order (after `status`): refused too.
        let moved = good
            .replace(&format!("{member},"), "")
            .replace(r#""status":"ok","#, &format!(r#""status":"ok",{member},"#));
        assert_eq!(
            Entry::decode(moved.as_bytes()),
            Err(EntryError::NotCanonical)
        );
    }

    #[test]
    fn a_kind_digest_becomes_the_entry_kind_with_an_unnamed_status_as_protocol() {
        use toolmark_toolset::surface::KindDigest;
        let d = sri("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        assert_eq!(
            KindEntry::from(KindDigest::Read {
                digest: d,
                count: 3
            }),
            KindEntry::Read {
                digest: d,
                count: 3
            }
        );
        assert_eq!(
            KindEntry::from(KindDigest::Unread("timeout".into())),
            KindEntry::Unread(Status::new("timeout").unwrap())
        );
        for unnamed in [String::new(), "x".repeat(MAX_STATUS_BYTES + 1)] {
            assert_eq!(
                KindEntry::from(KindDigest::Unread(unnamed)),
                KindEntry::Unread(Status::new("protocol").unwrap())
            );
        }
    }

    #[test]
    fn prev_spliced_into_the_plain_encoding_is_the_encoding_with_prev() {
        // Strings that hold the member's own bytes, escaped or not, before and after it.
        let tricky = [
            None,
            Some("\"prev\":null".to_string()),
            Some("prev\":null,\"prev\":null\\\"prev\":null".to_string()),
        ];
        for detail in tricky {
            for prev in [None, Some(0), Some(7), Some(MAX_INTEGER)] {
                let mut e = Entry {
                    detail: detail.clone(),
                    prev: None,
                    ..sample()
                };
                e.subject.server = "io.example/\"prev\":null".into();
                let plain = e.encode().unwrap();
                e.prev = prev;
                assert_eq!(
                    Entry::encode_with_prev(&plain, prev).unwrap(),
                    e.encode().unwrap(),
                    "{detail:?} {prev:?}"
                );
            }
        }
        let plain = Entry {
            prev: None,
            ..sample()
        }
        .encode()
        .unwrap();
        assert!(Entry::encode_with_prev(&plain, Some(MAX_INTEGER + 1)).is_err());
    }

    #[test]
    fn the_direct_writer_is_rfc8785() {
        // Whatever members are present, the general canonicaliser leaves the output unchanged.
        let variants = [
            sample(),
            Entry {
                detail: Some("tls: \"bad\" cert \u{1}\n é 😀".into()),
                mtl1: Some(MtlResult::Error("MTL-NUM-001".into())),
                tools: None,
                tool_index: None,
                surface: None,
                second: None,
                raw: None,
                prev: None,
                subject: Subject {
                    server: "io.example/pkg".into(),
                    target: "npm:@scope/pkg".into(),
                    package: Some("npm:@scope/pkg@1.2.3".into()),
                },
                ..sample()
            },
            Entry {
                full: None,
                mtl1: None,
                ..sample()
            },
        ];
        for e in variants {
            let bytes = e.encode().unwrap();
            let v = json::parse(std::str::from_utf8(&bytes).unwrap()).unwrap();
            assert_eq!(canon::to_vec(&v, Numbers::IntegersOnly).unwrap(), bytes);
            assert_eq!(Entry::decode(&bytes).unwrap(), e);
        }
    }

    #[test]
    fn an_entry_holds_a_digest_or_an_mtl1_error_not_both() {
        let good = String::from_utf8(sample().encode().unwrap()).unwrap();
        let both = good.replace(
            "\"observedAt\"",
            "\"mtl1Error\":\"MTL-NUM-001\",\"observedAt\"",
        );
        assert_eq!(
            Entry::decode(both.as_bytes()),
            Err(EntryError::Mtl1AndError)
        );
        let e = sample();
        assert!(e.mtl1_digest().is_some() && e.mtl1_error().is_none());
        let undigestible = Entry {
            mtl1: Some(MtlResult::Error("MTL-NUM-001".into())),
            ..sample()
        };
        assert_eq!(undigestible.mtl1_error(), Some("MTL-NUM-001"));
        assert_eq!(undigestible.mtl1_digest(), None);
    }

    #[test]
    fn target_ids_parse_only_in_their_one_form() {
        let id: TargetId = "8b94d77765f58d0e".parse().unwrap();
        assert_eq!(id, sample().subject.id());
        assert_eq!(id.to_string(), "8b94d77765f58d0e");
        for bad in [
            "8B94D77765F58D0E",
            "8b94d77765f58d0",
            "8b94d77765f58d0e0",
            "",
            "8b94d77765f58d0g",
        ] {
            assert_eq!(bad.parse::<TargetId>(), Err(TargetIdError), "{bad:?}");
        }
    }

    #[test]
    fn status_ok_is_the_one_successful_name() {
        assert!(Status::ok().is_ok());
        assert_eq!(Status::ok(), "ok");
        assert!(!Status::new("auth-required").unwrap().is_ok());
    }

    #[test]
    fn subject_id_is_histors_target_id() {
        // histor-peer.md §1.2: sha256("io.example/weather\nhttps://example.com/mcp")[:16].
        assert_eq!(sample().subject.id(), "8b94d77765f58d0e");
    }

    #[test]
    fn refuses_non_canonical_or_invalid_entries() {
        let good = String::from_utf8(sample().encode().unwrap()).unwrap();
        for bad in [
            good.replace("\"prev\":41,", "\"prev\":41, "),
            good.replace("\"prev\":41,", ""),
            good.replace("8b94d77765f58d0e", "0000000000000000"),
            good.replace("\"tools\":2", "\"tools\":2.0"),
            good.replace("\"v\":\"toolmark-entry/1\"", "\"v\":\"toolmark-entry/2\""),
            good.replace("{\"full\"", "{\"extra\":1,\"full\""),
            good.replace("2026-11-30T14:00:00Z", "2026-11-30 14:00:00"),
            good.replace("\"status\":\"ok\"", "\"status\":7"),
            "[]".into(),
            "{".into(),
        ] {
            assert!(Entry::decode(bad.as_bytes()).is_err(), "accepted {bad}");
        }
        assert!(Entry::decode(&vec![b' '; MAX_ENTRY_BYTES + 1]).is_err());
    }

    #[test]
    fn validation_bounds_every_member() {
        let long = Entry {
            detail: Some("x".repeat(MAX_DETAIL_CHARS + 1)),
            ..sample()
        };
        assert_eq!(
            long.encode(),
            Err(EntryError::TooLong("detail", MAX_DETAIL_CHARS))
        );
        // A digest that is not one cannot be built; in bytes it is refused by name.
        let good = String::from_utf8(sample().encode().unwrap()).unwrap();
        let bad_digest = good.replace(
            "\"mtl1\":\"sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c=\"",
            "\"mtl1\":\"md5-abc\"",
        );
        assert!(matches!(
            Entry::decode(bad_digest.as_bytes()),
            Err(EntryError::Digest(_))
        ));
        let unnamed = Status::new("");
        assert_eq!(unnamed, Err(EntryError::Member("status")));
        assert!(Status::new("x".repeat(MAX_STATUS_BYTES + 1)).is_err());
        assert!(Status::new("x".repeat(MAX_STATUS_BYTES)).is_ok());
        for t in [
            "2026-13-01T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T14:00:00+00:00",
        ] {
            assert!(!valid_time(t), "{t}");
        }
        assert!(valid_time("2026-11-30T23:59:60Z"));
    }
}
