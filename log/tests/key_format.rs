//! A head store holding dedup keys of the format before time-ordered keys (16-byte hash
//! prefixes) is refused at open, on SQLite and on PostgreSQL: its keys would never match the
//! new ones, so an observation logged before could be logged again. A store of the current
//! format, or one without keys, opens.

use toolmark_log::head::postgres::PgHead;
use toolmark_log::head::{HeadStore, KEY_FORMAT, META_KEY_FORMAT, SqliteHead};

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("key-format-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn sqlite_refuses_a_store_of_sixteen_byte_keys() {
    let dir = scratch("sqlite");
    let mut head = SqliteHead::open(&dir).unwrap();
    assert_eq!(
        head.meta(META_KEY_FORMAT).unwrap().as_deref(),
        Some(KEY_FORMAT)
    );
    drop(head);
    // What the earlier format left: a 16-byte key, and no format mark.
    let db = rusqlite::Connection::open(dir.join("log.sqlite")).unwrap();
    db.execute("DELETE FROM meta WHERE key = ?1", [META_KEY_FORMAT])
        .unwrap();
    db.execute(
        "INSERT INTO logged (key, idx) VALUES (?1, 0)",
        [vec![7u8; 16]],
    )
    .unwrap();
    drop(db);
    let err = SqliteHead::open(&dir).err().expect("refused");
    assert!(err.to_string().contains("older format"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sqlite_marks_a_store_without_keys_as_of_this_format() {
    let dir = scratch("sqlite-none");
    drop(SqliteHead::open(&dir).unwrap());
    let db = rusqlite::Connection::open(dir.join("log.sqlite")).unwrap();
    db.execute("DELETE FROM meta WHERE key = ?1", [META_KEY_FORMAT])
        .unwrap();
    drop(db);
    let mut head = SqliteHead::open(&dir).unwrap();
    assert_eq!(
        head.meta(META_KEY_FORMAT).unwrap().as_deref(),
        Some(KEY_FORMAT)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn postgres_refuses_a_store_of_sixteen_byte_keys() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let mut head = PgHead::connect(db.url()).unwrap();
    assert_eq!(
        head.meta(META_KEY_FORMAT).unwrap().as_deref(),
        Some(KEY_FORMAT)
    );
    head.set_meta(META_KEY_FORMAT, None).unwrap();
    drop(head);
    let mut admin = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
    admin
        .execute(
            "INSERT INTO tlog_logged (key, idx) VALUES ($1, 0)",
            &[&vec![7u8; 16]],
        )
        .unwrap();
    drop(admin);
    let err = PgHead::connect(db.url()).err().expect("refused");
    assert!(err.to_string().contains("older format"), "{err}");
}
