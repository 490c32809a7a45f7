//! Which harvest a run makes (full, or a delta from the last complete one), and how a harvest
//! becomes the run's latest set: merged into the registry records the index keeps, so a delta
//! run observes the same latest set a full one would.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use toolmark_crawler::harvest::{self, Harvest, Mode};
use toolmark_index::{HarvestState, RegistryItem};
use toolmark_observation::registry::{self, Record};

use crate::options::{CrawlOptions, HarvestPolicy};

/// A full harvest is due once [`CrawlOptions::full_harvest_days`] days less this slack have
/// passed since the last complete full harvest started: a daily crawl starts a few seconds or
/// minutes later or earlier from day to day, and without the slack the weekly full harvest would
/// slip to the eighth day whenever this week's start came a moment early.
pub const FULL_HARVEST_SLACK: Duration = Duration::from_secs(60 * 60);

/// The harvest a run makes, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarvestPlan {
    /// Full, or since a time.
    pub mode: Mode,
    /// Whether the harvest is merged into the stored records (a delta from a stored base); a
    /// delta without one observes only what it returned.
    pub merge: bool,
    /// Whether a complete harvest of this plan becomes the last complete one (moves
    /// `next_since`). Not for an explicit `--since`: a later time than the stored one would skip
    /// the changes between them.
    pub advances: bool,
    /// Why, in words (the run report's `harvest.reason`).
    pub reason: String,
}

impl HarvestPlan {
    fn full(reason: impl Into<String>) -> HarvestPlan {
        HarvestPlan {
            mode: Mode::Full,
            merge: false,
            advances: true,
            reason: reason.into(),
        }
    }
}

/// Choose the harvest: `since` (an explicit `--since`) wins; then `harvest = "full"`; then a
/// delta from `state.next_since`, unless there is no base to merge it into (no complete harvest
/// stored, no complete full harvest, no stored records, or stored records that no longer parse:
/// `base_usable` false) or the last full harvest started `full_harvest_days` (less
/// [`FULL_HARVEST_SLACK`]) before `now` — then a full harvest.
pub fn plan_harvest(
    options: &CrawlOptions,
    since: Option<&str>,
    state: Option<&HarvestState>,
    base_usable: bool,
    now: SystemTime,
) -> HarvestPlan {
    let base = state.filter(|s| base_usable && s.last_full_at.is_some());
    if let Some(t) = since {
        return HarvestPlan {
            mode: Mode::Since(t.to_owned()),
            merge: base.is_some(),
            advances: false,
            reason: if base.is_some() {
                "--since given: merged into the stored records".to_owned()
            } else {
                "--since given, no stored records to merge into: only what it returns is observed"
                    .to_owned()
            },
        };
    }
    if options.harvest == HarvestPolicy::Full {
        return HarvestPlan::full("harvest = full");
    }
    let Some(state) = base else {
        return HarvestPlan::full(match state {
            None => "no complete harvest stored: full",
            Some(_) if !base_usable => "no usable stored records: full",
            Some(_) => "no complete full harvest stored: full",
        });
    };
    let last_full = state.last_full_at.as_deref().unwrap_or_default();
    let Ok(full_at) = humantime::parse_rfc3339_weak(last_full) else {
        return HarvestPlan::full(format!(
            "the last full harvest's time {last_full:?} does not parse: full"
        ));
    };
    let every = Duration::from_secs(u64::from(options.full_harvest_days) * 86_400);
    let age = now.duration_since(full_at).unwrap_or(Duration::ZERO);
    if age + FULL_HARVEST_SLACK >= every {
        return HarvestPlan::full(format!(
            "full harvest due: the last one started {last_full}, {} days are configured",
            options.full_harvest_days
        ));
    }
    HarvestPlan {
        mode: Mode::Since(state.next_since.clone()),
        merge: true,
        advances: true,
        reason: format!(
            "delta from the last complete harvest ({}, {}); last full {last_full}",
            state.last_complete_at,
            state.last_complete_kind.as_str()
        ),
    }
}

/// Why stored records cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("stored registry records: {0}")]
pub struct StoredError(pub String);

/// The stored records, parsed back into records with their items, index for index. Fails when
/// any item no longer parses (the run then harvests in full).
pub fn parse_stored(items: Vec<RegistryItem>) -> Result<Vec<(Record, String)>, StoredError> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let mut array =
        String::with_capacity(items.iter().map(|i| i.item.len() + 1).sum::<usize>() + 2);
    array.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            array.push(',');
        }
        array.push_str(&item.item);
    }
    array.push(']');
    let page =
        registry::parse_snapshot(array.as_bytes()).map_err(|e| StoredError(e.to_string()))?;
    if let Some((i, why)) = page.rejected.first() {
        return Err(StoredError(format!(
            "{:?} no longer parses: {why}",
            items[*i].name
        )));
    }
    if page.servers.len() != items.len() {
        return Err(StoredError("records and items differ in number".into()));
    }
    for (record, item) in page.servers.iter().zip(&items) {
        if record.name != item.name || record.version != item.version {
            return Err(StoredError(format!(
                "{:?} {:?} is stored as {:?} {:?}",
                record.name, record.version, item.name, item.version
            )));
        }
    }
    Ok(page
        .servers
        .into_iter()
        .zip(items.into_iter().map(|i| i.item))
        .collect())
}

/// The latest record per name after `harvest`, each with the item the index stores for it: for
/// a merge, `held` (the stored records) with the harvest applied as [`harvest::apply_delta`]
/// does; otherwise [`registry::latest_per_name`] of what the harvest read. Sorted by name. The
/// harvest's items are moved out (`harvest.items` is left empty), not copied: a full harvest of
/// today's registry holds some 50 MB of them.
pub fn latest_set(
    held: Vec<(Record, String)>,
    harvest: &mut Harvest,
    merge: bool,
) -> Vec<(Record, RegistryItem)> {
    // Every record that can be chosen, with its item, by (name, version); a version served
    // twice keeps both, and the chosen record is matched by value below (the later first).
    let mut items: HashMap<(String, String), Vec<(Record, String)>> = HashMap::new();
    let held_records: Vec<Record> = held.iter().map(|(r, _)| r.clone()).collect();
    let served = std::mem::take(&mut harvest.items);
    let candidates = held
        .into_iter()
        .chain(harvest.records.iter().cloned().zip(served));
    for (record, item) in candidates {
        items
            .entry((record.name.clone(), record.version.clone()))
            .or_default()
            .push((record, item));
    }
    let chosen = if merge {
        harvest::apply_delta(held_records, harvest)
    } else {
        registry::latest_per_name(harvest.records.clone())
    };
    chosen
        .into_iter()
        .filter_map(|record| {
            let all = items.get_mut(&(record.name.clone(), record.version.clone()))?;
            let at = all.iter().rposition(|(r, _)| *r == record)?;
            let (_, item) = all.swap_remove(at);
            let stored = RegistryItem {
                name: record.name.clone(),
                version: record.version.clone(),
                item,
            };
            Some((record, stored))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolmark_index::HarvestKind;

    fn state(last_full: Option<&str>) -> HarvestState {
        HarvestState {
            last_complete_at: "2026-12-05T03:00:00.000Z".into(),
            last_complete_kind: HarvestKind::Delta,
            next_since: "2026-12-05T02:55:00.000Z".into(),
            last_full_at: last_full.map(str::to_owned),
        }
    }

    fn at(t: &str) -> SystemTime {
        humantime::parse_rfc3339(t).unwrap()
    }

    #[test]
    fn a_delta_runs_from_the_stored_next_since_until_the_weekly_full_is_due() {
        let o = CrawlOptions::default();
        let s = state(Some("2026-12-01T03:00:05.000Z"));
        let day6 = plan_harvest(&o, None, Some(&s), true, at("2026-12-07T03:00:00Z"));
        assert_eq!(day6.mode, Mode::Since("2026-12-05T02:55:00.000Z".into()));
        assert!(day6.merge && day6.advances);
        // Seven days on, a few seconds earlier in the day than last week: due (the slack).
        let day7 = plan_harvest(&o, None, Some(&s), true, at("2026-12-08T03:00:00Z"));
        assert_eq!(day7.mode, Mode::Full);
        assert!(day7.reason.contains("due"), "{}", day7.reason);
        let every3 = CrawlOptions {
            full_harvest_days: 3,
            ..CrawlOptions::default()
        };
        let day3 = plan_harvest(&every3, None, Some(&s), true, at("2026-12-04T03:00:00Z"));
        assert_eq!(day3.mode, Mode::Full);
    }

    #[test]
    fn without_a_usable_base_the_harvest_is_full() {
        let o = CrawlOptions::default();
        let now = at("2026-12-02T03:00:00Z");
        for (state, usable) in [
            (None, true),
            (Some(state(None)), true),
            (Some(state(Some("2026-12-01T03:00:00.000Z"))), false),
            (Some(state(Some("yesterday"))), true),
        ] {
            let plan = plan_harvest(&o, None, state.as_ref(), usable, now);
            assert_eq!(plan.mode, Mode::Full, "{state:?} {usable}");
            assert!(plan.advances && !plan.merge);
        }
        let full = CrawlOptions {
            harvest: HarvestPolicy::Full,
            ..CrawlOptions::default()
        };
        let s = state(Some("2026-12-01T03:00:00.000Z"));
        assert_eq!(
            plan_harvest(&full, None, Some(&s), true, now).mode,
            Mode::Full
        );
    }

    fn item(name: &str, version: &str, status: &str) -> String {
        format!(
            r#"{{"server":{{"name":"{name}","version":"{version}"}},"_meta":{{"io.modelcontextprotocol.registry/official":{{"status":"{status}","isLatest":true}}}}}}"#
        )
    }

    fn delta(items: &[String]) -> Harvest {
        let page = registry::parse_snapshot(format!("[{}]", items.join(",")).as_bytes()).unwrap();
        Harvest {
            mode: Mode::Since("2026-12-01T00:00:00Z".into()),
            records: page.servers,
            items: items.to_vec(),
            rejected: Vec::new(),
            rejected_names: Default::default(),
            rejected_unnamed: 0,
            pages: 1,
            requests: 1,
            retries: 0,
            complete: true,
            started_at: String::new(),
            next_since: String::new(),
        }
    }

    #[test]
    fn a_merge_stores_the_item_of_the_record_it_keeps() {
        let stored = [
            item("a/x", "1", "active"),
            item("a/y", "1", "active"),
            item("a/z", "1", "active"),
        ];
        let held = parse_stored(
            stored
                .iter()
                .map(|i| {
                    let r = &registry::parse_snapshot(format!("[{i}]").as_bytes())
                        .unwrap()
                        .servers[0];
                    RegistryItem {
                        name: r.name.clone(),
                        version: r.version.clone(),
                        item: i.clone(),
                    }
                })
                .collect(),
        )
        .unwrap();
        // a/x is deprecated (same version, newer news), a/y deleted, a/w new; a/z untouched.
        let mut h = delta(&[
            item("a/x", "1", "deprecated"),
            item("a/y", "1", "deleted"),
            item("a/w", "2", "active"),
        ]);
        let merged = latest_set(held, &mut h, true);
        let kept: Vec<(&str, &str)> = merged
            .iter()
            .map(|(r, i)| (r.name.as_str(), i.item.as_str()))
            .collect();
        assert_eq!(
            kept,
            [
                ("a/w", item("a/w", "2", "active").as_str()),
                ("a/x", item("a/x", "1", "deprecated").as_str()),
                ("a/z", stored[2].as_str()),
            ]
        );
        assert!(h.items.is_empty(), "the items were moved, not copied");
    }

    #[test]
    fn an_explicit_since_merges_when_it_can_and_never_advances() {
        let o = CrawlOptions::default();
        let now = at("2026-12-02T03:00:00Z");
        let s = state(Some("2026-12-01T03:00:00.000Z"));
        let t = "2026-11-01T00:00:00Z";
        let with = plan_harvest(&o, Some(t), Some(&s), true, now);
        assert_eq!(with.mode, Mode::Since(t.into()));
        assert!(with.merge && !with.advances);
        let without = plan_harvest(&o, Some(t), None, true, now);
        assert!(!without.merge && !without.advances);
    }
}
