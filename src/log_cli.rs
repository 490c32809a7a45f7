//! `toolmark log …`: create, append to, prove from and verify a log directory.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::path::PathBuf;
use toolmark_config::StorageFlags;
use toolmark_log::place::LogPlace;
use toolmark_log::sequencer;
use toolmark_roles::monitor::{self, Monitor};

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
    /// The log these flags name (the storage settings refused first when they cannot work).
    fn place(self) -> Result<LogPlace> {
        let spec = self.storage.spec()?;
        Ok(LogPlace {
            dir: self.dir,
            storage: self.storage.given().then_some(spec),
            key: self.key,
        })
    }
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

pub fn run(cmd: LogCommand) -> Result<bool> {
    match cmd {
        LogCommand::Init { at, origin } => {
            let (log, place) = at.place()?.create(&origin)?;
            println!("created log {origin} in {place}");
            println!("verifier key: {}", log.vkey());
            Ok(true)
        }
        LogCommand::Append { at, batch } => append(at, batch),
        LogCommand::Verify {
            target,
            storage,
            state,
            vkey,
            witnesses: w,
        } => {
            let m = Monitor {
                target: monitor::target(target, &storage.spec()?.objects)?,
                state,
                vkey,
                policy: monitor::asked_policy(
                    w.policy.as_deref(),
                    &w.witness,
                    w.quorum,
                    w.max_age,
                )?,
                max_age: w.max_age,
            };
            let audited = monitor::audit(&m, sequencer::system_clock()())?;
            if let Some(note) = audited.trust_note() {
                eprintln!("toolmark: {note}");
            }
            let verdict = audited.verdict(&m);
            print!("{}", verdict.text);
            if let Some(unmet) = &verdict.unmet {
                eprintln!("toolmark: {unmet}");
            }
            Ok(verdict.unmet.is_none())
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
            let log = LogAt { dir, storage, key }.place()?.open()?;
            print!("{}", log.tlog_proof(index)?);
            Ok(true)
        }
        LogCommand::Key { at } => {
            print!("{}", String::from_utf8_lossy(&at.place()?.vkey()?));
            Ok(true)
        }
        LogCommand::Migrate { dir, storage } => {
            anyhow::ensure!(
                storage.given(),
                "migrate copies DIR to the stores --head and --objects name: give them"
            );
            let to = LogPlace {
                storage: Some(storage.spec()?),
                ..LogPlace::default()
            };
            let report = toolmark_log::migrate::migrate_dir(&dir, to.stores()?)?;
            println!(
                "migrated {} entries ({} objects copied, {} already there); head committed at \
                 size {} and published",
                report.entries, report.copied, report.present, report.size
            );
            Ok(true)
        }
    }
}

fn append(at: LogAt, batch_size: usize) -> Result<bool> {
    anyhow::ensure!(
        (1..=sequencer::MAX_BATCH).contains(&batch_size),
        "--batch must be 1 to {}",
        sequencer::MAX_BATCH
    );
    let mut log = at.place()?.open()?;
    let stdin = std::io::stdin().lock();
    toolmark_log::place::append_lines(&mut log, stdin, "stdin", batch_size, report)?;
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
