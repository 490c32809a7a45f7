//! `toolmark log …` on PostgreSQL and a bucket (the shared test services): `init`, `append`,
//! `proof`, `key` and `verify s3://` with `--head`/`--objects`/`--key` in place of DIR, the
//! `TOOLMARK_STORAGE_*` variables saying the same, settings refused with the key named, and
//! `log migrate` of a single-box log (copied, verified from the copy, then committed; refused
//! over an existing log; a differing object already in the bucket stops it before any
//! checkpoint is written).
#![allow(clippy::disallowed_methods)] // runs the binary

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use toolmark_log::objects::{Objects, S3Options};
use toolmark_standins::services::{Bucket, Database};

struct Cluster {
    db: Database,
    bucket: Bucket,
    dir: PathBuf,
}

impl Cluster {
    fn new(tag: &str) -> Option<Cluster> {
        let db = toolmark_standins::services::postgres().unwrap()?;
        let bucket = toolmark_standins::services::s3().unwrap()?;
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Some(Cluster { db, bucket, dir })
    }

    fn objects(&self) -> String {
        format!("s3://{}/{}", self.bucket.bucket, self.bucket.prefix)
    }

    fn key(&self) -> PathBuf {
        self.dir.join("log.key")
    }

    /// `toolmark ARGS` with the bucket's AWS_* variables.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
        c.args(args);
        common::bucket_env(&mut c, &self.bucket).env_remove("TOOLMARK_LOG_KEY");
        common::output_with_stdin(c, stdin)
    }

    /// A single-box log of `n` entries in `DIR/single`.
    fn single_box_log(&self, n: usize) -> PathBuf {
        let single = self.dir.join("single");
        let d = single.to_str().unwrap();
        ok(&self.run(&["log", "init", d, "--origin", "migrate.example/log"], None));
        ok(&self.run(&["log", "append", d, "--batch", "100"], Some(&lines(0..n))));
        single
    }

    /// `log migrate SINGLE` into this cluster.
    fn migrate(&self, single: &Path) -> Output {
        let objects = self.objects();
        let args = [
            "log",
            "migrate",
            single.to_str().unwrap(),
            "--head",
            self.db.url(),
            "--objects",
            &objects,
        ];
        self.run(&args, None)
    }

    /// `toolmark log SUB … --head … --objects … --key …`.
    fn log(&self, sub: &str, extra: &[&str], stdin: Option<&str>) -> Output {
        let objects = self.objects();
        let key = self.key();
        let mut args = vec!["log", sub];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--head", self.db.url(), "--objects", &objects]);
        args.extend_from_slice(&["--key", key.to_str().unwrap()]);
        self.run(&args, stdin)
    }

    fn public(&self) -> Objects {
        Objects::s3(
            &self.objects(),
            &S3Options::at(
                &self.bucket.endpoint,
                &self.bucket.access_key_id,
                &self.bucket.secret_access_key,
            ),
        )
        .unwrap()
        .sub("log/public")
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "status {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The indices `log append` printed (not the size line of each checkpoint after them).
fn printed_indices(out: &str) -> Vec<u64> {
    let mut after_origin = false;
    let mut found = Vec::new();
    for l in out.lines() {
        if !after_origin {
            if let Ok(i) = l.parse() {
                found.push(i);
            }
        }
        after_origin = l.ends_with("example/log");
    }
    found
}

fn line(i: usize) -> String {
    format!(
        "{{\"subject\":{{\"server\":\"io.example/s{}\",\"target\":\"https://s{}.example.com/mcp\"}},\"observedAt\":\"2026-12-06T14:00:00Z\",\"status\":\"ok\",\"tools\":{i}}}\n",
        i % 3,
        i % 3
    )
}

fn lines(range: std::ops::Range<usize>) -> String {
    range.map(line).collect()
}

#[test]
fn the_log_subcommands_work_on_postgres_and_a_bucket() {
    let Some(c) = Cluster::new("log-cluster-cli") else {
        return;
    };
    let out = ok(&c.log("init", &["--origin", "cluster.example/log"], None));
    assert!(out.contains("verifier key: cluster.example/log+"), "{out}");
    // Batches of 40: three checkpoints for 100 entries, indices in order.
    let out = ok(&c.log("append", &["--batch", "40"], Some(&lines(0..100))));
    let indices = printed_indices(&out);
    assert_eq!(indices, (0..100).collect::<Vec<u64>>());
    assert_eq!(out.matches("cluster.example/log\n").count(), 3);
    // The same observations again are logged once: the indices they have.
    let out = ok(&c.log("append", &[], Some(&lines(90..110))));
    let indices = printed_indices(&out);
    assert_eq!(indices, (90..110).collect::<Vec<u64>>());
    let vkey = ok(&c.log("key", &[], None));
    assert!(vkey.starts_with("cluster.example/log+"), "{vkey}");
    let proof = ok(&c.log("proof", &["42"], None));
    let bundle = toolmark_log::proof::decode_tlog_proof(&proof).unwrap();
    assert_eq!(bundle.index, 42);
    // verify streams it from the bucket, given as the objects root or the tlog-tiles base.
    let base = format!("{}/log/public", c.objects());
    for target in [c.objects(), base] {
        let out = ok(&c.run(&["log", "verify", &target, "--vkey", vkey.trim()], None));
        assert!(out.contains("at size 110"), "{out}");
    }
    // The variables say the same as the flags.
    let key = c.key();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    cmd.args(["log", "key"])
        .env("TOOLMARK_STORAGE_HEAD", c.db.url())
        .env("TOOLMARK_STORAGE_OBJECTS", c.objects())
        .env("TOOLMARK_LOG_KEY", &key)
        .env("AWS_ENDPOINT_URL", &c.bucket.endpoint)
        .env("AWS_ACCESS_KEY_ID", &c.bucket.access_key_id)
        .env("AWS_SECRET_ACCESS_KEY", &c.bucket.secret_access_key)
        .env("AWS_ALLOW_HTTP", "true");
    assert_eq!(ok(&cmd.output().unwrap()), vkey);
    // A second init over it is refused.
    let out = c.log("init", &["--origin", "cluster.example/log"], None);
    assert!(!out.status.success());
    std::fs::remove_dir_all(&c.dir).ok();
}

#[test]
fn storage_settings_that_cannot_work_are_refused_naming_the_key() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("storage-keys-{}", std::process::id()));
    for (flag, value, key) in [
        ("--head", "mysql://db/log", "storage.head"),
        ("--objects", "gs://bucket/x", "storage.objects"),
        ("--objects", "s3://", "storage.objects"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolmark"))
            .args(["log", "append"])
            .arg(&dir)
            .args([flag, value])
            .env_remove("TOOLMARK_STORAGE_HEAD")
            .env_remove("TOOLMARK_STORAGE_OBJECTS")
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(key), "{flag} {value}: {err}");
    }
    // `toolmark run` checks them at start too.
    let out = Command::new(env!("CARGO_BIN_EXE_toolmark"))
        .args([
            "run",
            "--print-config",
            "--head",
            "postgres://db:notaport/x",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("storage.head"));
}

#[test]
fn migrate_copies_a_single_box_log_verifies_the_copy_then_commits() {
    let Some(c) = Cluster::new("log-migrate") else {
        return;
    };
    let single = c.single_box_log(700);
    let objects = c.objects();
    let out = ok(&c.migrate(&single));
    assert!(out.contains("migrated 700 entries"), "{out}");
    // The bucket now serves the single box's published checkpoint, byte for byte.
    assert_eq!(
        c.public().get("checkpoint").unwrap().unwrap(),
        std::fs::read(single.join("public/checkpoint")).unwrap()
    );
    // The cluster goes on from there, with the single box's key, its subjects' prev links
    // and its observations' dedup keys.
    let key = single.join("private/log.key");
    let cluster = |sub: &str, extra: &[&str], stdin: Option<&str>| {
        let mut args = vec!["log", sub];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--head", c.db.url(), "--objects", &objects]);
        args.extend_from_slice(&["--key", key.to_str().unwrap()]);
        c.run(&args, stdin)
    };
    let out = ok(&cluster("append", &[], Some(&lines(690..720))));
    let indices = printed_indices(&out);
    assert_eq!(indices, (690..720).collect::<Vec<u64>>());
    let vkey = ok(&c.run(&["log", "key", single.to_str().unwrap()], None));
    let out = ok(&c.run(&["log", "verify", &objects, "--vkey", vkey.trim()], None));
    assert!(out.contains("at size 720"), "{out}");
    // Migrating again into a head store that holds a log is refused.
    let out = c.migrate(&single);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already holds a log"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&c.dir).ok();
}

#[test]
fn migrate_stops_before_any_checkpoint_when_the_bucket_holds_other_bytes() {
    let Some(c) = Cluster::new("log-migrate-fork") else {
        return;
    };
    let single = c.single_box_log(300);
    // Another history's tile is already in the bucket.
    c.public().put("tile/0/000", &[7u8; 8192]).unwrap();
    let out = c.migrate(&single);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fork alarm"), "{err}");
    assert_eq!(c.public().get("checkpoint").unwrap(), None);
    std::fs::remove_dir_all(&c.dir).ok();
}
