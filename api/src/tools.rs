//! One tool's history at a target: `GET /api/v1/servers/{id}/tools/{name}` (JSON) and the desk's
//! `GET /s/{id}/tools/{name}` (`crate::desk`), both from [`history`].
//!
//! The history is read from the target's distinct tool sets (runs of successful observations
//! with one full digest, `toolmark_index::queries::ToolSetRun`), newest first, at most
//! [`MAX_HISTORY_TOOL_SETS`], each from its stored document with its full digest checked. The
//! tool is followed by name from the newest set back; where a set holds the name and the set
//! before it does not, the tool-set diff (`toolmark_toolset::diff`) of the two says whether it
//! was renamed there (`tool-renamed`), and the older sets are then read under the old name. A
//! **version** is a span of consecutive sets in which the tool has one `toolmark-tool/1`
//! digest; a tool that is removed and comes back starts a new version, even with the same
//! digest. What changed from the previous version is the tool-set diff of the two one-tool
//! sets (`modified`), or the rename found in the sets' diff (`renamed`, with what else
//! changed).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use toolmark_index::index::TargetRow;
use toolmark_toolset::diff::{self, Rename, ToolDiff};
use toolmark_toolset::{Sri, Tool, ToolSet, full};

use crate::servers::{blocking, encode_query_value};
use crate::{ApiError, AppState};

/// Most distinct tool sets of a target a history reads (the same bound as `/check` about one
/// tool, [`crate::check::MAX_TOOL_SETS`], for the same reason, and the same byte budget,
/// [`crate::check::MAX_TOOL_SET_BYTES`]): past either the history says it was cut.
pub const MAX_HISTORY_TOOL_SETS: usize = crate::check::MAX_TOOL_SETS;

/// How a version came to be, from the one before it (or from the tool sets read before it).
#[derive(Debug, Clone)]
pub enum Reached {
    /// The oldest tool set read already has it: how it came is not known.
    FirstSeen,
    /// Added: the set before it has no tool of this name (and no rename leads to it).
    Added,
    /// Added again after sets without it; `changes` is what differs from the version before
    /// the gap (`None` when it came back unchanged).
    Readded {
        /// What changed from the previous version.
        changes: Option<ToolDiff>,
    },
    /// Its definition changed, the name kept.
    Modified(ToolDiff),
    /// Renamed (`tool-renamed`): the previous version had the rename's `from` name.
    Renamed(Rename),
}

/// One version of the tool.
#[derive(Debug, Clone)]
pub struct Version {
    /// Its name in this version.
    pub name: String,
    /// Its `toolmark-tool/1` digest.
    pub digest: Sri,
    /// The first entry of the first set that has it.
    pub first_entry: u64,
    /// When that was observed.
    pub first_seen: String,
    /// The last entry of the last set that has it.
    pub last_entry: u64,
    /// When that was observed.
    pub last_seen: String,
    /// Successful observations that served it.
    pub observations: u64,
    /// Whether the target's current tool set has it.
    pub current: bool,
    /// Its description, when it has a string one.
    pub description: Option<String>,
    /// How it came to be.
    pub reached: Reached,
}

/// A tool's history at a target ([`history`]).
#[derive(Debug, Clone)]
pub struct History {
    /// The target.
    pub target: TargetRow,
    /// The name asked about.
    pub name: String,
    /// Its versions, newest first.
    pub versions: Vec<Version>,
    /// How many tool sets were read.
    pub sets_read: usize,
    /// Whether [`MAX_HISTORY_TOOL_SETS`] or the byte budget cut the history short (older sets
    /// were not read).
    pub cut: bool,
}

/// The tool as one set has it, while following it back.
struct Piece {
    /// The index of its run (0: the newest).
    run: usize,
    tool: Tool,
    digest: Sri,
    /// The rename that led from the set before to this one, when one did.
    renamed: Option<Rename>,
}

/// The tool named `name` at target `id`, followed back through renames; `None` when the target
/// is unknown or no tool set read has a tool of that name.
pub fn history(state: &AppState, id: &str, name: &str) -> Result<Option<History>, ApiError> {
    let index = state.index.get();
    let Some(target) = index.target(id)? else {
        return Ok(None);
    };
    let mut runs = index.tool_set_runs(id, u64::MAX, MAX_HISTORY_TOOL_SETS + 1)?;
    drop(index);
    let mut cut = runs.len() > MAX_HISTORY_TOOL_SETS;
    runs.truncate(MAX_HISTORY_TOOL_SETS);
    let mut tracked = name.to_owned();
    let mut pieces: Vec<Piece> = Vec::new();
    // The set after the one being read (newer), with its run.
    let mut newer: Option<(usize, ToolSet)> = None;
    let mut sets_read = 0;
    let mut bytes = 0u64;
    let mut read_runs = runs.len();
    for (i, run) in runs.iter().enumerate() {
        let Some(stored) = &run.tool_set else {
            // No document: a gap in what can be read.
            newer = None;
            continue;
        };
        if bytes >= crate::check::MAX_TOOL_SET_BYTES {
            cut = true;
            read_runs = i;
            break;
        }
        let read = stored.read(&state.blobs).map_err(ApiError::internal)?;
        bytes += read.document_bytes;
        let set = read.set;
        sets_read += 1;
        if let Some((j, later)) = &newer
            && set.get(&tracked).is_none()
            && later.get(&tracked).is_some()
        {
            // The name appears in the later set: renamed there, or added.
            let d = diff::diff(&set, later);
            if let Some(r) = d.renames.into_iter().find(|r| r.to == tracked) {
                let last = pieces.last_mut().filter(|p| p.run == *j);
                if let Some(p) = last {
                    tracked = r.from.clone();
                    p.renamed = Some(r);
                }
            }
        }
        if let Some(t) = set.get(&tracked) {
            pieces.push(Piece {
                run: i,
                digest: full::tool_digest(t),
                tool: t.clone(),
                renamed: None,
            });
        }
        newer = Some((i, set));
    }
    if pieces.is_empty() {
        return Ok(None);
    }
    // Oldest first, spans of consecutive runs with one digest.
    pieces.reverse();
    let mut versions: Vec<Version> = Vec::new();
    let mut previous: Option<(usize, Tool)> = None;
    for p in pieces {
        let run = &runs[p.run];
        let continues = previous.as_ref().is_some_and(|(r, _)| *r == p.run + 1)
            && p.renamed.is_none()
            && versions.last().is_some_and(|v| v.digest == p.digest);
        if continues {
            let v = versions.last_mut().expect("a version continues");
            v.last_entry = run.last_entry;
            v.last_seen = run.last_at.clone();
            v.observations += run.observations;
            v.current = p.run == 0;
            previous = Some((p.run, p.tool));
            continue;
        }
        let reached = match (&previous, p.renamed) {
            (_, Some(r)) => Reached::Renamed(r),
            (None, None) if p.run + 1 == read_runs => Reached::FirstSeen,
            (None, None) => Reached::Added,
            (Some((r, old)), None) => {
                let changes = one_tool_diff(old, &p.tool);
                if *r == p.run + 1 {
                    match changes {
                        Some(c) => Reached::Modified(c),
                        // Same digest after a gap in the documents: still a new span.
                        None => Reached::Readded { changes: None },
                    }
                } else {
                    Reached::Readded { changes }
                }
            }
        };
        versions.push(Version {
            name: p.tool.name().unwrap_or_default().to_owned(),
            digest: p.digest,
            first_entry: run.first_entry,
            first_seen: run.first_at.clone(),
            last_entry: run.last_entry,
            last_seen: run.last_at.clone(),
            observations: run.observations,
            current: p.run == 0,
            description: p.tool.description().map(str::to_owned),
            reached,
        });
        previous = Some((p.run, p.tool));
    }
    versions.reverse();
    Ok(Some(History {
        target,
        name: name.to_owned(),
        versions,
        sets_read,
        cut,
    }))
}

/// What changed between two definitions of a tool of one name: the tool-set diff of the two
/// one-tool sets (`None` when they are the same tool).
fn one_tool_diff(old: &Tool, new: &Tool) -> Option<ToolDiff> {
    let d = diff::diff(
        &ToolSet::from_values(vec![old.value.clone()]),
        &ToolSet::from_values(vec![new.value.clone()]),
    );
    d.modified.into_iter().next()
}

/// The path of a tool's history under `prefix` (`/api/v1/servers` or `/s`): the name
/// percent-encoded as one path segment.
pub fn history_path(prefix: &str, id: &str, name: &str) -> String {
    format!("{prefix}/{id}/tools/{}", encode_query_value(name))
}

/// [`history`] on a blocking thread, holding one of `AppState::answering`'s places for it: a
/// history reads up to [`crate::check::MAX_TOOL_SET_BYTES`] of stored documents, so no more run
/// at once than `/check` answers do (the rest wait for a place).
pub async fn history_held(
    state: &Arc<AppState>,
    id: String,
    name: String,
) -> Result<Option<History>, ApiError> {
    let _place = state
        .answering
        .acquire()
        .await
        .map_err(ApiError::internal)?;
    let st = state.clone();
    blocking(move || history(&st, &id, &name)).await
}

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/api/v1/servers/{id}/tools/{name}", get(tool_history))
}

async fn tool_history(
    State(state): State<Arc<AppState>>,
    Path((id, name)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    if !crate::servers::valid_id(&id) {
        return Err(ApiError::BadRequest(
            "a server id is 16 lowercase hex digits".into(),
        ));
    }
    let h = history_held(&state, id.clone(), name.clone()).await?;
    let Some(h) = h else {
        return Err(ApiError::NotFound(format!(
            "server {id} has no tool named {name} in the tool sets toolmark read"
        )));
    };
    let body = history_json(&state.base_url, &h)?;
    Ok(axum::Json(body).into_response())
}

/// The JSON of a history.
pub fn history_json(base: &str, h: &History) -> Result<Value, ApiError> {
    let t = &h.target;
    let versions = h
        .versions
        .iter()
        .map(|v| {
            let change = match &v.reached {
                Reached::FirstSeen => json!({"kind": "first-seen"}),
                Reached::Added => json!({"kind": "added"}),
                Reached::Readded { changes } => json!({"kind": "re-added", "diff": changes}),
                Reached::Modified(d) => json!({"kind": "modified", "diff": d}),
                Reached::Renamed(r) => {
                    json!({"kind": "renamed", "from": r.from, "rename": r})
                }
            };
            json!({
                "name": v.name,
                "digest": v.digest.to_string(),
                "firstEntry": v.first_entry,
                "firstSeen": v.first_seen,
                "lastEntry": v.last_entry,
                "lastSeen": v.last_seen,
                "observations": v.observations,
                "current": v.current,
                "description": v.description,
                "change": change,
            })
        })
        .collect::<Vec<_>>();
    Ok(json!({
        "server": {
            "id": t.id,
            "name": t.server,
            "endpoint": t.target,
            "page": format!("{base}/s/{}", t.id),
        },
        "tool": h.name,
        "page": format!("{base}{}", history_path("/s", &t.id, &h.name)),
        "versions": versions,
        "toolSets": {"read": h.sets_read, "limit": MAX_HISTORY_TOOL_SETS, "truncated": h.cut},
    }))
}
