//! Witnessed publication: with it on, a batch leaves `public/checkpoint` alone, and only a
//! committed, applied, not-older checkpoint signed by the log is published by
//! `publish_witnessed`. On the single box and on PostgreSQL + a bucket.

mod support;
use support::backends::backends;
use support::*;

use toolmark_log::cosignature::{CosignerKey, add_signature_lines};
use toolmark_log::note::{LogKey, open_checkpoint};
use toolmark_log::store::{StoreError, publish_witnessed, signed_checkpoint};

#[test]
fn a_witnessed_log_keeps_its_new_checkpoint_private_until_published() {
    for b in backends("witnessed-private") {
        let mut log = b.init_with_key(LogKey::from_seed("w.example/log", &[1; 32]).unwrap());
        log.set_witnessed(true).unwrap();
        let empty = b.published();
        let appended = log.append(entries(0, 5)).unwrap();
        assert_eq!(b.published(), empty, "{}", b.name);
        let mut reader = b.head_reader();
        assert_eq!(
            signed_checkpoint(reader.as_mut()).unwrap().unwrap(),
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
        assert_eq!(
            publish_witnessed(reader.as_mut(), &b.public(), &cosigned).unwrap(),
            5
        );
        assert_eq!(b.published(), cosigned);
        // Reopening (recovery re-publishes only in unwitnessed mode) keeps the cosigned
        // checkpoint published.
        drop(log);
        let log = b.open().unwrap();
        assert_eq!(b.published(), cosigned, "{}", b.name);
        drop(log);
    }
}

#[test]
fn publish_witnessed_refuses_what_the_log_did_not_commit_or_an_older_size() {
    for b in backends("witnessed-refusals") {
        let key = LogKey::from_seed("w.example/log", &[1; 32]).unwrap();
        let mut log = b.init_with_key(LogKey::from_seed("w.example/log", &[1; 32]).unwrap());
        log.set_witnessed(true).unwrap();
        let five = log.append(entries(0, 5)).unwrap().checkpoint;
        let nine = log.append(entries(5, 4)).unwrap().checkpoint;
        let mut reader = b.head_reader();
        let public = b.public();
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
            publish_witnessed(reader.as_mut(), &public, &forged),
            Err(StoreError::Refused(_))
        ));
        // Another key's note is refused.
        let other = LogKey::from_seed("w.example/log", &[3; 32]).unwrap();
        let text = open_checkpoint(&nine, &log.vkey()).unwrap().to_text();
        assert!(matches!(
            publish_witnessed(reader.as_mut(), &public, &other.sign_note(&text).unwrap()),
            Err(StoreError::Refused(_))
        ));
        publish_witnessed(reader.as_mut(), &public, &nine).unwrap();
        // Never back to an older size.
        assert!(matches!(
            publish_witnessed(reader.as_mut(), &public, &five),
            Err(StoreError::Refused(_))
        ));
        assert_eq!(b.published(), nine, "{}", b.name);
        // Without witnesses the writer publishes and the cosigner may not.
        log.set_witnessed(false).unwrap();
        assert!(matches!(
            publish_witnessed(reader.as_mut(), &public, &nine),
            Err(StoreError::Refused(_))
        ));
    }
}
