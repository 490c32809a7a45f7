//! Witnessed publication: with it on, a batch leaves `public/checkpoint` alone, and only a
//! committed, durable, not-older checkpoint signed by the log is published by
//! `publish_witnessed`.

mod support;
use support::*;

use toolmark_log::Log;
use toolmark_log::cosignature::{CosignerKey, add_signature_lines};
use toolmark_log::note::{LogKey, open_checkpoint};
use toolmark_log::store::{StoreError, publish_witnessed, signed_checkpoint};

fn public(dir: &std::path::Path) -> Vec<u8> {
    std::fs::read(dir.join("public/checkpoint")).unwrap()
}

#[test]
fn a_witnessed_log_keeps_its_new_checkpoint_private_until_published() {
    let dir = tempdir("witnessed-private");
    let mut log =
        Log::init_with_key(&dir, LogKey::from_seed("w.example/log", &[1; 32]).unwrap()).unwrap();
    log.set_witnessed(true).unwrap();
    let empty = public(&dir);
    let appended = log.append(entries(0, 5)).unwrap();
    assert_eq!(public(&dir), empty);
    assert_eq!(
        signed_checkpoint(&dir).unwrap().unwrap(),
        appended.checkpoint
    );
    let w = CosignerKey::from_seed("w.example/witness", &[2; 32]).unwrap();
    let text = open_checkpoint(&appended.checkpoint, &log.vkey())
        .unwrap()
        .to_text();
    let cosigned = add_signature_lines(
        &appended.checkpoint,
        &[w.cosign(&text, 1_800_000_000).unwrap().to_line()],
    );
    assert_eq!(publish_witnessed(&dir, &cosigned).unwrap(), 5);
    assert_eq!(public(&dir), cosigned);
    // Reopening (recovery re-publishes the head) keeps the cosigned checkpoint published.
    drop(log);
    let log = Log::open(&dir).unwrap();
    assert_eq!(public(&dir), cosigned);
    drop(log);
}

#[test]
fn publish_witnessed_refuses_what_the_log_did_not_commit_or_an_older_size() {
    let dir = tempdir("witnessed-refusals");
    let key = LogKey::from_seed("w.example/log", &[1; 32]).unwrap();
    let mut log =
        Log::init_with_key(&dir, LogKey::from_seed("w.example/log", &[1; 32]).unwrap()).unwrap();
    log.set_witnessed(true).unwrap();
    let five = log.append(entries(0, 5)).unwrap().checkpoint;
    let nine = log.append(entries(5, 4)).unwrap().checkpoint;
    // A checkpoint the log never committed (same key, another root) is refused.
    let forged = key
        .sign_checkpoint(&toolmark_log::note::Checkpoint {
            origin: "w.example/log".into(),
            size: 9,
            root: toolmark_log::Hash([7; 32]),
            extensions: vec![],
        })
        .unwrap();
    assert!(matches!(
        publish_witnessed(&dir, &forged),
        Err(StoreError::Refused(_))
    ));
    // Another key's note is refused.
    let other = LogKey::from_seed("w.example/log", &[3; 32]).unwrap();
    let text = open_checkpoint(&nine, &log.vkey()).unwrap().to_text();
    assert!(matches!(
        publish_witnessed(&dir, &other.sign_note(&text).unwrap()),
        Err(StoreError::Refused(_))
    ));
    publish_witnessed(&dir, &nine).unwrap();
    // Never back to an older size.
    assert!(matches!(
        publish_witnessed(&dir, &five),
        Err(StoreError::Refused(_))
    ));
    assert_eq!(public(&dir), nine);
    // Without witnesses the writer publishes and the cosigner may not.
    log.set_witnessed(false).unwrap();
    assert!(matches!(
        publish_witnessed(&dir, &nine),
        Err(StoreError::Refused(_))
    ));
}
