//! Client reports shared by a cluster's API replicas (`toolmark_roles::reports`): two replicas
//! over one real PostgreSQL count a client once per target and day whichever it reaches, read
//! the same counts, hold the single box's caps across both, forget a day's key and clients on
//! the next day, and keep no address; and the single box's store and theirs count one script of
//! reports alike.

use std::net::IpAddr;
use std::sync::Arc;

use postgres::NoTls;
use toolmark_api::contribute::{ClientReports, LocalReports, Outcome, ReportStore};
use toolmark_index::contributions::{ClientReport, Day, DigestKind, MINIMUM_REPORTS};
use toolmark_queue::ReportLimits;
use toolmark_roles::reports::SharedReports;
use toolmark_roles::shared::Db;
use toolmark_toolset::Sri;

const TARGET: &str = "0123456789abcdef";
const DAY: Day = Day(20_500);

fn limits() -> ReportLimits {
    ReportLimits {
        retention_days: 35,
        max_digests_per_target_day: 64,
        max_rows_per_day: 20_000,
        max_clients_per_day: 200_000,
    }
}

/// Two replicas' stores over `db` (each its own connection, as two processes have).
fn replicas(db: &str, limits: ReportLimits) -> [Arc<SharedReports>; 2] {
    [
        Arc::new(SharedReports::with_limits(
            Arc::new(Db::connect(db, "api@a").unwrap()),
            limits,
        )),
        Arc::new(SharedReports::with_limits(
            Arc::new(Db::connect(db, "api@b").unwrap()),
            limits,
        )),
    ]
}

fn peer(n: u8) -> IpAddr {
    IpAddr::from([192, 0, 2, n])
}

/// What a replica's `/check` does with a report (`ClientReports` hashes; the store counts).
fn report(
    store: &Arc<SharedReports>,
    from: IpAddr,
    digest: &Sri,
    day: Day,
) -> Result<(), &'static str> {
    report_keyed(store, &answer_key(7), from, digest, day)
}

/// A replica's answer key (every replica of one log has the same).
fn answer_key(seed: u8) -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[seed; 32])
}

/// [`report`] by a replica whose answer key is `key`.
fn report_keyed(
    store: &Arc<SharedReports>,
    key: &ed25519_dalek::SigningKey,
    from: IpAddr,
    digest: &Sri,
    day: Day,
) -> Result<(), &'static str> {
    ClientReports::over(Box::new(store.clone()))
        .keyed(key)
        .report(from, TARGET, DigestKind::Full, digest, day)
        .unwrap()
}

fn sql(db: &str) -> postgres::Client {
    postgres::Client::connect(db, NoTls).unwrap()
}

fn clients(db: &str) -> Vec<i64> {
    sql(db)
        .query("SELECT clients FROM client_reports ORDER BY digest", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[test]
fn a_client_reaching_both_replicas_is_counted_once() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let [a, b] = replicas(db.url(), limits());
    let digest = Sri::of(b"a tool set");
    assert_eq!(report(&a, peer(1), &digest, DAY), Ok(()));
    assert_eq!(
        report(&b, peer(1), &digest, DAY),
        Ok(()),
        "the same report, again"
    );
    assert_eq!(clients(db.url()), vec![1]);
    assert!(
        report(&b, peer(1), &Sri::of(b"another set"), DAY).is_err(),
        "a second tool set from the same client the same day, through the other replica"
    );
    assert_eq!(clients(db.url()), vec![1]);
}

#[test]
fn the_minimum_counts_clients_not_replicas_and_both_replicas_show_the_same() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let [a, b] = replicas(db.url(), limits());
    let digest = Sri::of(b"served to some clients only");
    // One client through both replicas, a second through one: two clients, below the minimum.
    assert_eq!(MINIMUM_REPORTS, 3);
    report(&a, peer(1), &digest, DAY).unwrap();
    report(&b, peer(1), &digest, DAY).unwrap();
    report(&b, peer(2), &digest, DAY).unwrap();
    assert!(a.reports(TARGET, DAY).unwrap().is_empty());
    assert!(b.reports(TARGET, DAY).unwrap().is_empty());
    report(&a, peer(3), &digest, DAY).unwrap();
    let shown = a.reports(TARGET, DAY).unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].reports, 3);
    assert_eq!(shown[0].digest, digest);
    assert_eq!(shown[0].first_reached, DAY);
    assert_eq!(shown, b.reports(TARGET, DAY).unwrap());
}

#[test]
fn the_caps_hold_across_replicas() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let small = ReportLimits {
        max_clients_per_day: 2,
        ..limits()
    };
    let [a, b] = replicas(db.url(), small);
    let digest = Sri::of(b"a tool set");
    report(&a, peer(1), &digest, DAY).unwrap();
    report(&b, peer(2), &digest, DAY).unwrap();
    assert!(
        report(&a, peer(3), &digest, DAY).is_err(),
        "a third client is past the day's cap"
    );
    assert_eq!(clients(db.url()), vec![2]);

    let Some(db) = toolmark_standins::services::postgres().unwrap() else {
        return;
    };
    let one_digest = ReportLimits {
        max_digests_per_target_day: 1,
        ..limits()
    };
    let [a, b] = replicas(db.url(), one_digest);
    report(&a, peer(1), &Sri::of(b"first"), DAY).unwrap();
    assert!(report(&b, peer(2), &Sri::of(b"second"), DAY).is_err());
    let one_row = ReportLimits {
        max_rows_per_day: 1,
        ..limits()
    };
    let [a, _] = replicas(db.url(), one_row);
    assert!(report(&a, peer(3), &Sri::of(b"third"), DAY).is_err());
    assert_eq!(clients(db.url()), vec![1]);
}

#[test]
fn a_new_day_forgets_the_old_key_and_its_clients() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let [a, b] = replicas(db.url(), limits());
    let digest = Sri::of(b"a tool set");
    report(&a, peer(1), &digest, DAY).unwrap();
    let key_of = |day: Day| -> Vec<Vec<u8>> {
        sql(db.url())
            .query(
                "SELECT key FROM client_report_keys WHERE day = $1",
                &[&(day.0 as i32)],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    assert_eq!(key_of(DAY).len(), 1);
    let next = Day(DAY.0 + 1);
    report(&b, peer(1), &digest, next).unwrap();
    assert!(key_of(DAY).is_empty(), "yesterday's key is gone");
    assert_eq!(key_of(next).len(), 1);
    let seen_days: Vec<i32> = sql(db.url())
        .query("SELECT day FROM client_report_seen", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        seen_days,
        vec![next.0 as i32],
        "yesterday's clients are gone"
    );
    assert_eq!(
        clients(db.url()),
        vec![1, 1],
        "counted again on the new day"
    );
    // A replica whose clock is still on the old day counts into the new one: the old day's
    // key does not come back, and the client is not counted again.
    report(&a, peer(1), &digest, DAY).unwrap();
    assert!(key_of(DAY).is_empty());
    assert_eq!(clients(db.url()), vec![1, 1]);
}

#[test]
fn the_shared_tables_keep_no_address_and_the_key_and_clients_are_not_logged() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let [a, _] = replicas(db.url(), limits());
    report(&a, peer(77), &Sri::of(b"a tool set"), DAY).unwrap();
    let mut c = sql(db.url());
    let dump: String = c
        .query_one(
            "SELECT (SELECT string_agg(r::text, ' ') FROM client_reports r) || ' ' ||
                    (SELECT string_agg(encode(who, 'hex') || encode(what, 'hex'), ' ')
                     FROM client_report_seen)",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(!dump.contains("192.0.2.77"), "{dump}");
    assert!(!dump.contains("c000024d"), "the address's bytes: {dump}");
    let persistence: Vec<(String, i8)> = c
        .query(
            "SELECT relname::text, relpersistence::\"char\" FROM pg_class
             WHERE relname IN ('client_reports', 'client_report_keys', 'client_report_seen')
             ORDER BY relname",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        persistence,
        vec![
            ("client_report_keys".to_owned(), b'u' as i8),
            ("client_report_seen".to_owned(), b'u' as i8),
            ("client_reports".to_owned(), b'p' as i8),
        ]
    );
}

#[test]
fn without_its_database_a_replica_counts_nothing_and_shows_none_but_still_answers() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let url = db.url().to_owned();
    let [a, _] = replicas(&url, limits());
    // The database goes away (dropped, its connections closed).
    drop(db);
    for _ in 0..2 {
        assert_eq!(
            report(&a, peer(1), &Sri::of(b"a tool set"), DAY),
            Err("not counted: client reports are unavailable right now")
        );
    }
    let dir = std::env::temp_dir().join(format!("toolmark-reports-down-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let index = toolmark_index::Index::open(&dir.join("index.sqlite")).unwrap();
    let shown = ClientReports::over(Box::new(a.clone()))
        .other_reports(&index, TARGET, DAY)
        .unwrap();
    assert!(shown.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_stored_hashes_need_the_replicas_answer_key() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let [a, b] = replicas(db.url(), limits());
    let digest = Sri::of(b"a tool set");
    report_keyed(&a, &answer_key(7), peer(1), &digest, DAY).unwrap();
    // The same day key, another answer key: the client's hash is another one (so is anyone's
    // who reads the database without the replicas' key).
    report_keyed(&b, &answer_key(8), peer(1), &digest, DAY).unwrap();
    assert_eq!(clients(db.url()), vec![2]);
    let seen: i64 = sql(db.url())
        .query_one("SELECT count(*) FROM client_report_seen", &[])
        .unwrap()
        .get(0);
    assert_eq!(seen, 2);
}

/// One report of a script: (client, target, digest).
type Report<'a> = (u8, &'a str, &'a Sri);

/// The rules one script of reports meets in a store: its outcomes, and what the target shows
/// at the end of each of its days.
fn run_script(store: &dyn ReportStore) -> (Vec<Outcome>, Vec<Vec<ClientReport>>) {
    let d1 = Sri::of(b"first set");
    let d2 = Sri::of(b"second set");
    let d3 = Sri::of(b"third set");
    // Per day, (client, target, digest): the caps below are 2 digests a target-day, 4 rows a
    // day and 7 clients a day; the third day is past the first's retention.
    let days: Vec<(Day, Vec<Report>)> = vec![
        (
            DAY,
            vec![
                (1, TARGET, &d1),
                (1, TARGET, &d1),
                (1, TARGET, &d2),
                (2, TARGET, &d1),
                (3, TARGET, &d1),
                (4, TARGET, &d2),
                (5, TARGET, &d3),
                (5, "another-target", &d3),
                (6, "third-target", &d3),
                (7, "fourth-target", &d3),
                (8, "third-target", &d3),
                (9, "third-target", &d3),
            ],
        ),
        (Day(DAY.0 + 1), vec![(1, TARGET, &d1), (2, TARGET, &d2)]),
        (Day(DAY.0 + 40), vec![(1, TARGET, &d1)]),
    ];
    let mut outcomes = Vec::new();
    let mut shown = Vec::new();
    for (day, reports) in days {
        for (client, target, digest) in reports {
            let pair = |key: &[u8; 32]| {
                let mut who = [0u8; 16];
                who[..8].copy_from_slice(&key[..8]);
                who[8] = client;
                let t = &target.as_bytes()[..target.len().min(7)];
                who[9..9 + t.len()].copy_from_slice(t);
                let mut what = [0u8; 16];
                what.copy_from_slice(&digest.to_string().as_bytes()[7..23]);
                (who, what)
            };
            let fresh = [u8::try_from(day.0 % 256).unwrap(); 32];
            outcomes.push(
                store
                    .report(day, fresh, &pair, target, DigestKind::Full, digest)
                    .unwrap(),
            );
        }
        shown.push(store.reports(TARGET, day).unwrap());
    }
    (outcomes, shown)
}

/// The single box's store (SQLite and memory) and the cluster's (PostgreSQL) keep the same
/// rules: one script of reports gets the same outcome, report by report, and shows the same.
#[test]
fn one_box_and_a_cluster_count_a_script_of_reports_alike() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let small = toolmark_index::contributions::Limits {
        retention_days: 35,
        max_digests_per_target_day: 2,
        max_rows_per_day: 4,
    };
    let dir = std::env::temp_dir().join(format!("toolmark-reports-alike-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let local = LocalReports::new(
        toolmark_index::contributions::Contributions::open_with(&dir.join("c.sqlite"), small)
            .unwrap(),
        7,
    );
    let shared = SharedReports::with_limits(
        Arc::new(Db::connect(db.url(), "api@a").unwrap()),
        ReportLimits {
            retention_days: small.retention_days,
            max_digests_per_target_day: small.max_digests_per_target_day,
            max_rows_per_day: small.max_rows_per_day,
            max_clients_per_day: 7,
        },
    );
    let (outcomes, shown) = run_script(&local);
    let d1 = Sri::of(b"first set");
    use Outcome::*;
    assert_eq!(
        outcomes,
        [
            Counted,
            Again,
            OtherToday,
            Counted,
            Counted,
            Counted,
            TargetFull,
            Counted,
            Counted,
            DayFull,
            Counted,
            ClientsFull,
            Counted,
            Counted,
            Counted
        ],
        "the single box's rules"
    );
    assert_eq!(shown[0].len(), 1, "{shown:?}");
    assert_eq!((shown[0][0].digest, shown[0][0].reports), (d1, 3));
    assert_eq!(
        shown[1], shown[0],
        "the next day reaches no new minimum; the first day is still in the window"
    );
    assert_eq!(shown[2], Vec::new(), "past the retention: {shown:?}");
    assert_eq!(run_script(&shared), (outcomes, shown), "the cluster's");
    let _ = std::fs::remove_dir_all(&dir);
}
