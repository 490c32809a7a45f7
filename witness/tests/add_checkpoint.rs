//! The witness's router against the C2SP tlog-witness table, one test per row (and the rest of
//! its behaviour: 413, 405, monitoring, the key file), through `tower::ServiceExt::oneshot`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use base64::Engine as _;
use http_body_util::BodyExt as _;
use toolmark_log::Hash;
use toolmark_log::cosignature::add_signature_lines;
use toolmark_log::cosignature::{Cosignature, CosignerKey, WitnessKey, note_cosignatures};
use toolmark_log::merkle::{EMPTY_ROOT, MemoryHashes, consistency_proof, tree_hash};
use toolmark_log::note::{Checkpoint, LogKey, verify_note};
use toolmark_log::witness::{AddCheckpoint, MAX_REQUEST_BYTES, SIZE_CONTENT_TYPE};
use toolmark_witness::{Trust, Witness, origin_hash, router};
use tower::ServiceExt as _;

const ORIGIN: &str = "log.example/test";

fn tmp(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "toolmark-witness-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A log of `n` entries (`entry 0`, `entry 1`, …) with its key, and a witness trusting it.
struct Fixture {
    dir: PathBuf,
    log: LogKey,
    hashes: MemoryHashes,
    witness: Arc<Witness>,
    app: Router,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = tmp(name);
        let log = LogKey::from_seed(ORIGIN, &[1u8; 32]).unwrap();
        let trust = Trust::parse(&format!("{ORIGIN}={}", log.vkey())).unwrap();
        let witness = Arc::new(Witness::open(&dir, "witness.example/w", &[trust]).unwrap());
        let app = router(witness.clone(), "/w");
        Fixture {
            dir,
            log,
            hashes: MemoryHashes::new(),
            witness,
            app,
        }
    }

    fn grow_to(&mut self, n: u64) {
        while self.hashes.size() < n {
            let i = self.hashes.size();
            self.hashes
                .append_entry(format!("entry {i}").as_bytes())
                .unwrap();
        }
    }

    fn root(&self, size: u64) -> Hash {
        tree_hash(size, &self.hashes).unwrap()
    }

    /// The log's signed checkpoint at `size`.
    fn note(&self, size: u64) -> Vec<u8> {
        self.note_with_root(size, self.root(size))
    }

    fn note_with_root(&self, size: u64, root: Hash) -> Vec<u8> {
        self.log
            .sign_checkpoint(&Checkpoint {
                origin: ORIGIN.into(),
                size,
                root,
                extensions: vec![],
            })
            .unwrap()
    }

    /// A correct request from `old` to `size`.
    fn request(&self, old: u64, size: u64) -> Vec<u8> {
        AddCheckpoint {
            old,
            proof: consistency_proof(old, size, &self.hashes).unwrap(),
            note: self.note(size),
        }
        .encode()
    }

    async fn post(&self, body: Vec<u8>) -> (StatusCode, String, Vec<u8>) {
        send(&self.app, Method::POST, "/w/add-checkpoint", body).await
    }

    /// Cosigns `size` from `old` and checks it is a 200.
    async fn cosign(&self, old: u64, size: u64) -> String {
        let (status, _, body) = self.post(self.request(old, size)).await;
        let body = String::from_utf8(body).unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn send(
    app: &Router,
    method: Method,
    uri: &str,
    body: Vec<u8>,
) -> (StatusCode, String, Vec<u8>) {
    let response = app
        .clone()
        .oneshot(
            Request::builder()
                .method(method)
                .uri(uri)
                .body(Body::from(body))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let ct = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, ct, body)
}

fn witness_key(f: &Fixture) -> WitnessKey {
    WitnessKey::parse(&f.witness.vkey()).unwrap()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn an_unknown_origin_is_404() {
    let f = Fixture::new("unknown");
    let other = LogKey::from_seed("other.example/log", &[2u8; 32]).unwrap();
    let note = other
        .sign_checkpoint(&Checkpoint {
            origin: "other.example/log".into(),
            size: 0,
            root: EMPTY_ROOT,
            extensions: vec![],
        })
        .unwrap();
    let body = add_body(0, vec![], note);
    let (status, ct, text) = f.post(body).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(ct.starts_with("text/plain"), "{ct}");
    assert!(String::from_utf8(text).unwrap().contains("unknown origin"));
}

#[tokio::test]
async fn a_checkpoint_without_a_trusted_signature_is_403() {
    let mut f = Fixture::new("unsigned");
    f.grow_to(2);
    // Signed with the origin as name but another key: its key ID is not the trusted one.
    let impostor = LogKey::from_seed(ORIGIN, &[9u8; 32]).unwrap();
    let note = impostor
        .sign_checkpoint(&Checkpoint {
            origin: ORIGIN.into(),
            size: 2,
            root: f.root(2),
            extensions: vec![],
        })
        .unwrap();
    let (status, _, text) = f.post(add_body(0, vec![], note)).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "{}",
        String::from_utf8_lossy(&text)
    );
    assert!(f.witness.latest(&origin_hash(ORIGIN)).unwrap().is_none());
}

#[tokio::test]
async fn a_trusted_signature_that_fails_is_403() {
    let mut f = Fixture::new("badsig");
    f.grow_to(2);
    let note = String::from_utf8(f.note(2)).unwrap();
    // Flip one character of the signature (after the 4-byte key ID: base64 characters 6…).
    let at = note.rfind(' ').unwrap() + 20;
    let mut bytes = note.into_bytes();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    let (status, _, text) = f.post(add_body(0, vec![], bytes)).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "{}",
        String::from_utf8_lossy(&text)
    );
}

#[tokio::test]
async fn a_failing_signature_by_any_trusted_key_is_403_even_beside_a_good_one() {
    let f = Fixture::new("twokeys");
    // The origin also trusts a second key (a rotation); the note carries a good signature by
    // the first and a broken one by the second, in either order.
    let second = LogKey::from_seed(ORIGIN, &[2u8; 32]).unwrap();
    let dir = tmp("twokeys-w");
    let trusts: Vec<Trust> = [f.log.vkey(), second.vkey()]
        .iter()
        .map(|v| Trust::parse(&format!("{ORIGIN}={v}")).unwrap())
        .collect();
    let witness = Arc::new(Witness::open(&dir, "witness.example/w", &trusts).unwrap());
    let app = router(witness, "/w");
    let good = String::from_utf8(f.note(0)).unwrap();
    let theirs = String::from_utf8(
        second
            .sign_checkpoint(&Checkpoint {
                origin: ORIGIN.into(),
                size: 0,
                root: EMPTY_ROOT,
                extensions: vec![],
            })
            .unwrap(),
    )
    .unwrap();
    let mut broken = theirs.rsplit("\n\n").next().unwrap().trim_end().to_owned();
    let at = broken.rfind(' ').unwrap() + 20;
    let flipped = if broken.as_bytes()[at] == b'A' {
        "B"
    } else {
        "A"
    };
    broken.replace_range(at..=at, flipped);
    let (text, ours) = good.rsplit_once("\n\n").unwrap();
    for lines in [format!("{ours}{broken}\n"), format!("{broken}\n{ours}")] {
        let note = format!("{text}\n\n{lines}").into_bytes();
        let (status, _, body) = send(
            &app,
            Method::POST,
            "/w/add-checkpoint",
            add_body(0, vec![], note),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "{}",
            String::from_utf8_lossy(&body)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn old_larger_than_the_checkpoint_is_400() {
    let mut f = Fixture::new("oldbig");
    f.grow_to(3);
    let body = add_body(4, vec![], f.note(3));
    let (status, _, text) = f.post(body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(String::from_utf8(text).unwrap().contains("larger than"));
}

#[tokio::test]
async fn malformed_bodies_are_400() {
    let mut f = Fixture::new("malformed");
    f.grow_to(1);
    let note = String::from_utf8(f.note(1)).unwrap();
    for body in [
        String::new(),
        "old 0\n".to_owned(),
        format!("old 00\n\n{note}"),
        format!("old -1\n\n{note}"),
        format!("new 0\n\n{note}"),
        format!("old 0\nnot a hash\n\n{note}"),
        "old 0\n\nno signature\n".to_owned(),
        format!("old 0\n\n{}", note.replacen("\n1\n", "\nx\n", 1)),
        format!("old 0\n\n{}", note.replace('\u{2014}', "-")),
    ] {
        let (status, ct, text) = f.post(body.clone().into_bytes()).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{body:?}: {}",
            String::from_utf8_lossy(&text)
        );
        assert!(ct.starts_with("text/plain"));
    }
}

#[tokio::test]
async fn a_stale_old_is_409_with_the_latest_size() {
    let mut f = Fixture::new("conflict");
    f.grow_to(5);
    f.cosign(0, 3).await;
    for old in [0, 2] {
        let (status, ct, body) = f.post(f.request(old, 5)).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(ct, SIZE_CONTENT_TYPE);
        assert_eq!(body, b"3\n");
        assert_eq!(toolmark_log::witness::parse_size_body(&body).unwrap(), 3);
    }
    // What a client does next: retry from the size it learnt.
    f.cosign(3, 5).await;
}

#[tokio::test]
async fn a_size_zero_checkpoint_with_another_root_is_422() {
    let mut f = Fixture::new("zero");
    f.grow_to(1);
    let note = f.note_with_root(0, f.root(1));
    let (status, _, _) = f.post(add_body(0, vec![], note)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    // The empty tree itself is cosigned.
    f.cosign(0, 0).await;
}

#[tokio::test]
async fn a_proof_with_old_zero_is_422() {
    let mut f = Fixture::new("proofzero");
    f.grow_to(4);
    let body = add_body(0, vec![f.root(2)], f.note(4));
    let (status, _, _) = f.post(body).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(f.witness.evidence().unwrap().is_empty());
}

#[tokio::test]
async fn a_proof_that_fails_is_422_and_not_kept_as_evidence() {
    let mut f = Fixture::new("badproof");
    f.grow_to(8);
    f.cosign(0, 3).await;
    let mut proof = consistency_proof(3, 8, &f.hashes).unwrap();
    proof[0] = Hash([7u8; 32]);
    let body = add_body(3, proof, f.note(8));
    let (status, _, text) = f.post(body).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        String::from_utf8_lossy(&text)
    );
    // A tree that is not an extension of the cosigned one fails too, with a proof of its own.
    let mut fork = MemoryHashes::new();
    for i in 0..8 {
        fork.append_entry(format!("fork {i}").as_bytes()).unwrap();
    }
    let body = AddCheckpoint {
        old: 3,
        proof: consistency_proof(3, 8, &fork).unwrap(),
        note: f.note_with_root(8, fork.root()),
    }
    .encode();
    assert_eq!(f.post(body).await.0, StatusCode::UNPROCESSABLE_ENTITY);
    // The proof is not signed: anyone can pair the log's real checkpoint with a bad one, so a
    // failing proof proves nothing about the log and is not kept.
    assert!(f.witness.evidence().unwrap().is_empty());
    // The state did not move.
    let latest = f.witness.latest(&origin_hash(ORIGIN)).unwrap().unwrap();
    assert!(String::from_utf8(latest).unwrap().contains("\n3\n"));
}

#[tokio::test]
async fn the_same_size_with_another_root_is_422_and_kept_as_evidence_once() {
    let mut f = Fixture::new("fork");
    f.grow_to(3);
    f.cosign(0, 3).await;
    let forked = f.note_with_root(3, Hash([5u8; 32]));
    // Sent with a line nobody can check, twice.
    let padded = add_signature_lines(&forked, &[junk_line("other.example/w")]);
    let body = add_body(3, vec![], padded);
    let (status, _, text) = f.post(body.clone()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(String::from_utf8(text).unwrap().contains("another root"));
    assert_eq!(f.post(body).await.0, StatusCode::UNPROCESSABLE_ENTITY);
    let evidence = f.witness.evidence().unwrap();
    assert_eq!(evidence.len(), 1);
    assert_eq!(evidence[0].reason, "same size, different root");
    assert_eq!(evidence[0].origin, ORIGIN);
    // What is kept is the log's own signed fork, without the unchecked line: anyone can
    // verify it with the log's key.
    assert_eq!(evidence[0].body.as_bytes(), forked.as_slice());
    verify_note(evidence[0].body.as_bytes(), &f.log.vkey()).unwrap();
}

#[tokio::test]
async fn monitoring_serves_only_signature_lines_that_verify() {
    let mut f = Fixture::new("lines");
    f.grow_to(3);
    f.cosign(0, 3).await;
    // The same tree again, with a well-formed line by a key nobody trusts.
    let note = add_signature_lines(&f.note(3), &[junk_line("other.example/w")]);
    let body = add_body(3, vec![], note);
    assert_eq!(f.post(body).await.0, StatusCode::OK);
    let served = f.witness.latest(&origin_hash(ORIGIN)).unwrap().unwrap();
    let served = String::from_utf8(served).unwrap();
    assert!(!served.contains("other.example/w"), "{served}");
    let lines: Vec<&str> = served.split("\n\n").nth(1).unwrap().lines().collect();
    assert_eq!(lines.len(), 2, "{served}");
    verify_note(served.as_bytes(), &f.log.vkey()).unwrap();
}

#[tokio::test]
async fn a_stale_old_is_409_before_a_bad_empty_tree_is_422() {
    let mut f = Fixture::new("order");
    f.grow_to(3);
    f.cosign(0, 3).await;
    let body = AddCheckpoint {
        old: 0,
        proof: vec![],
        note: f.note_with_root(0, f.root(1)),
    }
    .encode();
    let (status, content_type, text) = f.post(body).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(content_type, SIZE_CONTENT_TYPE);
    assert_eq!(text, b"3\n");
}

/// A well-formed signature line by `name` that no trusted key made.
fn junk_line(name: &str) -> String {
    format!(
        "\u{2014} {name} {}\n",
        base64::engine::general_purpose::STANDARD.encode([9u8; 68])
    )
}

#[tokio::test]
async fn the_first_checkpoint_from_old_zero_is_cosigned() {
    let mut f = Fixture::new("first");
    f.grow_to(3);
    let before = now();
    let line = f.cosign(0, 3).await;
    assert!(line.starts_with("\u{2014} witness.example/w ") && line.ends_with('\n'));
    assert_eq!(line.lines().count(), 1);
    let cosig = Cosignature::parse_line(&line).unwrap();
    assert!(cosig.timestamp >= before && cosig.timestamp <= now());
    let note = f.note(3);
    let text = String::from_utf8(note.clone()).unwrap();
    let text = &text[..text.find("\n\n").unwrap() + 1];
    witness_key(&f).verify(&cosig, text).unwrap();
    // And the same size again: a newer cosignature (the heartbeat), no proof needed.
    f.cosign(3, 3).await;
}

#[tokio::test]
async fn a_larger_tree_with_a_consistency_proof_is_cosigned() {
    let mut f = Fixture::new("advance");
    f.grow_to(3);
    f.cosign(0, 3).await;
    f.grow_to(17);
    let line = f.cosign(3, 17).await;
    let note = toolmark_log::cosignature::add_signature_lines(&f.note(17), &[line]);
    let found = note_cosignatures(&note, &[witness_key(&f)]).unwrap();
    assert_eq!(found.len(), 1);
    f.grow_to(1000);
    f.cosign(17, 1000).await;
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let f = Fixture::new("oversize");
    let (status, _, _) = f.post(vec![b'x'; MAX_REQUEST_BYTES + 1]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn another_method_is_405_and_another_path_404() {
    let f = Fixture::new("method");
    let (status, _, _) = send(&f.app, Method::GET, "/w/add-checkpoint", vec![]).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let path = format!("/w/{}/checkpoint", origin_hash(ORIGIN));
    let (status, _, _) = send(&f.app, Method::POST, &path, vec![]).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, _, _) = send(&f.app, Method::POST, "/add-checkpoint", vec![]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn monitoring_serves_the_latest_cosigned_checkpoint() {
    let mut f = Fixture::new("monitor");
    let path = format!("/w/{}/checkpoint", origin_hash(ORIGIN));
    let (status, _, _) = send(&f.app, Method::GET, &path, vec![]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let upper = path
        .to_ascii_uppercase()
        .replace("/W/", "/w/")
        .replace("/CHECKPOINT", "/checkpoint");
    f.grow_to(4);
    f.cosign(0, 4).await;
    let (status, ct, body) = send(&f.app, Method::GET, &path, vec![]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(ct.starts_with("text/plain"));
    // The log's signature and the witness's cosignature.
    let cp = toolmark_log::note::open_checkpoint(&body, &f.log.vkey()).unwrap();
    assert_eq!(cp.size, 4);
    assert_eq!(
        note_cosignatures(&body, &[witness_key(&f)]).unwrap().len(),
        1
    );
    // Resubmitting the stored note (with our old line) keeps one line of ours.
    let again = add_body(4, vec![], body);
    assert_eq!(f.post(again).await.0, StatusCode::OK);
    let (_, _, body) = send(&f.app, Method::GET, &path, vec![]).await;
    assert_eq!(
        String::from_utf8(body)
            .unwrap()
            .matches("witness.example/w")
            .count(),
        1
    );
    let (status, _, _) = send(&f.app, Method::GET, &upper, vec![]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn the_key_is_kept_and_its_name_checked() {
    let dir = tmp("key");
    let a = Witness::open(&dir, "w.example", &[]).unwrap().vkey();
    let b = Witness::open(&dir, "w.example", &[]).unwrap().vkey();
    assert_eq!(a, b);
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(dir.join("witness.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let err = Witness::open(&dir, "other.example", &[]).unwrap_err();
    assert!(err.to_string().contains("w.example"), "{err}");
    let skey = std::fs::read_to_string(dir.join("witness.key")).unwrap();
    assert_eq!(
        CosignerKey::from_skey(&skey).unwrap().witness_key().vkey(),
        a
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trust_arguments_are_checked() {
    let log = LogKey::from_seed(ORIGIN, &[1u8; 32]).unwrap();
    assert!(Trust::parse(&format!("{ORIGIN}={}", log.vkey())).is_ok());
    // The key name need not be the origin.
    assert!(Trust::parse(&format!("another.example/origin={}", log.vkey())).is_ok());
    assert!(Trust::parse(&log.vkey()).is_err());
    assert!(Trust::parse(&format!("a b={}", log.vkey())).is_err());
    assert!(Trust::parse("x=not-a-key").is_err());
    let witness = CosignerKey::from_seed("w", &[3u8; 32]).unwrap();
    assert!(Trust::parse(&format!("x={}", witness.witness_key().vkey())).is_err());
}

#[tokio::test]
async fn concurrent_conflicting_requests_cosign_one_tree() {
    let mut f = Fixture::new("race");
    f.grow_to(6);
    let mut fork = MemoryHashes::new();
    for i in 0..6 {
        fork.append_entry(format!("fork {i}").as_bytes()).unwrap();
    }
    let a = f.request(0, 6);
    let b = AddCheckpoint {
        old: 0,
        proof: vec![],
        note: f.note_with_root(6, fork.root()),
    }
    .encode();
    // Two connections to one state file (as two processes would have).
    let trust = Trust::parse(&format!("{ORIGIN}={}", f.log.vkey())).unwrap();
    let other = Witness::open(&f.dir, "witness.example/w", &[trust]).unwrap();
    let mut ok = 0;
    let results = std::thread::scope(|s| {
        let (w, o) = (&f.witness, &other);
        let ha = s.spawn(|| w.add_checkpoint(&a, now()));
        let hb = s.spawn(|| o.add_checkpoint(&b, now()));
        [ha.join().unwrap(), hb.join().unwrap()]
    });
    for r in &results {
        if r.status == StatusCode::OK {
            ok += 1;
        } else {
            assert_eq!(r.status, StatusCode::CONFLICT);
        }
    }
    assert_eq!(ok, 1);
}

#[test]
fn a_clock_stepped_back_never_dates_a_cosignature_earlier() {
    let mut f = Fixture::new("clock");
    f.grow_to(4);
    let first = f.witness.add_checkpoint(&f.request(0, 2), 2_000_000_000);
    assert_eq!(first.status, StatusCode::OK);
    let later = f.witness.add_checkpoint(&f.request(2, 4), 1_900_000_000);
    assert_eq!(later.status, StatusCode::OK);
    let t = |body: &[u8]| {
        Cosignature::parse_line(std::str::from_utf8(body).unwrap())
            .unwrap()
            .timestamp
    };
    assert_eq!(t(&first.body), 2_000_000_000);
    assert_eq!(t(&later.body), 2_000_000_000);
}

#[test]
fn clearing_the_timestamps_lets_a_fixed_clock_date_cosignatures_again() {
    let mut f = Fixture::new("clear");
    f.grow_to(4);
    // A clock that ran ahead dated the cosignature of size 2.
    let ahead = f.witness.add_checkpoint(&f.request(0, 2), 2_000_000_000);
    assert_eq!(ahead.status, StatusCode::OK);
    assert_eq!(f.witness.clear_timestamps().unwrap(), 1);
    let fixed = f.witness.add_checkpoint(&f.request(2, 4), 1_900_000_000);
    assert_eq!(fixed.status, StatusCode::OK);
    let line = std::str::from_utf8(&fixed.body).unwrap();
    assert_eq!(
        Cosignature::parse_line(line).unwrap().timestamp,
        1_900_000_000
    );
    // The size and root are kept: the next request still starts from 4.
    let stale = f.witness.add_checkpoint(&f.request(2, 4), 1_900_000_001);
    assert_eq!(stale.status, StatusCode::CONFLICT);
}

/// An `add-checkpoint` request body.
fn add_body(old: u64, proof: Vec<Hash>, note: Vec<u8>) -> Vec<u8> {
    AddCheckpoint { old, proof, note }.encode()
}

#[test]
fn trusted_logs_come_from_the_arguments_then_the_file_lines_skipping_comments() {
    let dir = tmp("trust-file");
    std::fs::create_dir_all(&dir).unwrap();
    let a = LogKey::from_seed("a.example/log", &[2u8; 32])
        .unwrap()
        .vkey();
    let b = LogKey::from_seed("b.example/log", &[3u8; 32])
        .unwrap()
        .vkey();
    let file = dir.join("trusted");
    std::fs::write(&file, format!("# logs\n\nb.example/log={b} # the second\n")).unwrap();
    let args = [format!("a.example/log={a}")];
    let trusted = toolmark_witness::trusted(&args, Some(&file)).unwrap();
    let origins: Vec<&str> = trusted.iter().map(|t| t.origin.as_str()).collect();
    assert_eq!(origins, ["a.example/log", "b.example/log"]);
    std::fs::write(&file, format!("b.example/log={b}\nnot a trust line\n")).unwrap();
    let e = toolmark_witness::trusted(&[], Some(&file)).unwrap_err();
    assert_eq!(e.to_string(), format!("{}:2", file.display()));
    let missing = toolmark_witness::trusted(&[], Some(&dir.join("missing"))).unwrap_err();
    assert!(missing.to_string().starts_with("reading "), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}
