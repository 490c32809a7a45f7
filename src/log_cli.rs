//! `toolmark log …`: create, append to, prove from and verify a log directory.

use anyhow::{Context, Result};
use clap::Subcommand;
use serde::Deserialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use toolmark_log::entry::{Entry, EntryError, MtlResult, Status, Subject};
use toolmark_log::verify::{self, AuditState, DirSource, Source};
use toolmark_log::{Log, sequencer};
use toolmark_toolset::Sri;

#[derive(Subcommand)]
pub enum LogCommand {
    /// Create a log: signing key (private/log.key, mode 0600), vkey (DIR/vkey and
    /// public/vkey), empty checkpoint.
    Init {
        dir: PathBuf,
        /// The checkpoint origin and key name (a schema-less URL of where the log is served).
        #[arg(long, default_value = toolmark_config::DEFAULT_ORIGIN)]
        origin: String,
    },
    /// Append entries given as JSON lines on stdin; prints each assigned index, then the new
    /// checkpoint.
    Append { dir: PathBuf },
    /// fsck a published log (a log directory, its public/ directory, or an http(s) URL) and,
    /// with --state, audit it against the checkpoint remembered there.
    Verify {
        target: String,
        /// Remembers the last verified checkpoint; refuses a shrink, a fork or a key change.
        #[arg(long)]
        state: Option<PathBuf>,
        /// The verifier key to trust (default: the one remembered in --state, else the log's
        /// published vkey, trusted on first use).
        #[arg(long)]
        vkey: Option<String>,
    },
    /// Print the c2sp.org/tlog-proof@v1 bundle of an entry (the entry in its `extra` line)
    /// against the current checkpoint.
    Proof { dir: PathBuf, index: u64 },
    /// Print the log's verifier key.
    Key { dir: PathBuf },
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
        LogCommand::Init { dir, origin } => {
            let log = Log::init(&dir, &origin)?;
            println!("created log {origin} in {}", dir.display());
            println!("verifier key: {}", log.vkey());
            Ok(true)
        }
        LogCommand::Append { dir } => append(&dir),
        LogCommand::Verify {
            target,
            state,
            vkey,
        } => verify_cmd(&target, state.as_deref(), vkey),
        LogCommand::Proof { dir, index } => {
            let log = Log::open(&dir)?;
            print!("{}", log.tlog_proof(index)?);
            Ok(true)
        }
        LogCommand::Key { dir } => {
            let vkey = std::fs::read_to_string(dir.join("vkey"))
                .with_context(|| format!("{}: not a log directory", dir.display()))?;
            print!("{vkey}");
            Ok(true)
        }
    }
}

fn append(dir: &Path) -> Result<bool> {
    let mut log = Log::open(dir)?;
    let mut batch = Vec::new();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let e: EntryLine =
            serde_json::from_str(&line).with_context(|| format!("stdin line {}", n + 1))?;
        batch.push(Entry::try_from(e).with_context(|| format!("stdin line {}", n + 1))?);
        if batch.len() == sequencer::MAX_BATCH {
            report(log.append(std::mem::take(&mut batch))?);
        }
    }
    if !batch.is_empty() {
        report(log.append(batch)?);
    }
    Ok(true)
}

fn report(a: toolmark_log::Appended) {
    for i in &a.indices {
        println!("{i}");
    }
    print!("{}", String::from_utf8_lossy(&a.checkpoint));
}

fn verify_cmd(target: &str, state: Option<&Path>, vkey: Option<String>) -> Result<bool> {
    let source: Box<dyn Source> = if target.starts_with("http://") || target.starts_with("https://")
    {
        Box::new(toolmark_crawler::remote_log::HttpLog::new(target).map_err(anyhow::Error::msg)?)
    } else {
        let dir = Path::new(target);
        let public = if dir.join("public/checkpoint").exists() {
            dir.join("public")
        } else {
            dir.to_owned()
        };
        Box::new(DirSource(public))
    };
    let prior = match state {
        Some(p) if p.exists() => Some(AuditState::parse(
            &std::fs::read_to_string(p).with_context(|| format!("{}", p.display()))?,
        )?),
        _ => None,
    };
    let vkey = match (vkey, &prior) {
        (Some(v), _) => v,
        (None, Some(p)) => p.vkey.clone(),
        (None, None) => {
            let published = source
                .get("vkey")
                .map_err(anyhow::Error::msg)?
                .context("no --vkey given and the log publishes no vkey")?;
            let v = String::from_utf8(published)?.trim().to_owned();
            eprintln!(
                "toolmark: trusting the log's published verifier key {v} (pin it with --vkey)"
            );
            v
        }
    };
    let (report, next) = verify::audit(source.as_ref(), &vkey, prior.as_ref())?;
    println!(
        "ok: {} at size {}, root {}; {} entries, {} bundles and {} tiles verified",
        report.checkpoint.origin,
        report.checkpoint.size,
        report.checkpoint.root.to_base64(),
        report.entries,
        report.bundles,
        report.tiles
    );
    if let Some(p) = &prior {
        println!(
            "consistent with the remembered checkpoint at size {}",
            p.size
        );
    }
    if let Some(path) = state {
        std::fs::write(path, next.to_text()).with_context(|| format!("{}", path.display()))?;
    }
    Ok(true)
}
