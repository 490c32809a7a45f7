//! `toolmark log …`: create, append to, prove from and verify a log directory.

use anyhow::{Context, Result};
use clap::Subcommand;
use serde::Deserialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use toolmark_config::StorageFlags;
use toolmark_log::entry::{Entry, EntryError, MtlResult, Status, Subject};
use toolmark_log::note::LogKey;
use toolmark_log::objects::Objects;
use toolmark_log::policy::{WitnessPolicy, Witnessed};
use toolmark_log::store::{HeadSpec, LogStores, ObjectsSpec};
use toolmark_log::{Log, sequencer};
use toolmark_toolset::Sri;

#[derive(Subcommand)]
pub enum LogCommand {
    /// Create a log: signing key (private/log.key, mode 0600, or --key), vkey (DIR/vkey and
    /// public/vkey), empty checkpoint. With --head/--objects, in those stores instead of DIR.
    Init {
        #[command(flatten)]
        at: LogAt,
        /// The checkpoint origin and key name (a schema-less URL of where the log is served).
        #[arg(long, default_value = toolmark_config::DEFAULT_ORIGIN)]
        origin: String,
    },
    /// Append entries given as JSON lines on stdin; prints each assigned index, then the new
    /// checkpoint, after every batch.
    Append {
        #[command(flatten)]
        at: LogAt,
        /// Entries per batch (each batch is one compare-and-swap and one checkpoint).
        #[arg(long, default_value_t = sequencer::MAX_BATCH)]
        batch: usize,
    },
    /// fsck a published log (a log directory, its public/ directory, an http(s) URL, or an
    /// s3://BUCKET/PREFIX objects root); with --state, audit it against the checkpoint
    /// remembered there; with --witness or --policy, require the checkpoint's witness
    /// cosignatures (exit 1 when the quorum is not met, printing which witnesses signed when).
    Verify {
        /// A log directory, its public/ directory, an http(s):// base URL, or an s3:// URL
        /// (an objects root as --objects names it, or the tlog-tiles base itself). Without it,
        /// the log --objects names.
        target: Option<String>,
        /// The objects root to read when no target is given.
        #[command(flatten)]
        storage: StorageFlags,
        /// Remembers the last verified checkpoint; refuses a shrink, a fork or a key change.
        #[arg(long)]
        state: Option<PathBuf>,
        /// The verifier key to trust (default: the one remembered in --state, else the one
        /// the --policy file's `log` line names, else the log's published vkey, trusted on
        /// first use).
        #[arg(long)]
        vkey: Option<String>,
        #[command(flatten)]
        witnesses: WitnessArgs,
    },
    /// Print the c2sp.org/tlog-proof@v1 bundle of an entry (the entry in its `extra` line)
    /// against the current checkpoint.
    Proof {
        /// `[DIR] INDEX`: the log directory (not needed with --head postgres and --objects
        /// s3), then the entry's index.
        #[arg(value_name = "[DIR] INDEX", num_args = 1..=2, required = true)]
        args: Vec<String>,
        #[command(flatten)]
        storage: StorageFlags,
        /// The signing key file (default DIR/private/log.key).
        #[arg(long, env = "TOOLMARK_LOG_KEY")]
        key: Option<PathBuf>,
    },
    /// Print the log's verifier key.
    Key {
        #[command(flatten)]
        at: LogAt,
    },
    /// Copy the single-box log in DIR to the stores --head/--objects name (PostgreSQL and a
    /// bucket), verify every tile and entry of the copy, and only then commit its head and
    /// publish its checkpoint (the signing key stays where it is: pass --key to use it from
    /// elsewhere). The destination must hold no log.
    Migrate {
        /// The single-box log directory to copy (no writer may have it open).
        dir: PathBuf,
        /// The destination stores.
        #[command(flatten)]
        storage: StorageFlags,
    },
}

/// Which log a `log` subcommand works on: a single-box directory, or the stores --head and
/// --objects name (`TOOLMARK_STORAGE_HEAD`, `TOOLMARK_STORAGE_OBJECTS`), with the signing key
/// in DIR/private/log.key or --key.
#[derive(clap::Args)]
pub struct LogAt {
    /// The log directory (SQLite head store, files, key); with --head postgres and --objects
    /// s3, not needed.
    dir: Option<PathBuf>,
    #[command(flatten)]
    storage: StorageFlags,
    /// The signing key file (default DIR/private/log.key).
    #[arg(long, env = "TOOLMARK_LOG_KEY")]
    key: Option<PathBuf>,
}

impl LogAt {
    /// The signing key's file.
    fn key_path(&self) -> Result<PathBuf> {
        match (&self.key, &self.dir) {
            (Some(k), _) => Ok(k.clone()),
            (None, Some(d)) => Ok(d.join(toolmark_log::KEY_FILE)),
            (None, None) => anyhow::bail!("no log: give DIR or --key"),
        }
    }

    /// The log's stores: DIR alone is the single box; --head/--objects name others (a
    /// `sqlite` head store still lives in DIR).
    fn stores(&self) -> Result<LogStores> {
        let dir = || {
            self.dir
                .as_deref()
                .context("DIR is needed (the SQLite head store or the log files live there)")
        };
        if !self.storage.given() {
            return Ok(LogStores::dir(dir()?)?);
        }
        let spec = self.storage.spec()?;
        let head = match &spec.head {
            HeadSpec::Sqlite => spec.head_store(dir()?)?,
            HeadSpec::Postgres(_) => spec.head_store(Path::new("."))?,
        };
        let objects = match &spec.objects {
            ObjectsSpec::DataDir | ObjectsSpec::File(None) => Objects::dir(dir()?)?,
            _ => spec.objects_root(Path::new("."))?.sub("log"),
        };
        Ok(LogStores { head, objects })
    }

    /// Open the log, with its recovery.
    fn open(&self) -> Result<Log> {
        // Settings that cannot work are refused before anything is read.
        self.storage.spec()?;
        if !self.storage.given() {
            let dir = self.dir.as_deref().context("no log: give DIR")?;
            if self.key.is_none() {
                return Ok(Log::open(dir)?);
            }
        }
        let key = sequencer::read_key(&self.key_path()?)?;
        Ok(Log::open_with(self.stores()?, key, system_clock())?)
    }
}

fn system_clock() -> sequencer::Clock {
    Box::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    })
}

/// What `log verify` requires of the checkpoint's witness cosignatures.
#[derive(clap::Args, Default)]
pub struct WitnessArgs {
    /// A witness whose cosignature/v1 counts (its verifier key: `<name>+<id>+<base64(0x04 ‖
    /// key)>`, or `VKEY@URL` as `run --witness` takes it: the URL is not needed to verify and
    /// is ignored); repeatable.
    #[arg(long = "witness", value_name = "VKEY", conflicts_with = "policy")]
    witness: Vec<String>,
    /// How many of the --witness keys must have cosigned (default: all of them).
    #[arg(long, value_name = "N", requires = "witness")]
    quorum: Option<usize>,
    /// A C2SP tlog-policy file (`log`, `witness`, `group` and `quorum` lines) instead of
    /// --witness and --quorum.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Count only cosignatures at most this many seconds old.
    #[arg(long, value_name = "SECONDS")]
    max_age: Option<u64>,
}

impl WitnessArgs {
    /// The policy asked for, if any.
    fn policy(&self) -> Result<Option<WitnessPolicy>> {
        if let Some(path) = &self.policy {
            let text = read_bounded(path, toolmark_log::policy::MAX_POLICY_BYTES)?;
            return Ok(Some(
                WitnessPolicy::parse(&text).with_context(|| format!("{}", path.display()))?,
            ));
        }
        anyhow::ensure!(
            !self.witness.is_empty() || self.max_age.is_none(),
            "--max-age needs witnesses (--witness or --policy)"
        );
        Ok(toolmark_roles::monitor::key_policy(
            &self.witness,
            self.quorum,
        )?)
    }
}

/// A file of at most `max` bytes, as UTF-8.
fn read_bounded(path: &Path, max: usize) -> Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max as u64 + 1).read_to_end(&mut bytes))
        .with_context(|| format!("{}", path.display()))?;
    anyhow::ensure!(
        bytes.len() <= max,
        "{}: larger than {max} bytes",
        path.display()
    );
    String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", path.display()))
}

/// One line of `append`'s input: an entry without `prev` (the log sets it).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EntryLine {
    subject: SubjectLine,
    observed_at: String,
    status: String,
    detail: Option<String>,
    mtl1: Option<Sri>,
    mtl1_error: Option<String>,
    full: Option<Sri>,
    tools: Option<u64>,
    raw: Option<Sri>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubjectLine {
    server: String,
    target: String,
    package: Option<String>,
}

impl TryFrom<EntryLine> for Entry {
    type Error = EntryError;

    fn try_from(l: EntryLine) -> Result<Entry, EntryError> {
        Ok(Entry {
            subject: Subject {
                server: l.subject.server,
                target: l.subject.target,
                package: l.subject.package,
            },
            observed_at: l.observed_at,
            status: Status::new(l.status)?,
            detail: l.detail,
            mtl1: MtlResult::from_members(l.mtl1, l.mtl1_error)?,
            full: l.full,
            tools: l.tools,
            raw: l.raw,
            prev: None,
        })
    }
}

pub fn run(cmd: LogCommand) -> Result<bool> {
    match cmd {
        LogCommand::Init { at, origin } => {
            let log = match (&at.dir, at.storage.given() || at.key.is_some()) {
                (Some(dir), false) => {
                    let log = Log::init(dir, &origin)?;
                    println!("created log {origin} in {}", dir.display());
                    log
                }
                _ => {
                    let key = LogKey::generate(&origin)?;
                    let path = at.key_path()?;
                    let stores = at.stores()?;
                    sequencer::write_private_key(&path, &key.to_skey())?;
                    let place = format!("{} + {}", stores.head.describe(), stores.objects.label());
                    let log = Log::create(stores, key, system_clock())?;
                    println!(
                        "created log {origin} in {place} (signing key {})",
                        path.display()
                    );
                    log
                }
            };
            println!("verifier key: {}", log.vkey());
            Ok(true)
        }
        LogCommand::Append { at, batch } => append(&at, batch),
        LogCommand::Verify {
            target,
            storage,
            state,
            vkey,
            witnesses,
        } => {
            let target = match (target, storage.spec()?.objects) {
                (Some(t), _) => t,
                (None, ObjectsSpec::S3(url)) => url,
                (None, ObjectsSpec::File(Some(p))) => p.join("log").display().to_string(),
                (None, _) => anyhow::bail!("what to verify: give a directory or URL, or --objects"),
            };
            verify_cmd(&target, state.as_deref(), vkey, &witnesses)
        }
        LogCommand::Proof { args, storage, key } => {
            let (dir, index) = match args.as_slice() {
                [index] => (None, index),
                [dir, index] => (Some(PathBuf::from(dir)), index),
                _ => anyhow::bail!("give [DIR] INDEX"),
            };
            let index: u64 = index
                .parse()
                .with_context(|| format!("{index:?} is not an entry index"))?;
            let at = LogAt { dir, storage, key };
            let log = at.open()?;
            print!("{}", log.tlog_proof(index)?);
            Ok(true)
        }
        LogCommand::Key { at } => {
            let vkey = match (&at.dir, at.storage.given()) {
                (Some(dir), false) => std::fs::read(dir.join("vkey"))
                    .with_context(|| format!("{}: not a log directory", dir.display()))?,
                _ => at
                    .stores()?
                    .public()
                    .get("vkey")?
                    .context("the log publishes no vkey")?,
            };
            print!("{}", String::from_utf8_lossy(&vkey));
            Ok(true)
        }
        LogCommand::Migrate { dir, storage } => {
            anyhow::ensure!(
                storage.given(),
                "migrate copies DIR to the stores --head and --objects name: give them"
            );
            let to = LogAt {
                dir: None,
                storage,
                key: Some(dir.join(toolmark_log::KEY_FILE)),
            };
            let report = toolmark_log::migrate::migrate(
                LogStores::dir(&dir)?,
                to.stores()?,
                sequencer::read_key(&dir.join(toolmark_log::KEY_FILE))?,
            )?;
            println!(
                "migrated {} entries ({} objects copied, {} already there); head committed at \
                 size {} and published",
                report.entries, report.copied, report.present, report.size
            );
            Ok(true)
        }
    }
}

fn append(at: &LogAt, batch_size: usize) -> Result<bool> {
    anyhow::ensure!(
        (1..=sequencer::MAX_BATCH).contains(&batch_size),
        "--batch must be 1 to {}",
        sequencer::MAX_BATCH
    );
    let mut log = at.open()?;
    let mut batch = Vec::new();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let e: EntryLine =
            serde_json::from_str(&line).with_context(|| format!("stdin line {}", n + 1))?;
        batch.push(Entry::try_from(e).with_context(|| format!("stdin line {}", n + 1))?);
        if batch.len() == batch_size {
            report(log.append(std::mem::take(&mut batch))?);
        }
    }
    if !batch.is_empty() {
        report(log.append(batch)?);
    }
    Ok(true)
}

fn report(a: toolmark_log::Appended) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for i in &a.indices {
        let _ = writeln!(out, "{i}");
    }
    let _ = write!(out, "{}", String::from_utf8_lossy(&a.checkpoint));
    // Acknowledged as soon as committed: whoever reads the output sees each batch at once.
    let _ = out.flush();
}

fn verify_cmd(
    target: &str,
    state: Option<&Path>,
    vkey: Option<String>,
    witnesses: &WitnessArgs,
) -> Result<bool> {
    use toolmark_roles::monitor::{self, KeyFrom, Monitor};
    let m = Monitor {
        target: target.to_owned(),
        state: state.map(Path::to_owned),
        vkey,
        policy: witnesses.policy()?,
        max_age: witnesses.max_age,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let audited = monitor::audit(&m, now)?;
    if audited.vkey.1 == KeyFrom::Published {
        eprintln!(
            "toolmark: trusting the log's published verifier key {} (pin it with --vkey)",
            audited.vkey.0
        );
    }
    let report = &audited.report;
    println!(
        "ok: {} at size {}, root {}; {} entries, {} bundles and {} tiles verified",
        report.checkpoint.origin,
        report.checkpoint.size,
        report.checkpoint.root.to_base64(),
        report.entries,
        report.bundles,
        report.tiles
    );
    if let Some(size) = audited.consistent_with {
        println!("consistent with the remembered checkpoint at size {size}");
    }
    match (&m.policy, &audited.witnessed) {
        (Some(p), Some((w, now))) => Ok(print_witnessed(p, w, *now, m.max_age)),
        _ => Ok(true),
    }
}

/// Prints which of the policy's witnesses cosigned and when, and whether the fresh ones meet
/// the quorum.
fn print_witnessed(p: &WitnessPolicy, w: &Witnessed, now: u64, max_age: Option<u64>) -> bool {
    let when = |t: u64| toolmark_api::witnesses::time_text(t).unwrap_or_else(|| t.to_string());
    for wit in p.witnesses() {
        match w.cosigned.iter().find(|c| c.witness == wit.name) {
            Some(c) => println!(
                "witness {}: cosigned at {} ({} s ago){}",
                wit.name,
                when(c.timestamp),
                now.saturating_sub(c.timestamp),
                if c.fresh {
                    ""
                } else {
                    ", too old or in the future: not counted"
                }
            ),
            None => println!("witness {}: no cosignature", wit.name),
        }
    }
    let age = max_age.map_or(String::new(), |a| format!(", at most {a} s old"));
    if w.satisfied {
        match w.newest {
            Some(t) => println!(
                "witnessed: {}{age}; newest cosignature {}",
                p.describe(),
                when(t)
            ),
            None => println!("witnessed: {}{age}", p.describe()),
        }
        true
    } else {
        eprintln!(
            "toolmark: the checkpoint is not witnessed as required: {}{age}; {} cosignature(s) counted",
            p.describe(),
            w.cosigned.iter().filter(|c| c.fresh).count()
        );
        false
    }
}
