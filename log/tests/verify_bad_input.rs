//! `fsck` and `audit` on damaged or dishonest logs: every kind of damage is a clear error, never a
//! panic, and an auditor refuses a shrink, a fork and a key change.

mod support;
use support::*;

use std::path::{Path, PathBuf};
use toolmark_log::Log;
use toolmark_log::verify::{self, AuditState, DirSource, VerifyError};

/// A log of `n` entries appended in two batches; returns its directory and vkey.
fn make_log(tag: &str, n: usize) -> (PathBuf, String) {
    let dir = tempdir(tag);
    let mut log = Log::init(&dir, "verify.example/log").unwrap();
    log.append(entries(0, n / 2)).unwrap();
    log.append(entries(n / 2, n - n / 2)).unwrap();
    let vkey = log.vkey();
    (dir, vkey)
}

/// fsck a copy of `public` damaged by `damage`, returning the error message.
fn fsck_damaged(public: &Path, vkey: &str, tag: &str, damage: impl FnOnce(&Path)) -> String {
    let copy = tempdir(tag);
    copy_dir(public, &copy);
    damage(&copy);
    let result = std::panic::catch_unwind(|| verify::fsck(&DirSource(copy.clone()), vkey));
    std::fs::remove_dir_all(&copy).ok();
    match result {
        Ok(Ok(_)) => panic!("{tag}: damaged log verified"),
        Ok(Err(e)) => e.to_string(),
        Err(_) => panic!("{tag}: fsck panicked"),
    }
}

/// A way to damage a copy of a published log.
type Damage = Box<dyn FnOnce(&Path)>;

#[test]
fn damage_is_a_clear_error() {
    let (dir, vkey) = make_log("damage", 700);
    let public = dir.join("public");
    assert_eq!(
        verify::fsck(&DirSource(public.clone()), &vkey)
            .unwrap()
            .entries,
        700
    );
    let cases: Vec<(&str, Damage, &str)> = vec![
        (
            "tile",
            Box::new(|p: &Path| flip_byte(&p.join("tile/0/000"), 100)),
            "tile bytes differ",
        ),
        (
            "partial-tile",
            Box::new(|p: &Path| flip_byte(&p.join("tile/0/002.p/188"), 5)),
            "tile bytes differ",
        ),
        (
            "upper-tile",
            Box::new(|p: &Path| flip_byte(&p.join("tile/1/000.p/2"), 40)),
            "tile bytes differ",
        ),
        (
            "bundle-byte",
            Box::new(|p: &Path| flip_byte(&p.join("tile/entries/001"), 300)),
            "entry",
        ),
        (
            "bundle-truncated",
            Box::new(|p: &Path| {
                let f = p.join("tile/entries/002.p/188");
                let b = std::fs::read(&f).unwrap();
                std::fs::write(&f, &b[..b.len() - 7]).unwrap();
            }),
            "tile/entries/002.p/188",
        ),
        (
            "bundle-missing",
            Box::new(|p: &Path| std::fs::remove_file(p.join("tile/entries/000")).unwrap()),
            "missing",
        ),
        (
            "checkpoint-sig",
            Box::new(|p: &Path| flip_byte(&p.join("checkpoint"), 80)),
            "checkpoint",
        ),
        (
            "checkpoint-size",
            Box::new(|p: &Path| {
                let f = p.join("checkpoint");
                let t = std::fs::read_to_string(&f)
                    .unwrap()
                    .replacen("\n700\n", "\n699\n", 1);
                std::fs::write(&f, t).unwrap();
            }),
            "checkpoint",
        ),
        (
            "checkpoint-garbage",
            Box::new(|p: &Path| std::fs::write(p.join("checkpoint"), b"\xff\x00junk").unwrap()),
            "checkpoint",
        ),
    ];
    for (tag, damage, want) in cases {
        let err = fsck_damaged(&public, &vkey, tag, damage);
        assert!(err.contains(want), "{tag}: {err}");
    }
    // A swapped key: the checkpoint does not verify under another log's key.
    let (other, other_vkey) = make_log("damage-other", 3);
    let err = verify::fsck(&DirSource(public.clone()), &other_vkey).unwrap_err();
    assert!(matches!(err, VerifyError::Checkpoint(_)), "{err}");
    for d in [dir, other] {
        std::fs::remove_dir_all(d).ok();
    }
}

#[test]
fn auditor_refuses_shrink_fork_and_key_change() {
    let (dir, vkey) = make_log("audit", 300);
    let public = dir.join("public");
    let (_, state) = verify::audit(&DirSource(public.clone()), &vkey, None).unwrap();
    assert_eq!(state.size, 300);
    let text = state.to_text();
    assert_eq!(AuditState::parse(&text).unwrap(), state);
    // Growth is fine and proven consistent.
    {
        let mut log = Log::open(&dir).unwrap();
        log.append(entries(300, 40)).unwrap();
    }
    let (_, grown) = verify::audit(&DirSource(public.clone()), &vkey, Some(&state)).unwrap();
    assert_eq!(grown.size, 340);

    // Shrink: the auditor remembers more than the log now shows.
    let ahead = AuditState {
        size: 400,
        ..grown.clone()
    };
    let err = verify::audit(&DirSource(public.clone()), &vkey, Some(&ahead)).unwrap_err();
    assert!(err.to_string().contains("shrank"), "{err}");

    // Fork: a log signed with the same key but holding other entries.
    let forked = {
        let d = tempdir("audit-fork");
        std::fs::create_dir_all(d.join("private")).unwrap();
        std::fs::copy(dir.join("private/log.key"), d.join("private/log.key")).unwrap();
        d
    };
    let err = forked_log_audit(&forked, &vkey, &grown);
    assert!(
        err.contains("fork") || err.contains("not consistent"),
        "{err}"
    );

    // Key change.
    let (other, other_vkey) = make_log("audit-other", 400);
    let err =
        verify::audit(&DirSource(other.join("public")), &other_vkey, Some(&grown)).unwrap_err();
    assert!(err.to_string().contains("key changed"), "{err}");
    for d in [dir, other, forked] {
        std::fs::remove_dir_all(d).ok();
    }
}

/// Build, with `dir`'s key, a log of different entries that is longer than `state`, and audit it
/// against `state`: the remembered root cannot be reproduced.
fn forked_log_audit(dir: &Path, vkey: &str, state: &AuditState) -> String {
    use toolmark_log::note::LogKey;
    use toolmark_log::store::LogStores;
    let key = LogKey::from_skey(
        std::fs::read_to_string(dir.join("private/log.key"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    // A fresh head store under the same key (an empty head, then a different history).
    let mut log = Log::create(LogStores::dir(dir).unwrap(), key, Box::new(|| 2)).unwrap();
    log.append(entries(1000, state.size as usize + 10)).unwrap();
    verify::audit(&DirSource(dir.join("public")), vkey, Some(state))
        .unwrap_err()
        .to_string()
}
