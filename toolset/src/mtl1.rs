//! MTL/1: the tool-set digest, subject descriptor (MSD) and subject digest that HISTOR and WARDEN
//! compute, byte for byte (`histor.subject` 0.4.2; MCP Trust Label PROFILE §4–§5).
//!
//! The tool-set digest covers only `name`, `description`, `inputSchema` and (when the server sent
//! an object) `outputSchema` of each tool, sorted by name in UTF-16 order and canonicalised with
//! RFC 8785 under the integers-only profile. Errors are checked in HISTOR's order: empty set
//! (`MTL-SUBJ-002`), then each entry in turn (`MTL-SUBJ-001`), then duplicate names
//! (`MTL-SUBJ-003`), then canonicalisation in canonical order (`MTL-NUM-001` for a fraction,
//! exponent or out-of-range integer; `MTL-SUBJ-001` for an unpaired surrogate).

use crate::canon::{self, CanonError, Numbers};
use crate::json::{Json, Str};
use crate::model::ToolSet;
use crate::sri::Sri;
use std::fmt;

/// The registry URN HISTOR uses for the official MCP registry.
pub const REGISTRY_OFFICIAL: &str = "urn:awr:mtl:1:registry:registry.modelcontextprotocol.io";

/// The MTL/1 error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MtlCode {
    /// A tool entry is not an object, has no non-empty string name, or is not canonicalizable.
    Subj001,
    /// The tool set is empty.
    Subj002,
    /// Two tools share a name.
    Subj003,
    /// A number MTL/1 cannot digest reproducibly (fraction, exponent, beyond ±(2^53−1)).
    Num001,
}

impl MtlCode {
    /// The code as HISTOR spells it (`MTL-SUBJ-001`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            MtlCode::Subj001 => "MTL-SUBJ-001",
            MtlCode::Subj002 => "MTL-SUBJ-002",
            MtlCode::Subj003 => "MTL-SUBJ-003",
            MtlCode::Num001 => "MTL-NUM-001",
        }
    }
}

impl fmt::Display for MtlCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool set (or descriptor) MTL/1 cannot digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct MtlError {
    /// Which rule refused it.
    pub code: MtlCode,
    /// Why, for a human.
    pub detail: String,
}

fn err(code: MtlCode, detail: impl Into<String>) -> MtlError {
    MtlError {
        code,
        detail: detail.into(),
    }
}

/// A tool reduced to the members MTL/1 digests (borrowed from the parsed entry).
struct Normalised<'a> {
    name: &'a Str,
    description: Option<&'a Json>,
    input_schema: Option<&'a Json>,
    output_schema: Option<&'a Json>,
}

fn normalise(entry: &Json) -> Result<Normalised<'_>, MtlError> {
    if !matches!(entry, Json::Object(_)) {
        return Err(err(MtlCode::Subj001, "tool entry is not a JSON object"));
    }
    let name = match entry.get("name") {
        Some(Json::String(s)) if !is_empty(s) => s,
        _ => {
            return Err(err(
                MtlCode::Subj001,
                "tool entry has no non-empty string name",
            ));
        }
    };
    let description = entry
        .get("description")
        .filter(|v| matches!(v, Json::String(_)));
    let input_schema = entry
        .get("inputSchema")
        .filter(|v| matches!(v, Json::Object(_)));
    let output_schema = entry
        .get("outputSchema")
        .filter(|v| matches!(v, Json::Object(_)));
    Ok(Normalised {
        name,
        description,
        input_schema,
        output_schema,
    })
}

fn is_empty(s: &Str) -> bool {
    match s {
        Str::Text(t) => t.is_empty(),
        Str::Units(u) => u.is_empty(),
    }
}

/// Normalise, check and sort the entries: SUBJ-002, then SUBJ-001 per entry, then SUBJ-003.
fn sorted_entries<'a>(entries: &[&'a Json]) -> Result<Vec<Normalised<'a>>, MtlError> {
    if entries.is_empty() {
        return Err(err(
            MtlCode::Subj002,
            "the tool set is empty; there is nothing to pin",
        ));
    }
    let mut norm = entries
        .iter()
        .map(|e| normalise(e))
        .collect::<Result<Vec<_>, _>>()?;
    // Sort by UTF-16 name with the original position as tie-breaker: equal neighbours are then
    // the duplicates, and the first pair found names the earliest second occurrence's partner.
    let mut order: Vec<usize> = (0..norm.len()).collect();
    order.sort_by(|&a, &b| norm[a].name.utf16_cmp(norm[b].name).then(a.cmp(&b)));
    if let Some(w) = order
        .windows(2)
        .filter(|w| norm[w[0]].name == norm[w[1]].name)
        .min_by_key(|w| w[1])
    {
        return Err(err(
            MtlCode::Subj003,
            format!(
                "duplicate tool name {:?} at positions {} and {}",
                norm[w[0]].name.lossy(),
                w[0],
                w[1]
            ),
        ));
    }
    let mut sorted = Vec::with_capacity(norm.len());
    let mut slots: Vec<Option<Normalised<'a>>> = norm.drain(..).map(Some).collect();
    for i in order {
        sorted.push(slots[i].take().expect("each index once"));
    }
    Ok(sorted)
}

fn write_entry(e: &Normalised<'_>, out: &mut Vec<u8>) -> Result<(), CanonError> {
    // Member names in UTF-16 order: description < inputSchema < name < outputSchema.
    out.extend_from_slice(b"{\"description\":");
    match e.description {
        Some(d) => canon::write(d, Numbers::IntegersOnly, out)?,
        None => out.extend_from_slice(b"\"\""),
    }
    out.extend_from_slice(b",\"inputSchema\":");
    match e.input_schema {
        Some(s) => canon::write(s, Numbers::IntegersOnly, out)?,
        None => out.extend_from_slice(b"{}"),
    }
    out.extend_from_slice(b",\"name\":");
    canon::write(&Json::String(e.name.clone()), Numbers::IntegersOnly, out)?;
    if let Some(o) = e.output_schema {
        out.extend_from_slice(b",\"outputSchema\":");
        canon::write(o, Numbers::IntegersOnly, out)?;
    }
    out.push(b'}');
    Ok(())
}

fn canon_error(e: CanonError, tool: &Str) -> MtlError {
    match e {
        CanonError::NonInteger(_) | CanonError::IntegerRange(_) => err(
            MtlCode::Num001,
            format!(
                "a tool schema in tool {:?} contains a JSON number MTL/1 cannot digest reproducibly ({e})",
                tool.lossy()
            ),
        ),
        CanonError::LoneSurrogate => err(
            MtlCode::Subj001,
            format!(
                "a tool entry in tool {:?} is not canonicalizable ({e})",
                tool.lossy()
            ),
        ),
    }
}

/// Write the canonical array MTL/1 hashes, entry by entry, handing each piece to `sink` (so a
/// digest never holds the whole form in memory).
fn emit(entries: &[&Json], mut sink: impl FnMut(&[u8])) -> Result<(), MtlError> {
    let sorted = sorted_entries(entries)?;
    let mut buf = Vec::with_capacity(4096);
    sink(b"[");
    for (i, e) in sorted.iter().enumerate() {
        buf.clear();
        if i > 0 {
            buf.push(b',');
        }
        write_entry(e, &mut buf).map_err(|c| canon_error(c, e.name))?;
        sink(&buf);
    }
    sink(b"]");
    Ok(())
}

fn values(set: &ToolSet) -> Vec<&Json> {
    set.tools.iter().map(|t| &t.value).collect()
}

/// The canonical bytes MTL/1 hashes for these tool entries.
pub fn canonical_entries(entries: &[&Json]) -> Result<Vec<u8>, MtlError> {
    let mut out = Vec::new();
    emit(entries, |piece| out.extend_from_slice(piece))?;
    Ok(out)
}

/// The canonical bytes MTL/1 hashes for a tool set.
pub fn canonical_bytes(set: &ToolSet) -> Result<Vec<u8>, MtlError> {
    canonical_entries(&values(set))
}

/// The MTL/1 tool-set digest (`histor.subject.tool_set_digest`).
pub fn tool_set_digest(set: &ToolSet) -> Result<Sri, MtlError> {
    let mut hasher = Sri::hasher();
    emit(&values(set), |piece| hasher.update(piece))?;
    Ok(hasher.finish())
}

/// What an MTL/1 subject descriptor says about where a tool set came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectInfo {
    /// The registry's server name, e.g. `io.github.example/weather`.
    pub server_name: String,
    /// An opaque registry id, e.g. [`REGISTRY_OFFICIAL`].
    pub registry: String,
    /// HISTOR never sets it, so that a version bump with identical tools is not a change.
    pub server_version: Option<String>,
    /// `stdio`, `streamable-http` or `sse`.
    pub transport: Option<String>,
    /// `npm:<name>` / `pypi:<name>`.
    pub package: Option<String>,
    /// The remote endpoint URL, for a remote subject.
    pub endpoint: Option<String>,
}

/// An MCP Server Descriptor and what is derived from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The canonical (RFC 8785) bytes of the descriptor.
    pub descriptor: Vec<u8>,
    /// SRI of SHA-256 over `descriptor`.
    pub digest: Sri,
    /// `urn:awr:mtl:1:subject:sha256:<hex>`.
    pub urn: String,
    /// Absent when the set is not digestible (`MTL-NUM-001`, kept in `hazard`).
    pub tool_set_digest: Option<Sri>,
    /// Why the set is not digestible under MTL/1, when it is not.
    pub hazard: Option<MtlError>,
}

fn string(s: &str) -> Json {
    Json::String(s.into())
}

fn descriptor_subject(
    info: &SubjectInfo,
    server: Vec<(Str, Json)>,
    count: usize,
    names: Vec<Json>,
    digest: Option<Sri>,
    hazard: Option<MtlError>,
) -> Subject {
    let mut tool_set = vec![
        ("count".into(), Json::Number(count.to_string().into())),
        ("names".into(), Json::Array(names)),
    ];
    if let Some(d) = digest {
        tool_set.push(("digestSRI".into(), string(&d.to_string())));
    }
    let mut msd = vec![
        ("mtl".into(), string("1")),
        ("server".into(), Json::Object(server)),
        ("toolSet".into(), Json::Object(tool_set)),
    ];
    let artifact: Vec<(Str, Json)> = [
        ("transport", &info.transport),
        ("package", &info.package),
        ("endpoint", &info.endpoint),
    ]
    .into_iter()
    .filter_map(|(k, v)| {
        v.as_deref()
            .filter(|v| !v.is_empty())
            .map(|v| (k.into(), string(v)))
    })
    .collect();
    if !artifact.is_empty() {
        msd.push(("artifact".into(), Json::Object(artifact)));
    }
    let descriptor = canon::to_vec(&Json::Object(msd), Numbers::IntegersOnly)
        .expect("a descriptor of UTF-8 strings and a count is always canonicalizable");
    let sri = Sri::of(&descriptor);
    Subject {
        urn: format!("urn:awr:mtl:1:subject:sha256:{}", sri.hex()),
        digest: sri,
        descriptor,
        tool_set_digest: digest,
        hazard,
    }
}

/// Build the MSD (`histor.subject.build_subject`). `MTL-SUBJ-001/002/003` are errors (use
/// [`fallback_subject`]); `MTL-NUM-001` gives a descriptor without a digest and sets `hazard`.
pub fn build_subject(info: &SubjectInfo, set: &ToolSet) -> Result<Subject, MtlError> {
    if info.server_name.is_empty() {
        return Err(err(
            MtlCode::Subj001,
            "server.name must be a non-empty string",
        ));
    }
    if info.registry.is_empty() {
        return Err(err(
            MtlCode::Subj001,
            "server.registry must be a non-empty string",
        ));
    }
    let (digest, hazard) = match tool_set_digest(set) {
        Ok(d) => (Some(d), None),
        Err(e) if e.code == MtlCode::Num001 => (None, Some(e)),
        Err(e) => return Err(e),
    };
    let entries = values(set);
    let sorted = sorted_entries(&entries)?;
    let mut names = Vec::with_capacity(sorted.len());
    for e in &sorted {
        match e.name {
            Str::Text(t) => names.push(string(t.as_ref())),
            // HISTOR cannot canonicalise such a descriptor either; the digest path above already
            // reported it as MTL-SUBJ-001.
            Str::Units(_) => return Err(canon_error(CanonError::LoneSurrogate, e.name)),
        }
    }
    let mut server = vec![
        ("name".into(), string(&info.server_name)),
        ("registry".into(), string(&info.registry)),
    ];
    if let Some(v) = info.server_version.as_deref().filter(|v| !v.is_empty()) {
        server.push(("version".into(), string(v)));
    }
    Ok(descriptor_subject(
        info,
        server,
        names.len(),
        names,
        digest,
        hazard,
    ))
}

/// The names-only descriptor for a set that failed `MTL-SUBJ-001/002/003`
/// (`histor.subject.fallback_subject`): never a digest; NUL and unpaired surrogates in names
/// become U+FFFD; `count` is the raw number of entries.
pub fn fallback_subject(info: &SubjectInfo, set: &ToolSet) -> Subject {
    let clean = |s: &str| s.replace('\0', "\u{FFFD}");
    let mut names: Vec<String> = set
        .tools
        .iter()
        .filter_map(|t| match t.value.get("name") {
            Some(Json::String(s)) if !is_empty(s) => Some(clean(&s.lossy())),
            _ => None,
        })
        .collect();
    names.sort_by(|a, b| crate::json::utf16_cmp(a, b));
    let server = vec![
        ("name".into(), string(&clean(&info.server_name))),
        ("registry".into(), string(&clean(&info.registry))),
    ];
    let names = names.iter().map(|n| string(n)).collect();
    descriptor_subject(info, server, set.tools.len(), names, None, None)
}
