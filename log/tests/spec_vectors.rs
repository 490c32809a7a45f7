//! Known answers from the specs (C2SP signed-note, tlog-checkpoint, tlog-tiles, tlog-proof;
//! RFC 6962/9162) and Go's `note` documentation, plus round trips and rejections of the wire
//! formats in `merkle`, `tiles`, `note` and `proof`.

use toolmark_log::merkle::{
    EMPTY_ROOT, FormatError, Hash, MemoryHashes, ProofError, consistency_proof, inclusion_proof,
    leaf_hash, node_hash, tree_hash, verify_consistency, verify_inclusion,
};
use toolmark_log::note::{Checkpoint, LogKey, VerifierKey, key_id, open_checkpoint, verify_note};
use toolmark_log::proof::{decode_tlog_proof, encode_tlog_proof, verify_tlog_proof};
use toolmark_log::tiles::{
    MAX_ENTRY_BYTES, ParsedPath, TileId, bundle_path, decode_bundle, encode_bundle, new_tiles,
    parse_tile_path, tiles_for_size,
};

const EXAMPLE_VKEY: &str = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
const EXAMPLE_NOTE: &str = "This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";
const SUMDB_VKEY: &str = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8";

// Go's golang.org/x/mod/sumdb/note package documentation example.
const PETER_SKEY: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const PETER_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const PETER_TEXT: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_NOTE: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

const ORIGIN: &str = "example.com/toolmark-test";

fn hex(h: &Hash) -> String {
    h.to_hex()
}

// ---------------------------------------------------------------- signed-note

#[test]
fn signed_note_spec_example_verifies() {
    let text = verify_note(EXAMPLE_NOTE.as_bytes(), EXAMPLE_VKEY).unwrap();
    assert_eq!(text, "This is an example message.\n");
    // It is not a checkpoint.
    assert!(matches!(
        open_checkpoint(EXAMPLE_NOTE.as_bytes(), EXAMPLE_VKEY),
        Err(FormatError::BadCheckpoint(_))
    ));
    // Another key's note: the signature line is unknown to it, so nothing verifies.
    assert!(matches!(
        verify_note(EXAMPLE_NOTE.as_bytes(), SUMDB_VKEY),
        Err(FormatError::NotSigned(_))
    ));
}

#[test]
fn key_ids_recompute() {
    for (vkey, want) in [(EXAMPLE_VKEY, 0x530d903a_u32), (SUMDB_VKEY, 0x033de0ae)] {
        let k = VerifierKey::parse(vkey).unwrap();
        assert_eq!(k.id, want, "{vkey}");
        assert_eq!(k.key_type, 0x01);
        let pk: [u8; 32] = k.public_key.as_slice().try_into().unwrap();
        assert_eq!(key_id(&k.name, &pk), want, "{vkey}");
    }
    // The base64 of the sumdb key contains '+': only the first two '+' split.
    assert_eq!(
        VerifierKey::parse(SUMDB_VKEY).unwrap().name,
        "sum.golang.org"
    );
    // A wrong ID is refused.
    let wrong = EXAMPLE_VKEY.replace("530d903a", "530d903b");
    assert!(matches!(
        VerifierKey::parse(&wrong),
        Err(FormatError::BadKey(_))
    ));
    assert!(matches!(
        verify_note(EXAMPLE_NOTE.as_bytes(), &wrong),
        Err(FormatError::BadKey(_))
    ));
}

#[test]
fn go_note_doc_example_signs_byte_for_byte() {
    let key = LogKey::from_skey(PETER_SKEY).unwrap();
    assert_eq!(key.vkey(), PETER_VKEY);
    assert_eq!(key.key_id(), 0xc74f20a3);
    assert_eq!(key.name(), "PeterNeumann");
    assert_eq!(key.to_skey(), PETER_SKEY);
    // Ed25519 is deterministic: same key, same text, same note.
    assert_eq!(key.sign_note(PETER_TEXT).unwrap(), PETER_NOTE.as_bytes());
    assert_eq!(
        verify_note(PETER_NOTE.as_bytes(), PETER_VKEY).unwrap(),
        PETER_TEXT
    );
    // A trailing newline in a key file is fine.
    assert_eq!(
        LogKey::from_skey(&format!("{PETER_SKEY}\n"))
            .unwrap()
            .vkey(),
        PETER_VKEY
    );
}

#[test]
fn private_key_rejections() {
    for bad in [
        "",
        "PRIVATE+KEY+PeterNeumann+c74f20a3",
        "PUBLIC+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        // wrong key ID
        "PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        // wrong name for the ID
        "PRIVATE+KEY+PeterNeuman+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        // type byte 0x02
        "PRIVATE+KEY+PeterNeumann+c74f20a3+AoEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
        // short seed
        "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKA==",
        "PRIVATE+KEY+Peter Neumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",
    ] {
        let err = LogKey::from_skey(bad).unwrap_err();
        assert!(matches!(err, FormatError::BadKey(_)), "{bad}: {err}");
        assert!(
            !err.to_string().contains("AYEKFALVFGyNhPJEMzD1QIDr"),
            "error leaks the key: {err}"
        );
    }
    for name in ["", "a b", "a+b", "a\nb", "a\u{a0}b"] {
        assert!(LogKey::generate(name).is_err(), "{name:?}");
    }
}

#[test]
fn generated_keys_are_distinct_and_round_trip() {
    let a = LogKey::generate(ORIGIN).unwrap();
    let b = LogKey::generate(ORIGIN).unwrap();
    assert_ne!(a.vkey(), b.vkey());
    let a2 = LogKey::from_skey(&a.to_skey()).unwrap();
    assert_eq!(a2.vkey(), a.vkey());
    assert_eq!(a2.public_key(), a.public_key());
    let vk = a.vkey();
    assert!(vk.starts_with(&format!("{ORIGIN}+{:08x}+", a.key_id())));
    assert_eq!(VerifierKey::parse(&vk).unwrap().id, a.key_id());
    assert_eq!(key_id(ORIGIN, &a.public_key()), a.key_id());
    assert!(!format!("{a:?}").contains(&a.to_skey()));
}

// ---------------------------------------------------------------- checkpoint

fn test_key() -> LogKey {
    LogKey::from_seed(ORIGIN, &[42; 32]).unwrap()
}

fn checkpoint(size: u64) -> Checkpoint {
    let mut m = MemoryHashes::new();
    for i in 0..size {
        m.append_entry(format!("entry {i}").as_bytes()).unwrap();
    }
    Checkpoint {
        origin: ORIGIN.into(),
        size,
        root: m.root(),
        extensions: vec![],
    }
}

#[test]
fn checkpoint_sign_open_round_trip() {
    let key = test_key();
    for cp in [
        checkpoint(0),
        checkpoint(1),
        checkpoint(1000),
        Checkpoint {
            extensions: vec!["ext one".into(), "ext/2".into()],
            ..checkpoint(3)
        },
    ] {
        let note = key.sign_checkpoint(&cp).unwrap();
        let text = cp.to_text();
        assert!(note.starts_with(format!("{text}\n— {ORIGIN} ").as_bytes()));
        assert!(note.ends_with(b"\n"));
        assert_eq!(open_checkpoint(&note, &key.vkey()).unwrap(), cp);
        assert_eq!(Checkpoint::parse_text(&text).unwrap(), cp);
    }
    let empty = checkpoint(0);
    assert_eq!(
        empty.to_text(),
        format!("{ORIGIN}\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n")
    );
}

#[test]
fn checkpoint_tampering_is_refused() {
    let key = test_key();
    let vkey = key.vkey();
    let note = key.sign_checkpoint(&checkpoint(5)).unwrap();
    let s = String::from_utf8(note.clone()).unwrap();

    // Tampered text: size 5 → 6.
    let t = s.replacen("\n5\n", "\n6\n", 1);
    assert!(matches!(
        open_checkpoint(t.as_bytes(), &vkey),
        Err(FormatError::BadSignature { .. })
    ));

    // Tampered signature: flip one bit of the signature (after the 4-byte key ID).
    let (head, sig_b64) = s.trim_end().rsplit_once(' ').unwrap();
    let mut sig = base64_decode(sig_b64);
    sig[10] ^= 0x01;
    let t = format!("{head} {}\n", base64_encode(&sig));
    assert!(matches!(
        open_checkpoint(t.as_bytes(), &vkey),
        Err(FormatError::BadSignature { .. })
    ));

    // Tampered key ID on the line: no longer this key's line, so nothing verifies.
    let mut sig = base64_decode(sig_b64);
    sig[0] ^= 0x01;
    let t = format!("{head} {}\n", base64_encode(&sig));
    assert!(matches!(
        open_checkpoint(t.as_bytes(), &vkey),
        Err(FormatError::NotSigned(_))
    ));

    // Wrong key (another name).
    let other = LogKey::from_seed("example.com/other", &[42; 32]).unwrap();
    assert!(matches!(
        open_checkpoint(&note, &other.vkey()),
        Err(FormatError::NotSigned(_))
    ));

    // Swapped vkey: same name, different key.
    let twin = LogKey::from_seed(ORIGIN, &[43; 32]).unwrap();
    assert!(matches!(
        open_checkpoint(&note, &twin.vkey()),
        Err(FormatError::NotSigned(_))
    ));

    // A note signed by `other` over a checkpoint naming our origin: origin ≠ key name.
    let forged = other.sign_note(&checkpoint(5).to_text()).unwrap();
    assert!(matches!(
        open_checkpoint(&forged, &other.vkey()),
        Err(FormatError::OriginMismatch { .. })
    ));
    // And we refuse to sign one.
    assert!(matches!(
        other.sign_checkpoint(&checkpoint(5)),
        Err(FormatError::OriginMismatch { .. })
    ));

    // Unknown extra signatures (e.g. witnesses, GREASE) are ignored, in any position.
    let witness = LogKey::from_seed("witness.example", &[9; 32]).unwrap();
    let wsig = witness.sign_note(&checkpoint(5).to_text()).unwrap();
    let wline = String::from_utf8(wsig).unwrap();
    let wline = wline.rsplit_once("\n\n").unwrap().1;
    let both = format!(
        "{}\n{wline}{}",
        checkpoint(5).to_text(),
        s.rsplit_once("\n\n").unwrap().1
    );
    assert_eq!(
        open_checkpoint(both.as_bytes(), &vkey).unwrap(),
        checkpoint(5)
    );

    // Our line plus a forged line claiming our name and ID: reject the whole note.
    let mut sig = base64_decode(sig_b64);
    sig[20] ^= 0x80;
    let forged_line = format!("— {ORIGIN} {}\n", base64_encode(&sig));
    let t = format!("{s}{forged_line}");
    assert!(matches!(
        open_checkpoint(t.as_bytes(), &vkey),
        Err(FormatError::BadSignature { .. })
    ));
    // Same, forged line first.
    let (text, good_line) = s.rsplit_once("\n\n").unwrap();
    let t = format!("{text}\n\n{forged_line}{good_line}");
    assert!(matches!(
        open_checkpoint(t.as_bytes(), &vkey),
        Err(FormatError::BadSignature { .. })
    ));
    // An exact duplicate of the good line is harmless.
    let t = format!("{s}{good_line}");
    assert!(open_checkpoint(t.as_bytes(), &vkey).is_ok());
}

#[test]
fn note_format_rejections() {
    let key = test_key();
    let vkey = key.vkey();
    let note = String::from_utf8(key.sign_checkpoint(&checkpoint(2)).unwrap()).unwrap();
    let (text, sigs) = note.rsplit_once("\n\n").unwrap();

    // 101 signature lines (100 unknown + ours) → malformed; 100 is fine.
    let unknown = "— grease.example AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n";
    let ok = format!("{text}\n\n{}{sigs}", unknown.repeat(99));
    assert!(open_checkpoint(ok.as_bytes(), &vkey).is_ok());
    let too_many = format!("{text}\n\n{}{sigs}", unknown.repeat(100));
    assert!(matches!(
        open_checkpoint(too_many.as_bytes(), &vkey),
        Err(FormatError::MalformedNote(_))
    ));

    // Control characters, invalid UTF-8, no blank line, no final newline.
    let cr = note.replacen('\n', "\r\n", 1);
    let no_final_newline = note.trim_end_matches('\n').to_owned();
    let no_blank_line = note.replacen("\n\n", "\n", 1);
    let mut not_utf8 = note.clone().into_bytes();
    not_utf8[3] = 0xff;
    for bad in [
        cr.into_bytes(),
        no_final_newline.into_bytes(),
        no_blank_line.into_bytes(),
        not_utf8,
        b"".to_vec(),
    ] {
        assert!(matches!(
            open_checkpoint(&bad, &vkey),
            Err(FormatError::MalformedNote(_))
        ));
    }

    // A malformed vkey.
    assert!(matches!(
        open_checkpoint(note.as_bytes(), "nonsense"),
        Err(FormatError::BadKey(_))
    ));

    // Signing refuses text that would not survive as a note.
    assert!(key.sign_note("no newline").is_err());
    assert!(key.sign_note("a\n\nb\n").is_err());
    assert!(key.sign_note("tab\there\n").is_err());
}

#[test]
fn checkpoint_parse_is_strict() {
    let root = EMPTY_ROOT.to_base64();
    let good = format!("{ORIGIN}\n0\n{root}\n");
    assert!(Checkpoint::parse_text(&good).is_ok());
    for bad in [
        format!("{ORIGIN}\n0\n{root}"),    // no final newline
        format!("{ORIGIN}\n00\n{root}\n"), // leading zero
        format!("{ORIGIN}\n01\n{root}\n"), // leading zero
        format!("{ORIGIN}\n+1\n{root}\n"), // sign
        format!("{ORIGIN}\n-1\n{root}\n"), // sign
        format!("{ORIGIN}\n 1\n{root}\n"), // space
        format!("{ORIGIN}\n18446744073709551616\n{root}\n"), // > u64
        format!("{ORIGIN}\n1\n{}\n", &root[..43]), // 43 chars
        format!("{ORIGIN}\n1\n{root}=\n"), // 45 chars
        format!("{ORIGIN}\n1\n{}\n", root.replace('/', "_")), // URL alphabet
        format!("{ORIGIN}\n1\n"),          // no root
        format!("{ORIGIN}\n"),             // no size
        format!("\n1\n{root}\n"),          // empty origin
        format!("a b\n1\n{root}\n"),       // whitespace in origin
        format!("a+b\n1\n{root}\n"),       // '+' in origin
        format!("{ORIGIN}\n1\n{root}\n\n"), // empty extension line
        format!("{ORIGIN}\n1\n{root}\nx\u{7f}\n"), // control character
    ] {
        assert!(
            matches!(
                Checkpoint::parse_text(&bad),
                Err(FormatError::BadCheckpoint(_))
            ),
            "{bad:?}"
        );
    }
    // A checkpoint that would not read back as itself is never signed.
    let key = test_key();
    for cp in [
        Checkpoint {
            extensions: vec!["two\nlines".into()],
            ..checkpoint(0)
        },
        Checkpoint {
            extensions: vec![String::new()],
            ..checkpoint(0)
        },
        Checkpoint {
            origin: "bad origin".into(),
            ..checkpoint(0)
        },
    ] {
        assert!(key.sign_checkpoint(&cp).is_err(), "{cp:?}");
    }
}

// ---------------------------------------------------------------- Merkle

#[test]
fn empty_tree_root() {
    assert_eq!(
        EMPTY_ROOT.to_base64(),
        "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    );
    assert_eq!(tree_hash(0, &MemoryHashes::new()).unwrap(), EMPTY_ROOT);
    assert_eq!(
        Hash::from_base64("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=").unwrap(),
        EMPTY_ROOT
    );
}

#[test]
fn rfc9162_small_vector() {
    let mut m = MemoryHashes::new();
    for e in ["a", "b", "c"] {
        m.append_entry(e.as_bytes()).unwrap();
    }
    let root2 = tree_hash(2, &m).unwrap();
    let root3 = tree_hash(3, &m).unwrap();
    assert_eq!(
        hex(&root2),
        "b137985ff484fb600db93107c77b0365c80d78f5b429ded0fd97361d077999eb"
    );
    assert_eq!(
        hex(&root3),
        "36642e73c2540ab121e3a6bf9545b0a24982cd830eb13d3cd19de3ce6c021ec1"
    );
    let (a, b, c) = (leaf_hash(b"a"), leaf_hash(b"b"), leaf_hash(b"c"));
    assert_eq!(root2, node_hash(&a, &b));
    assert_eq!(root3, node_hash(&node_hash(&a, &b), &c));
    assert_eq!(tree_hash(1, &m).unwrap(), a);

    // Audit paths: sibling first, root's child last.
    assert_eq!(inclusion_proof(0, 3, &m).unwrap(), vec![b, c]);
    assert_eq!(inclusion_proof(2, 3, &m).unwrap(), vec![root2]);
    verify_inclusion(&[b, c], 3, &root3, 0, &a).unwrap();
    verify_inclusion(&[root2], 3, &root3, 2, &c).unwrap();
    assert!(matches!(
        verify_inclusion(&[b, c], 3, &root3, 1, &a),
        Err(ProofError::InvalidProof)
    ));
    // Consistency 2 → 3 is [c]; 1 → 3 is [b, c].
    assert_eq!(consistency_proof(2, 3, &m).unwrap(), vec![c]);
    assert_eq!(consistency_proof(1, 3, &m).unwrap(), vec![b, c]);
    verify_consistency(&[c], 3, &root3, 2, &root2).unwrap();
    verify_consistency(&[b, c], 3, &root3, 1, &a).unwrap();
    assert!(verify_consistency(&[c], 3, &root3, 2, &a).is_err());
}

// ---------------------------------------------------------------- tiles

fn tile(level: u8, index: u64, width: u16) -> TileId {
    TileId {
        level,
        index,
        width,
    }
}

#[test]
fn tile_paths() {
    assert_eq!(tile(0, 1234067, 256).path(), "tile/0/x001/x234/067");
    assert_eq!(tile(0, 0, 256).path(), "tile/0/000");
    assert_eq!(tile(0, 1000, 256).path(), "tile/0/x001/000");
    assert_eq!(tile(1, 999, 256).path(), "tile/1/999");
    assert_eq!(tile(2, 1234067, 8).path(), "tile/2/x001/x234/067.p/8");
    assert_eq!(tile(0, 0, 1).path(), "tile/0/000.p/1");
    assert_eq!(tile(0, 0, 255).path(), "tile/0/000.p/255");
    assert_eq!(bundle_path(1234067, 256), "tile/entries/x001/x234/067");
    assert_eq!(bundle_path(0, 112), "tile/entries/000.p/112");
    assert_eq!(bundle_path(1000, 1), "tile/entries/x001/000.p/1");

    assert_eq!(
        parse_tile_path("tile/0/x001/x234/067").unwrap(),
        ParsedPath::Tile(tile(0, 1234067, 256))
    );
    assert_eq!(
        parse_tile_path("tile/entries/x001/000.p/1").unwrap(),
        ParsedPath::Bundle {
            index: 1000,
            width: 1
        }
    );
    // Go sumdb paths are not C2SP paths.
    for bad in [
        "tile/8/0/x001/x234/067",
        "tile/8/data/000",
        "tile/0/1234067",
        "tile/0/x001/x234/67",
        "tile/0/000.p/256",
    ] {
        assert!(
            matches!(parse_tile_path(bad), Err(FormatError::BadTilePath { .. })),
            "{bad}"
        );
    }
}

#[test]
fn tile_counts_spec_example() {
    let t = tiles_for_size(70_000);
    let count = |level: u8, full: bool| {
        t.iter()
            .filter(|x| x.level == level && x.is_full() == full)
            .count()
    };
    assert_eq!(count(0, true), 273);
    assert_eq!(count(0, false), 1);
    assert!(t.contains(&tile(0, 273, 112)));
    assert_eq!(count(1, true), 1);
    assert_eq!(count(1, false), 1);
    assert!(t.contains(&tile(1, 1, 17)));
    assert_eq!(count(2, true), 0);
    assert_eq!(
        t.iter().filter(|x| x.level == 2).collect::<Vec<_>>(),
        vec![&tile(2, 0, 1)]
    );
    assert_eq!(t.iter().filter(|x| x.level > 2).count(), 0);
    assert_eq!(t.len(), 273 + 1 + 1 + 1 + 1);

    assert_eq!(tiles_for_size(256), vec![tile(0, 0, 256), tile(1, 0, 1)]);
    assert_eq!(tiles_for_size(0), vec![]);

    // Growing from 69,999 to 70,000 rewrites only the partials of every level that changed.
    assert_eq!(new_tiles(69_999, 70_000), vec![tile(0, 273, 112)]);
    assert_eq!(
        new_tiles(65_535, 65_536),
        vec![tile(0, 255, 256), tile(1, 0, 256), tile(2, 0, 1)]
    );
    assert_eq!(new_tiles(0, 70_000), tiles_for_size(70_000));
}

#[test]
fn entry_bundles() {
    let big = vec![7u8; MAX_ENTRY_BYTES];
    let entries: Vec<&[u8]> = vec![b"first", b"", b"third entry", &big];
    let bytes = encode_bundle(&entries).unwrap();
    assert_eq!(&bytes[..7], b"\x00\x05first");
    assert_eq!(&bytes[7..9], b"\x00\x00");
    assert_eq!(decode_bundle(&bytes).unwrap(), entries);

    let full: Vec<Vec<u8>> = (0..256u32).map(|i| i.to_be_bytes().to_vec()).collect();
    let full_refs: Vec<&[u8]> = full.iter().map(Vec::as_slice).collect();
    let full_bytes = encode_bundle(&full_refs).unwrap();
    assert_eq!(decode_bundle(&full_bytes).unwrap(), full_refs);

    // Oversized entry, too many entries, no entries.
    let too_big = vec![0u8; MAX_ENTRY_BYTES + 1];
    assert!(matches!(
        encode_bundle(&[b"ok", &too_big]),
        Err(FormatError::EntryTooLarge {
            index: 1,
            len: 65_536
        })
    ));
    let mut refs257 = full_refs.clone();
    refs257.push(b"one more");
    assert!(matches!(
        encode_bundle(&refs257),
        Err(FormatError::BundleEntryCount(257))
    ));
    assert!(matches!(
        encode_bundle(&[]),
        Err(FormatError::BundleEntryCount(0))
    ));
    let mut bytes257 = full_bytes.clone();
    bytes257.extend_from_slice(b"\x00\x01x");
    assert!(matches!(
        decode_bundle(&bytes257),
        Err(FormatError::BundleEntryCount(257))
    ));
    assert!(matches!(
        decode_bundle(b""),
        Err(FormatError::BundleEntryCount(0))
    ));

    // Truncation: inside an entry, inside a length prefix, a single trailing byte.
    assert!(matches!(
        decode_bundle(&bytes[..bytes.len() - 1]),
        Err(FormatError::BundleTruncated { index: 3, .. })
    ));
    assert!(matches!(
        decode_bundle(&bytes[..8]),
        Err(FormatError::BundleTruncated { index: 1, .. })
    ));
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert!(matches!(
        decode_bundle(&trailing),
        Err(FormatError::BundleTruncated { index: 4, .. })
    ));
    assert!(matches!(
        decode_bundle(b"\x00\x09short"),
        Err(FormatError::BundleTruncated { index: 0, .. })
    ));
}

// ---------------------------------------------------------------- tlog-proof

#[test]
fn tlog_proof_round_trip_and_verify() {
    let key = test_key();
    let size = 37u64;
    let mut m = MemoryHashes::new();
    let entries: Vec<Vec<u8>> = (0..size)
        .map(|i| format!("entry {i}").into_bytes())
        .collect();
    for e in &entries {
        m.append_entry(e).unwrap();
    }
    let cp = Checkpoint {
        origin: ORIGIN.into(),
        size,
        root: m.root(),
        extensions: vec![],
    };
    let note = key.sign_checkpoint(&cp).unwrap();
    let index = 21;
    let proof = inclusion_proof(index, size, &m).unwrap();

    for extra in [None, Some(&b"opaque \x00 data"[..]), Some(&b""[..])] {
        let text = encode_tlog_proof(extra, index, &proof, &note);
        assert!(text.starts_with("c2sp.org/tlog-proof@v1\n"));
        assert!(text.ends_with(std::str::from_utf8(&note).unwrap()));
        let p = decode_tlog_proof(&text).unwrap();
        assert_eq!(p.extra.as_deref(), extra);
        assert_eq!(p.index, index);
        assert_eq!(p.proof, proof);
        assert_eq!(p.checkpoint, note);
        assert_eq!(
            encode_tlog_proof(p.extra.as_deref(), p.index, &p.proof, &p.checkpoint),
            text
        );
        assert_eq!(
            verify_tlog_proof(&p, &entries[index as usize], &key.vkey()).unwrap(),
            cp
        );
        // Wrong entry, wrong index, wrong key.
        assert!(matches!(
            verify_tlog_proof(&p, b"entry 22", &key.vkey()),
            Err(FormatError::Proof(ProofError::InvalidProof))
        ));
        let mut q = p.clone();
        q.index = 22;
        assert!(matches!(
            verify_tlog_proof(&q, &entries[index as usize], &key.vkey()),
            Err(FormatError::Proof(_))
        ));
        let other = LogKey::from_seed(ORIGIN, &[1; 32]).unwrap();
        assert!(matches!(
            verify_tlog_proof(&p, &entries[index as usize], &other.vkey()),
            Err(FormatError::NotSigned(_))
        ));
    }

    // Exact layout for one case.
    let text = encode_tlog_proof(Some(b"hi"), 21, &proof[..1], &note);
    let want = format!(
        "c2sp.org/tlog-proof@v1\nextra aGk=\nindex 21\n{}\n\n{}",
        proof[0].to_base64(),
        std::str::from_utf8(&note).unwrap()
    );
    assert_eq!(text, want);

    // A one-leaf tree has an empty proof.
    let one = encode_tlog_proof(None, 0, &[], b"cp\n");
    assert_eq!(one, "c2sp.org/tlog-proof@v1\nindex 0\n\ncp\n");
    assert!(decode_tlog_proof(&one).unwrap().proof.is_empty());
}

#[test]
fn tlog_proof_decode_rejections() {
    let h = EMPTY_ROOT.to_base64();
    let cases = [
        String::new(),
        "c2sp.org/tlog-proof@v1".to_string(),
        "c2sp.org/tlog-proof@v2\nindex 0\n\ncp\n".to_string(),
        "c2sp.org/tlog-proof@v1\nindex 01\n\ncp\n".to_string(),
        "c2sp.org/tlog-proof@v1\nindex -1\n\ncp\n".to_string(),
        "c2sp.org/tlog-proof@v1\nindex \n\ncp\n".to_string(),
        "c2sp.org/tlog-proof@v1\nindex 18446744073709551616\n\ncp\n".to_string(),
        "c2sp.org/tlog-proof@v1\nextra !!\nindex 0\n\ncp\n".to_string(),
        "c2sp.org/tlog-proof@v1\n\nindex 0\n\ncp\n".to_string(),
        format!("c2sp.org/tlog-proof@v1\nindex 0\n{h}\n"),
        format!("c2sp.org/tlog-proof@v1\nindex 0\n{h}\n\n"),
        format!("c2sp.org/tlog-proof@v1\nindex 0\n{}\n\ncp\n", &h[..43]),
        format!("c2sp.org/tlog-proof@v1\nindex 0\n{h}x\n\ncp\n"),
        format!(
            "c2sp.org/tlog-proof@v1\nindex 0\n{}\ncp\n",
            format!("{h}\n").repeat(65)
        ),
        "c2sp.org/tlog-proof@v1\nextra aGk=\nextra aGk=\nindex 0\n\ncp\n".to_string(),
    ];
    for bad in &cases {
        assert!(
            matches!(
                decode_tlog_proof(bad),
                Err(FormatError::BadTlogProof { .. })
            ),
            "{bad:?}"
        );
    }
    let err = decode_tlog_proof("c2sp.org/tlog-proof@v1\nindex 0\nnope\n\ncp\n").unwrap_err();
    assert!(err.to_string().contains("line 3"), "{err}");
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}
