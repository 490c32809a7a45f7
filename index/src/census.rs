//! The sensitive-tool census: which observed targets' current tool sets hold tools the starter
//! policy ([`toolmark_toolset::policy::STARTER`]) calls sensitive, per category.
//!
//! Derived, like every other row of the index, from the log and the blobs: when a target's
//! current tool set changes (a newer `ok` entry with another full digest), `derive` replaces
//! its rows with the categories of that set's tool names; [`Index::rebuild`] clears them and
//! derives them again. The policy's versioned name is kept in `meta.census_policy`: an index
//! whose census was made by another version (or by none: a database migrated from version 4)
//! is re-derived from every target's current stored tool set the next time it catches up with
//! the log (`refresh`), so the census always follows the policy this code holds.
//!
//! What it never does: apply a caller's patterns (those are matched per request by the API),
//! read descriptions or schemas (the policy reads names only), or count a tool set that is not
//! a target's current one.

use rusqlite::{Transaction, params};
use serde::Serialize;
use toolmark_toolset::ToolSet;
use toolmark_toolset::policy::STARTER;

use crate::blobs::Blobs;
use crate::index::{Index, IndexError};
use crate::rows::{TARGET_COLS, TargetRow, int, need_unsigned, target_row};
use crate::schema::{meta, set_meta};

/// Tool names kept per (target, category) row; the row's `tool_count` is exact. Bounds a
/// target that exposes thousands of `delete_*` tools to a row of a few kilobytes.
pub const MAX_CENSUS_TOOLS: usize = 50;

/// Version 5 (this helper's part): one row per (target, starter-policy category) that the
/// target's current tool set has tools in.
pub(crate) const CENSUS_TABLES: &str = "
CREATE TABLE IF NOT EXISTS target_sensitive (
    target_id TEXT NOT NULL,
    category TEXT NOT NULL,
    entry INTEGER NOT NULL,
    tool_count INTEGER NOT NULL,
    tools TEXT NOT NULL,
    PRIMARY KEY (target_id, category)
) STRICT;
CREATE INDEX IF NOT EXISTS target_sensitive_category ON target_sensitive (category, target_id);
";

/// One category of one target's current tool set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetCensus {
    /// The category id (`money`, …).
    pub category: String,
    /// The first `ok` entry of the current tool set (later entries with the same full digest
    /// do not derive it again).
    pub entry: u64,
    /// How many distinct tool names fall in it.
    pub tool_count: u64,
    /// The first [`MAX_CENSUS_TOOLS`] of them, in the order the server sent them.
    pub tools: Vec<String>,
}

/// One category across the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryCount {
    /// The category id.
    pub category: String,
    /// Targets whose current tool set has a tool in it.
    pub targets: u64,
    /// Registry servers with such a target.
    pub servers: u64,
}

/// The census summary: `{category: targets}` and more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CensusSummary {
    /// The policy the census was derived with (`starter/1`), `None` before the first catch-up.
    pub policy: Option<String>,
    /// Targets with a current tool set (what the census looked at).
    pub observed_targets: u64,
    /// Targets with a tool in any category, and their servers.
    pub any: CategoryCount,
    /// Every category of the policy, in its order (zero counts included).
    pub categories: Vec<CategoryCount>,
}

/// Which targets a listing keeps by the census ([`crate::TargetFilter::sensitive`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SensitiveFilter {
    /// A tool in any category.
    Any,
    /// A tool in this category (an id of the starter policy).
    Category(&'static str),
}

impl SensitiveFilter {
    /// `any`, or a category id of the starter policy.
    pub fn parse(s: &str) -> Option<SensitiveFilter> {
        if s == "any" {
            return Some(SensitiveFilter::Any);
        }
        STARTER.category(s).map(|c| SensitiveFilter::Category(c.id))
    }
}

/// The starter policy compiled once: a catch-up derives the census of every target's first tool
/// set, and compiling folds every glob of the policy.
static COMPILED: std::sync::LazyLock<toolmark_toolset::policy::Compiled> =
    std::sync::LazyLock::new(|| STARTER.compile());

/// Replace the census rows of `target_id` with those of its new current tool set `set` (from
/// entry `entry`); `None` (a set that could not be read) leaves it with none.
pub(crate) fn derive(
    tx: &Transaction,
    target_id: &str,
    entry: u64,
    set: Option<&ToolSet>,
) -> Result<(), IndexError> {
    tx.prepare_cached("DELETE FROM target_sensitive WHERE target_id = ?1")?
        .execute([target_id])?;
    let Some(set) = set else {
        return Ok(());
    };
    let policy = &*COMPILED;
    let mut seen = std::collections::HashSet::new();
    let mut per: Vec<(&str, Vec<&str>, u64)> = STARTER
        .categories
        .iter()
        .map(|c| (c.id, Vec::new(), 0))
        .collect();
    for name in set.tools.iter().filter_map(|t| t.name()) {
        if !seen.insert(name) {
            continue;
        }
        for c in policy.categories_of(name) {
            if let Some((_, names, n)) = per.iter_mut().find(|(id, _, _)| *id == c) {
                *n += 1;
                if names.len() < MAX_CENSUS_TOOLS {
                    names.push(name);
                }
            }
        }
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO target_sensitive (target_id, category, entry, tool_count, tools)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (category, names, n) in per.into_iter().filter(|(_, _, n)| *n > 0) {
        insert.execute(params![
            target_id,
            category,
            int(entry)?,
            int(n)?,
            serde_json::to_string(&names)?,
        ])?;
    }
    Ok(())
}

/// When the census was not derived with the policy this code holds, derive it again from every
/// target's current stored tool set (one read at a time) and record the policy. Returns how
/// many targets were read (0 when the census was current).
pub(crate) fn refresh(index: &mut Index, blobs: &Blobs) -> Result<u64, IndexError> {
    if meta(&index.conn, "census_policy")?.as_deref() == Some(STARTER.name) {
        return Ok(0);
    }
    let tx = index.conn.transaction()?;
    tx.execute("DELETE FROM target_sensitive", [])?;
    let rows: Vec<TargetRow> = tx
        .prepare(&format!(
            "SELECT {TARGET_COLS} FROM targets WHERE current_raw IS NOT NULL ORDER BY id"
        ))?
        .query_map([], target_row)?
        .collect::<Result<_, _>>()?;
    let mut read = 0;
    for row in rows {
        let id = row.id.clone();
        let Some(at) = row.current_tool_set()? else {
            continue;
        };
        // A document that cannot be read now leaves the target out, as `derive` does.
        let set = at.read(blobs).ok().map(|v| v.set);
        // The entry `derive` records is the one where the current set became current: the
        // first `ok` entry with its digest after the last `ok` entry with another.
        let since: Option<i64> = tx
            .prepare_cached(
                "SELECT min(entry) FROM observations WHERE target_id = ?1 AND status = 'ok'
                     AND full = ?2 AND entry > coalesce((SELECT max(entry) FROM observations
                         WHERE target_id = ?1 AND status = 'ok' AND full IS NOT NULL
                             AND full <> ?2), -1)",
            )?
            .query_row(rusqlite::params![id, row.current_full], |r| r.get(0))?;
        let since = since
            .and_then(|e| u64::try_from(e).ok())
            .unwrap_or(at.entry);
        derive(&tx, &id, since, set.as_ref())?;
        read += 1;
    }
    set_meta(&tx, "census_policy", STARTER.name)?;
    tx.commit()?;
    Ok(read)
}

impl Index {
    /// The census rows of one target, in the policy's category order.
    pub fn target_census(&self, id: &str) -> Result<Vec<TargetCensus>, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT category, entry, tool_count, tools FROM target_sensitive WHERE target_id = ?1",
        )?;
        let mut rows: Vec<TargetCensus> = st
            .query_map([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    need_unsigned(r, 1)?,
                    need_unsigned(r, 2)?,
                    r.get::<_, String>(3)?,
                ))
            })?
            .map(|row| {
                let (category, entry, tool_count, tools) = row?;
                Ok(TargetCensus {
                    category,
                    entry,
                    tool_count,
                    tools: serde_json::from_str(&tools)?,
                })
            })
            .collect::<Result<_, IndexError>>()?;
        rows.sort_by_key(|r| category_rank(&r.category));
        Ok(rows)
    }

    /// The census summary: per category of the starter policy, how many targets (and servers)
    /// have a tool in it.
    pub fn census_summary(&self) -> Result<CensusSummary, IndexError> {
        let observed: i64 = self.conn.query_row(
            "SELECT count(*) FROM targets WHERE current_full IS NOT NULL",
            [],
            |r| r.get(0),
        )?;
        let mut st = self.conn.prepare_cached(
            "SELECT x.category, count(DISTINCT x.target_id), count(DISTINCT t.server)
             FROM target_sensitive x JOIN targets t ON t.id = x.target_id GROUP BY x.category",
        )?;
        let found: Vec<(String, u64, u64)> = st
            .query_map([], |r| {
                Ok((r.get(0)?, need_unsigned(r, 1)?, need_unsigned(r, 2)?))
            })?
            .collect::<Result<_, _>>()?;
        let (targets, servers) = self.conn.query_row(
            "SELECT count(DISTINCT x.target_id), count(DISTINCT t.server)
             FROM target_sensitive x JOIN targets t ON t.id = x.target_id",
            [],
            |r| Ok((need_unsigned(r, 0)?, need_unsigned(r, 1)?)),
        )?;
        let categories = STARTER
            .categories
            .iter()
            .map(|c| {
                let (t, s) = found
                    .iter()
                    .find(|(id, _, _)| id == c.id)
                    .map_or((0, 0), |(_, t, s)| (*t, *s));
                CategoryCount {
                    category: c.id.to_owned(),
                    targets: t,
                    servers: s,
                }
            })
            .collect();
        Ok(CensusSummary {
            policy: meta(&self.conn, "census_policy")?,
            observed_targets: u64::try_from(observed).unwrap_or(0),
            any: CategoryCount {
                category: "any".to_owned(),
                targets,
                servers,
            },
            categories,
        })
    }
}

/// A category's place in the starter policy (unknown ones last).
pub(crate) fn category_rank(id: &str) -> usize {
    STARTER
        .categories
        .iter()
        .position(|c| c.id == id)
        .unwrap_or(usize::MAX)
}

/// The census's categories of a target as a listing shows them: a `,`-joined text (SQLite's
/// `group_concat`) into the policy's order.
pub(crate) fn categories_from_concat(text: Option<String>) -> Vec<String> {
    let mut v: Vec<String> = text
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    v.sort_by_key(|c| category_rank(c));
    v
}
