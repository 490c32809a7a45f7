//! The client-report store (`DATA/contributions.sqlite`): counts per (target, digest, day), its
//! caps and retention, the minimum before a read shows anything, and what the file holds.

use std::path::PathBuf;

use toolmark_index::contributions::{
    Contributions, Counted, Day, DigestKind, Limits, MINIMUM_REPORTS, RETENTION_DAYS, WINDOW_DAYS,
};
use toolmark_toolset::Sri;

const TARGET: &str = "0123456789abcdef";
const OTHER: &str = "fedcba9876543210";
const TODAY: Day = Day(20_424);

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contributions-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A distinct, well-formed digest for each `n`.
fn digest(n: u32) -> Sri {
    Sri::of(&n.to_be_bytes())
}

/// `n` reports (the caller's distinct clients) of `d` for `target` on `day`.
fn report(store: &mut Contributions, target: &str, d: &Sri, day: Day, n: u64) {
    for _ in 0..n {
        assert_eq!(
            store.count(target, DigestKind::Full, d, day).unwrap(),
            Counted::Counted
        );
    }
}

#[test]
fn nothing_is_shown_below_the_minimum_and_it_is_shown_at_it() {
    let d = dir("minimum");
    let mut store = Contributions::open(&d.join("c.sqlite")).unwrap();
    report(&mut store, TARGET, &digest(1), TODAY, MINIMUM_REPORTS - 1);
    assert!(store.reports(TARGET, TODAY).unwrap().is_empty());
    report(&mut store, TARGET, &digest(1), TODAY, 1);
    let shown = store.reports(TARGET, TODAY).unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].digest, digest(1));
    assert_eq!(shown[0].kind, DigestKind::Full);
    assert_eq!(shown[0].reports, MINIMUM_REPORTS);
    assert_eq!((shown[0].first_day, shown[0].last_day), (TODAY, TODAY));
    // Another target's reports are its own.
    assert!(store.reports(OTHER, TODAY).unwrap().is_empty());
}

#[test]
fn days_below_the_minimum_add_nothing_to_a_shown_digest() {
    let d = dir("sum");
    let mut store = Contributions::open(&d.join("c.sqlite")).unwrap();
    let yesterday = TODAY.minus(1);
    report(&mut store, TARGET, &digest(1), yesterday.minus(1), 1);
    report(&mut store, TARGET, &digest(1), yesterday, MINIMUM_REPORTS);
    report(&mut store, TARGET, &digest(1), TODAY, MINIMUM_REPORTS + 2);
    let shown = store.reports(TARGET, TODAY).unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].reports, 2 * MINIMUM_REPORTS + 2);
    assert_eq!((shown[0].first_day, shown[0].last_day), (yesterday, TODAY));
    assert_eq!(shown[0].first_reached, yesterday);
}

#[test]
fn the_window_is_seven_days_and_the_first_day_reached_looks_further_back() {
    let d = dir("window");
    let mut store = Contributions::open(&d.join("c.sqlite")).unwrap();
    let long_ago = TODAY.minus(WINDOW_DAYS + 3);
    report(&mut store, TARGET, &digest(1), long_ago, MINIMUM_REPORTS);
    assert!(store.reports(TARGET, TODAY).unwrap().is_empty());
    report(&mut store, TARGET, &digest(1), TODAY, MINIMUM_REPORTS);
    let shown = store.reports(TARGET, TODAY).unwrap();
    assert_eq!(shown[0].reports, MINIMUM_REPORTS);
    assert_eq!(shown[0].first_day, TODAY);
    assert_eq!(shown[0].first_reached, long_ago);
}

#[test]
fn a_target_takes_at_most_its_cap_of_digests_a_day() {
    let d = dir("target-cap");
    let limits = Limits {
        max_digests_per_target_day: 3,
        ..Limits::default()
    };
    let mut store = Contributions::open_with(&d.join("c.sqlite"), limits).unwrap();
    for n in 0..3 {
        report(&mut store, TARGET, &digest(n), TODAY, 1);
    }
    assert_eq!(
        store
            .count(TARGET, DigestKind::Full, &digest(3), TODAY)
            .unwrap(),
        Counted::TargetFull
    );
    // A digest already counted still counts, another target and the next day are open.
    report(&mut store, TARGET, &digest(0), TODAY, 1);
    report(&mut store, OTHER, &digest(3), TODAY, 1);
    report(&mut store, TARGET, &digest(3), Day(TODAY.0 + 1), 1);
}

#[test]
fn the_store_takes_at_most_its_cap_of_rows_a_day() {
    let d = dir("day-cap");
    let limits = Limits {
        max_rows_per_day: 2,
        ..Limits::default()
    };
    let mut store = Contributions::open_with(&d.join("c.sqlite"), limits).unwrap();
    report(&mut store, TARGET, &digest(0), TODAY, 1);
    report(&mut store, OTHER, &digest(0), TODAY, 1);
    assert_eq!(
        store
            .count("aaaaaaaaaaaaaaaa", DigestKind::Mtl1, &digest(0), TODAY)
            .unwrap(),
        Counted::DayFull
    );
    report(&mut store, OTHER, &digest(0), TODAY, 1);
    report(
        &mut store,
        "aaaaaaaaaaaaaaaa",
        &digest(0),
        Day(TODAY.0 + 1),
        1,
    );
}

fn rows(path: &std::path::Path) -> Vec<(String, String, String, i64, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare("SELECT target_id, kind, digest, day, clients FROM client_reports ORDER BY day")
        .unwrap();
    st.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn a_write_prunes_the_rows_past_the_retention() {
    let d = dir("retention");
    let path = d.join("c.sqlite");
    let mut store = Contributions::open(&path).unwrap();
    let first = TODAY.minus(RETENTION_DAYS);
    report(&mut store, TARGET, &digest(1), first, 1);
    report(&mut store, TARGET, &digest(1), Day(first.0 + 1), 1);
    assert_eq!(rows(&path).len(), 2);
    // Today's write keeps the RETENTION_DAYS days ending today: the first day is gone.
    report(&mut store, OTHER, &digest(2), TODAY, 1);
    let kept = rows(&path);
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0].3, i64::from(first.0 + 1));
    assert_eq!(kept[1].3, i64::from(TODAY.0));
}

#[test]
fn the_stored_database_holds_only_target_digest_day_and_count() {
    let d = dir("schema");
    let path = d.join("c.sqlite");
    let mut store = Contributions::open(&path).unwrap();
    report(&mut store, TARGET, &digest(1), TODAY, 2);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(tables, ["client_reports"]);
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('client_reports') ORDER BY cid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(columns, ["target_id", "kind", "digest", "day", "clients"]);
    assert_eq!(
        rows(&path),
        [(
            TARGET.to_owned(),
            "full".to_owned(),
            digest(1).to_string(),
            i64::from(TODAY.0),
            2
        )]
    );
}
