//! Recording one crawl run: observations become blobs, log entries, index rows and changes.
//!
//! Order of writes for one batch ([`Recorder::record`]), chosen so that a crash at any point
//! leaves nothing that points at something missing:
//!
//! 1. the index catches up with the log, if an earlier batch died after its append;
//! 2. every observation document is written to the blob store (durably);
//! 3. all entries of the batch go to the log in one `Log::append` (the commit point);
//! 4. in one SQLite transaction: the batch's targets are upserted, the new entries are read back
//!    from the log's bundles and indexed exactly as [`Index::catch_up`] would (observation rows,
//!    target state, change detection against the target's previous `ok` tool set), and
//!    `log_size_indexed` moves to the new log size.
//!
//! A crash after 2 leaves unreferenced blobs (harmless); after 3, an index behind the log, which
//! step 1 of the next batch (or [`Index::catch_up`]) repairs.
//!
//! Entries per target kind:
//! * an observed remote: one entry, `raw` naming its observation document (failures too);
//! * a remote that must not be dialled (`target.skip`): one entry per run with the skip reason
//!   as status and only the *names* of template variables or needed headers as detail; no `raw`.
//!   Logged every run even when unchanged: the log is the record that we looked and why we did
//!   not dial;
//! * a package that comes with an observation (`via: Package`, from a package observer): one
//!   entry whose `subject.package` is the version it ran, `raw` naming its package document;
//! * a package without one (the crawl lists packages, the package sweep observes them): no
//!   entry; its target row says `awaiting-sandbox` until its first entry, or
//!   `unsupported-package-type`.
//!
//! Three outcomes are reported but not logged: a dialable remote with no observation
//! ([`NOT_OBSERVED`]), an observation made another way than its target is observed or naming
//! another package than its target ([`MISMATCHED`]), and an entry the log refuses to encode, e.g.
//! a URL longer than the entry format allows ([`NOT_LOGGED`]).

use serde::Serialize;
use toolmark_log::Log;
use toolmark_log::entry::{Entry, MAX_DETAIL_CHARS, Status, Subject};
use toolmark_observation::observe::{Observation, Via};
use toolmark_observation::registry::{Ecosystem, Record, SkipReason, Target, TargetKind};
use toolmark_toolset::Sri;

use rusqlite::{OptionalExtension, Transaction, params};

use crate::blobs::Blobs;
use crate::derive::{index_entries, read_entries};
use crate::document::{DocTarget, Document};
use crate::index::{Index, IndexError};
use crate::schema::{log_size_indexed_in, set_log_size_indexed};

/// Status of a package target until the sandbox observes packages.
pub const AWAITING_SANDBOX: &str = "awaiting-sandbox";
/// Status reported for a dialable remote that came with no observation (not logged).
pub const NOT_OBSERVED: &str = "not-observed";
/// Status reported for an observation whose entry the log format refuses (not logged).
pub const NOT_LOGGED: &str = "not-logged";
/// Status reported for an observation that does not belong to its target (not logged): a
/// remote's observation not made by dialling, a package's not made by running it, or one naming
/// another package or version than the target lists.
pub const MISMATCHED: &str = "mismatched-observation";

/// What a run starts from.
#[derive(Debug, Clone)]
pub struct RunInput {
    /// When the run started, UTC `YYYY-MM-DDTHH:MM:SSZ`: the listing time of everything in
    /// `records`, and the `observedAt` of skip entries.
    pub started_at: String,
    /// The registry read (base URL or snapshot name).
    pub registry: String,
    /// The latest record per server name.
    pub records: Vec<Record>,
    /// Whether the harvest read the whole registry.
    pub harvest_complete: bool,
    /// Server names to mark delisted (absent from a complete harvest).
    pub delisted: Vec<String>,
    /// Whether `http://` remotes are crawled (`--allow-private`: tests and demos), so they are
    /// listed as dialable targets rather than skipped as `cleartext-url`.
    pub allow_cleartext: bool,
}

impl RunInput {
    /// The targets of one listed record, as this run lists them.
    pub fn targets_of(&self, record: &Record) -> Vec<Target> {
        toolmark_observation::registry::targets_with(record, self.allow_cleartext)
    }

    /// Every target of the run, in record order: what the observers are given and what
    /// [`Recorder::begin_run`] lists.
    pub fn targets(&self) -> Vec<Target> {
        self.records
            .iter()
            .flat_map(|r| self.targets_of(r))
            .collect()
    }
}

/// One target and what observing it produced.
#[derive(Debug, Clone)]
pub struct TargetOutcome {
    /// The target.
    pub target: Target,
    /// The observation: `None` for skipped targets and packages.
    pub observation: Option<Observation>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Every batch was recorded.
    Complete,
    /// The run stopped early.
    Failed,
}

impl RunStatus {
    fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Failed => "failed",
        }
    }
}

/// What happened to one target: the per-target line of the crawl report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    /// Server name.
    pub server: String,
    /// URL, or `npm:<name>` / `pypi:<name>` / `<type>:<name>` for a package.
    pub endpoint: String,
    /// The transport that answered (or was tried last).
    pub transport: Option<String>,
    /// The status logged (or [`AWAITING_SANDBOX`], a package skip reason, [`NOT_OBSERVED`],
    /// [`NOT_LOGGED`]).
    pub status: String,
    /// The detail, capped as in the entry.
    pub detail: String,
    /// MTL/1 digest.
    pub mtl1: Option<String>,
    /// MTL/1 error code.
    pub mtl1_error: Option<String>,
    /// Full digest.
    pub full: Option<String>,
    /// Tool count.
    pub tools: Option<u64>,
    /// The log entry's index.
    pub entry_index: Option<u64>,
    /// The change recorded, when the tool set changed.
    pub change_id: Option<i64>,
}

/// The report given to a run found still `running` when the next run begins: the process that
/// ran it ended (crash, SIGKILL, power loss) before finishing it.
pub const INTERRUPTED_REPORT: &str = r#"{"error":"interrupted: the process ended before the run finished; its recorded batches are kept"}"#;

/// What recording one outcome needs: its report line and, when it is logged, its entry and
/// the observation document the entry names (`raw`).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The report line (no entry index or change yet).
    pub line: Recorded,
    /// The entry to log and its document, when the outcome is logged.
    pub logged: Option<(Entry, Option<Vec<u8>>)>,
}

/// The report line, entry and document of one outcome of a run started at `started`, without
/// writing anything: what the recorder logs, and what a cluster's worker hands to the
/// sequencer (an error only when the document cannot be encoded). An outcome that cannot be
/// logged (a package still awaiting the sandbox, an
/// observation of another version, a status the format refuses) gets a line and no entry.
pub fn prepare(outcome: &TargetOutcome, started: &str) -> Result<Prepared, IndexError> {
    let target = &outcome.target;
    let mut line = Recorded {
        server: target.server.clone(),
        endpoint: target_string(&target.kind),
        transport: None,
        status: String::new(),
        detail: String::new(),
        mtl1: None,
        mtl1_error: None,
        full: None,
        tools: None,
        entry_index: None,
        change_id: None,
    };
    let declared = match (&target.kind, &outcome.observation) {
        (TargetKind::Package { .. }, None) => {
            line.status = target
                .skip
                .as_ref()
                .map_or(AWAITING_SANDBOX, |s| s.as_str())
                .to_owned();
            line.detail = target
                .skip
                .as_ref()
                .and_then(skip_detail)
                .unwrap_or_default();
            return Ok(Prepared { line, logged: None });
        }
        (TargetKind::Package { transport, .. }, Some(_))
        | (TargetKind::Remote { transport, .. }, _) => transport,
    };
    // A package's observation names the version it ran; a remote's names none.
    let package = match observed_package(target, outcome.observation.as_ref()) {
        Ok(package) => package,
        Err(why) => {
            line.status = MISMATCHED.to_owned();
            line.detail = cap_detail(&why);
            return Ok(Prepared { line, logged: None });
        }
    };
    let subject = Subject {
        server: target.server.clone(),
        target: line.endpoint.clone(),
        package,
    };
    let (entry, document) = if let Some(obs) = &outcome.observation {
        let digests = obs.digests();
        line.transport = obs.transport().map(|t| t.as_str().to_owned());
        line.status = obs.status.name();
        line.detail = cap_detail(&obs.detail);
        if let Some(d) = &digests {
            match &d.mtl1 {
                Ok(sri) => line.mtl1 = Some(sri.to_string()),
                Err(code) => line.mtl1_error = Some(code.clone()),
            }
            line.full = Some(d.full.to_string());
            line.tools = Some(d.tools as u64);
        }
        let doc = Document::new(
            DocTarget {
                server: target.server.clone(),
                endpoint: line.endpoint.clone(),
                declared_transport: declared.clone(),
            },
            obs,
        )
        .encode()
        .map_err(IndexError::Encode)?;
        let entry = Status::new(line.status.clone()).map(|status| Entry {
            subject,
            observed_at: crate::time::utc(obs.started),
            status,
            detail: (!line.detail.is_empty()).then(|| line.detail.clone()),
            mtl1: digests.as_ref().map(|d| d.mtl1.clone().into()),
            full: digests.as_ref().map(|d| d.full),
            tools: line.tools,
            tool_index: digests.as_ref().map(|d| d.tool_index),
            surface: obs.surface.as_ref().map(entry_surface),
            second: obs.second.as_ref().map(|s| s.digest().into()),
            raw: Some(Sri::of(&doc)),
            prev: None,
        });
        (entry, Some(doc))
    } else if let Some(skip) = &target.skip {
        line.status = skip.as_str().to_owned();
        line.detail = skip_detail(skip).unwrap_or_default();
        let entry = Status::new(line.status.clone()).map(|status| Entry {
            subject,
            observed_at: started.to_owned(),
            status,
            detail: skip_detail(skip),
            mtl1: None,
            full: None,
            tools: None,
            tool_index: None,
            surface: None,
            second: None,
            raw: None,
            prev: None,
        });
        (entry, None)
    } else {
        line.status = NOT_OBSERVED.to_owned();
        return Ok(Prepared { line, logged: None });
    };
    // A status that is no name, or an entry the format refuses, is not logged.
    let entry = match entry.and_then(|e| e.encode().map(|_| e)) {
        Ok(entry) => entry,
        Err(e) => {
            line.detail = cap_detail(&format!("{}: not logged: {e}", line.status));
            line.status = NOT_LOGGED.to_owned();
            line.mtl1 = None;
            line.mtl1_error = None;
            line.full = None;
            line.tools = None;
            return Ok(Prepared { line, logged: None });
        }
    };
    Ok(Prepared {
        line,
        logged: Some((entry, document)),
    })
}

/// Records crawl runs into a log, a blob store and an index.
pub struct Recorder<'a> {
    log: &'a mut Log,
    blobs: &'a Blobs,
    index: &'a mut Index,
}

/// `detail` cut to [`MAX_DETAIL_CHARS`] characters (the last one `…` when cut).
pub fn cap_detail(detail: &str) -> String {
    if detail.chars().count() <= MAX_DETAIL_CHARS {
        return detail.to_owned();
    }
    let mut out: String = detail.chars().take(MAX_DETAIL_CHARS - 1).collect();
    out.push('…');
    out
}

/// The names behind a skip reason (never values), joined by `", "`.
pub fn skip_detail(reason: &SkipReason) -> Option<String> {
    let text = match reason {
        SkipReason::TemplatedUrl { variables } => variables.join(", "),
        SkipReason::HeaderRequired { headers } => headers.join(", "),
        SkipReason::UnsupportedTransport(t) | SkipReason::UnsupportedPackageType(t) => t.clone(),
        SkipReason::CleartextUrl | SkipReason::InvalidUrl => String::new(),
    };
    (!text.is_empty()).then(|| cap_detail(&text))
}

/// The target string of a target: its URL, or `<ecosystem>:<name>` for a package.
pub fn target_string(kind: &TargetKind) -> String {
    match kind {
        TargetKind::Remote { url, .. } => url.clone(),
        TargetKind::Package {
            ecosystem, name, ..
        } => {
            let prefix = match ecosystem {
                Ecosystem::Npm => "npm",
                Ecosystem::Pypi => "pypi",
                Ecosystem::Other(t) => t.as_str(),
            };
            format!("{prefix}:{name}")
        }
    }
}

/// The `subject.package` of `observation` of `target`: `None` for a remote's, the version run
/// for a package's — which must be this package (`<target string>@<version>`) at the version
/// the registry lists, when it lists one. `Err` says why an observation does not belong here.
fn observed_package(
    target: &Target,
    observation: Option<&Observation>,
) -> Result<Option<String>, String> {
    match (&target.kind, observation.map(|o| &o.via)) {
        (TargetKind::Remote { .. }, None | Some(Via::Remote(_))) => Ok(None),
        (TargetKind::Remote { .. }, Some(Via::Package(_))) => {
            Err("a package's observation for a remote target".to_owned())
        }
        (TargetKind::Package { .. }, None | Some(Via::Remote(_))) => {
            Err("a package target observed without running it".to_owned())
        }
        (TargetKind::Package { version, .. }, Some(Via::Package(p))) => {
            let name = target_string(&target.kind);
            let ran = p
                .package
                .strip_prefix(&name)
                .and_then(|v| v.strip_prefix('@'));
            // No version, an empty one or `latest` listed: any version is the listed one.
            let listed = toolmark_observation::registry::listed_version(version.as_deref());
            match (ran, listed) {
                (Some(v), Some(listed)) if v == listed => Ok(Some(p.package.clone())),
                (Some(v), None) if !v.is_empty() => Ok(Some(p.package.clone())),
                _ => Err(format!(
                    "the observation ran {:?}, the target is {name}@{}",
                    p.package,
                    version.as_deref().unwrap_or("(any version)")
                )),
            }
        }
    }
}

/// The log subject id of a target.
pub fn target_id(target: &Target) -> String {
    Subject {
        server: target.server.clone(),
        target: target_string(&target.kind),
        package: None,
    }
    .id()
    .to_string()
}

fn upsert_target(tx: &Transaction, target: &Target, listed: &str) -> Result<String, IndexError> {
    let id = target_id(target);
    let (kind, declared_transport, package_version, skip_reason) = match &target.kind {
        TargetKind::Remote { transport, .. } => (
            "remote",
            Some(transport.clone()),
            None,
            target.skip.as_ref().map(|s| s.as_str()),
        ),
        TargetKind::Package {
            version, transport, ..
        } => (
            "package",
            Some(transport.clone()),
            version.clone(),
            Some(
                target
                    .skip
                    .as_ref()
                    .map_or(AWAITING_SANDBOX, |s| s.as_str()),
            ),
        ),
    };
    tx.prepare_cached(
        "INSERT INTO targets (id, server, target, kind, declared_transport, package_version,
             skip_reason, skip_detail, first_listed, last_listed, delisted_at, endpoint_key,
             withheld_headers)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, NULL, ?10, ?11)
         ON CONFLICT (id) DO UPDATE SET server = excluded.server, target = excluded.target,
             kind = excluded.kind, declared_transport = excluded.declared_transport,
             package_version = excluded.package_version,
             skip_reason = CASE WHEN excluded.skip_reason = 'awaiting-sandbox'
                 AND targets.last_entry IS NOT NULL THEN NULL ELSE excluded.skip_reason END,
             skip_detail = excluded.skip_detail,
             first_listed = coalesce(targets.first_listed, excluded.first_listed),
             last_listed = excluded.last_listed, delisted_at = NULL,
             endpoint_key = excluded.endpoint_key,
             withheld_headers = excluded.withheld_headers",
    )?
    .execute(params![
        id,
        target.server,
        target_string(&target.kind),
        kind,
        declared_transport,
        package_version,
        skip_reason,
        target.skip.as_ref().and_then(skip_detail),
        listed,
        crate::index::endpoint_key(&target_string(&target.kind)),
        withheld_headers(target)?,
    ])?;
    Ok(id)
}

/// The `withheld_headers` column of a target: the names of the declared headers a remote is
/// dialled without, as a JSON array; `NULL` when there are none, for a remote that is not dialled
/// (it has a skip reason instead), and for packages.
fn withheld_headers(target: &Target) -> Result<Option<String>, IndexError> {
    let TargetKind::Remote { declared, .. } = &target.kind else {
        return Ok(None);
    };
    if target.skip.is_some() || declared.withheld.is_empty() {
        return Ok(None);
    }
    let names: Vec<&str> = declared.withheld.iter().map(|w| w.name.as_str()).collect();
    Ok(Some(serde_json::to_string(&names)?))
}

fn upsert_server(tx: &Transaction, r: &Record, listed: &str) -> Result<(), IndexError> {
    tx.prepare_cached(
        "INSERT INTO servers (name, version, title, description, status, repository_url,
             website_url, first_listed, last_listed, delisted_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, NULL)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, title = excluded.title,
             description = excluded.description, status = excluded.status,
             repository_url = excluded.repository_url, website_url = excluded.website_url,
             last_listed = excluded.last_listed, delisted_at = NULL",
    )?
    .execute(params![
        r.name,
        r.version,
        r.title,
        r.description,
        r.status.as_str(),
        r.repository_url,
        r.website_url,
        listed,
    ])?;
    Ok(())
}

/// Lists `input`'s records and targets at `input.started_at`: upserts every listed server and
/// target, marks targets a listed server no longer has and the `delisted` servers (and their
/// targets) delisted.
fn list(tx: &Transaction, input: &RunInput) -> Result<(), IndexError> {
    let at = &input.started_at;
    for name in &input.delisted {
        tx.execute(
            "UPDATE servers SET delisted_at = ?1 WHERE name = ?2 AND delisted_at IS NULL",
            params![at, name],
        )?;
        tx.execute(
            "UPDATE targets SET delisted_at = ?1 WHERE server = ?2 AND delisted_at IS NULL",
            params![at, name],
        )?;
    }
    for record in &input.records {
        upsert_server(tx, record, at)?;
        let mut listed = Vec::new();
        for target in input.targets_of(record) {
            listed.push(upsert_target(tx, &target, at)?);
        }
        let known: Vec<String> = tx
            .prepare_cached("SELECT id FROM targets WHERE server = ?1 AND delisted_at IS NULL")?
            .query_map([&record.name], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for id in known.iter().filter(|id| !listed.contains(id)) {
            tx.execute(
                "UPDATE targets SET delisted_at = ?1 WHERE id = ?2",
                params![at, id],
            )?;
        }
    }
    Ok(())
}

/// The index's meta key holding the last cluster harvest applied ([`Index::apply_listing`]).
const LISTING_APPLIED: &str = "cluster_harvest_applied";
/// The meta key of the last cluster harvest whose run an API replica's index recorded.
const RUN_REPORTED: &str = "cluster_run_reported";

impl Index {
    /// Applies a cluster run's listing (an API replica's index, which has no crawl of its
    /// own): what [`Recorder::begin_run`] lists, without a run of this index's, and `seq` (the
    /// harvest's place in the cluster's order) remembered as applied, in one transaction.
    ///
    /// # Errors
    ///
    /// [`IndexError::Invalid`] for a start time not `YYYY-MM-DDTHH:MM:SSZ`; SQLite.
    pub fn apply_listing(&mut self, input: &RunInput, seq: i64) -> Result<(), IndexError> {
        if !toolmark_log::entry::valid_time(&input.started_at) {
            return Err(IndexError::Invalid(format!(
                "run start {:?} is not YYYY-MM-DDTHH:MM:SSZ",
                input.started_at
            )));
        }
        let tx = self.conn.transaction()?;
        list(&tx, input)?;
        crate::schema::set_meta(&tx, LISTING_APPLIED, &seq.to_string())?;
        tx.commit()?;
        Ok(())
    }

    /// Records a cluster crawl run that has ended (an API replica's index, whose runs are the
    /// cluster's): a `crawl` row as [`Recorder::finish_run`] leaves one, its report made by
    /// `report` from the row's id, and `seq` (its harvest's) remembered as reported, in one
    /// transaction. Returns the row's id.
    ///
    /// # Errors
    ///
    /// [`IndexError::Invalid`] for a start time not `YYYY-MM-DDTHH:MM:SSZ`; SQLite; what
    /// `report` returned.
    pub fn record_cluster_run(
        &mut self,
        seq: i64,
        input: &RunInput,
        finished_at: &str,
        status: RunStatus,
        report: impl FnOnce(i64) -> Result<String, serde_json::Error>,
    ) -> Result<i64, IndexError> {
        if !toolmark_log::entry::valid_time(&input.started_at) {
            return Err(IndexError::Invalid(format!(
                "run start {:?} is not YYYY-MM-DDTHH:MM:SSZ",
                input.started_at
            )));
        }
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (kind, started_at, finished_at, status, registry, harvest_complete)
             VALUES ('crawl', ?1, ?2, ?3, ?4, ?5)",
            params![
                input.started_at,
                finished_at,
                status.as_str(),
                input.registry,
                input.harvest_complete
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "UPDATE runs SET report = ?2 WHERE id = ?1",
            params![id, report(id)?],
        )?;
        crate::schema::set_meta(&tx, RUN_REPORTED, &seq.to_string())?;
        tx.commit()?;
        Ok(id)
    }

    /// The last cluster harvest whose run [`Index::record_cluster_run`] recorded (0: none).
    ///
    /// # Errors
    ///
    /// SQLite.
    pub fn cluster_run_reported(&self) -> Result<i64, IndexError> {
        Ok(crate::schema::meta(&self.conn, RUN_REPORTED)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// The last cluster harvest [`Index::apply_listing`] applied (0: none).
    ///
    /// # Errors
    ///
    /// SQLite.
    pub fn listing_applied(&self) -> Result<i64, IndexError> {
        Ok(crate::schema::meta(&self.conn, LISTING_APPLIED)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }
}

impl<'a> Recorder<'a> {
    /// A recorder writing to `log`, `blobs` and `index` (which must follow this log).
    pub fn new(log: &'a mut Log, blobs: &'a Blobs, index: &'a mut Index) -> Self {
        Recorder { log, blobs, index }
    }

    /// Start a run: record it, upsert every listed server and target (listed at
    /// `input.started_at`), mark targets a listed server no longer has and the `delisted`
    /// servers (and their targets) delisted. Returns the run id.
    pub fn begin_run(&mut self, input: &RunInput) -> Result<i64, IndexError> {
        if !toolmark_log::entry::valid_time(&input.started_at) {
            return Err(IndexError::Invalid(format!(
                "run start {:?} is not YYYY-MM-DDTHH:MM:SSZ",
                input.started_at
            )));
        }
        let at = &input.started_at;
        let tx = self.index.conn.transaction()?;
        // A run still `running` was cut short (the process died or was killed): this recorder
        // holds the log's writer lock, so no other run can be in progress. What it recorded
        // stays (every batch is committed whole); the run itself is closed as failed.
        tx.execute(
            "UPDATE runs SET status = 'failed', finished_at = ?1, report = ?2
             WHERE status = 'running'",
            params![at, INTERRUPTED_REPORT],
        )?;
        tx.execute(
            "INSERT INTO runs (kind, started_at, status, registry, harvest_complete)
             VALUES ('crawl', ?1, 'running', ?2, ?3)",
            params![at, input.registry, input.harvest_complete],
        )?;
        let run = tx.last_insert_rowid();
        list(&tx, input)?;
        tx.commit()?;
        Ok(run)
    }

    /// Start a package sweep: a run of kind `sweep` over `registry`'s stored records, which
    /// changes no listing (the crawl's runs do). A run still `running` was cut short and is
    /// closed as failed, as [`Recorder::begin_run`] does. Returns the run id.
    pub fn begin_sweep(&mut self, started_at: &str, registry: &str) -> Result<i64, IndexError> {
        if !toolmark_log::entry::valid_time(started_at) {
            return Err(IndexError::Invalid(format!(
                "run start {started_at:?} is not YYYY-MM-DDTHH:MM:SSZ"
            )));
        }
        let tx = self.index.conn.transaction()?;
        tx.execute(
            "UPDATE runs SET status = 'failed', finished_at = ?1, report = ?2
             WHERE status = 'running'",
            params![started_at, INTERRUPTED_REPORT],
        )?;
        tx.execute(
            "INSERT INTO runs (kind, started_at, status, registry, harvest_complete)
             VALUES ('sweep', ?1, 'running', ?2, 1)",
            params![started_at, registry],
        )?;
        let run = tx.last_insert_rowid();
        tx.commit()?;
        Ok(run)
    }

    /// Record one batch of outcomes of run `run` (call as often as needed per run); returns one
    /// line per outcome, in order.
    pub fn record(
        &mut self,
        run: i64,
        outcomes: Vec<TargetOutcome>,
    ) -> Result<Vec<Recorded>, IndexError> {
        let started: String = self
            .index
            .conn
            .query_row("SELECT started_at FROM runs WHERE id = ?1", [run], |r| {
                r.get(0)
            })
            .optional()?
            .ok_or_else(|| IndexError::Invalid(format!("no run {run}")))?;
        self.index.catch_up(self.log, self.blobs)?;

        let mut results = Vec::with_capacity(outcomes.len());
        let mut entries: Vec<Entry> = Vec::new();
        let mut slots: Vec<usize> = Vec::new();
        for outcome in &outcomes {
            let Prepared { line, logged } = prepare(outcome, &started)?;
            let Some((entry, document)) = logged else {
                results.push(line);
                continue;
            };
            if let Some(doc) = document {
                self.blobs.put_deferred(&doc)?;
            }
            slots.push(results.len());
            results.push(line);
            entries.push(entry);
        }

        // Every document the batch names is durable before any entry naming it is committed.
        self.blobs.sync()?;
        let sent = entries.clone();
        let appended = self.log.append(entries)?;
        let size = self.log.head().size;
        // Entries before `base` were logged before (the same observation, by this or another
        // writer: the log logs an observation once); from `base` on they are this batch's.
        let first = appended.base;

        let tx = self.index.conn.transaction()?;
        for outcome in &outcomes {
            upsert_target(&tx, &outcome.target, &started)?;
        }
        let indexed = log_size_indexed_in(&tx)?;
        if indexed < first {
            // Entries appended by someone else since the catch-up above: index them as catch-up
            // would.
            index_entries(
                &tx,
                self.blobs,
                &read_entries(self.log, indexed, first)?,
                None,
            )?;
        }
        let batch = read_entries(self.log, first, size)?;
        let mut seen = std::collections::HashSet::new();
        let new: Vec<Entry> = appended
            .indices
            .iter()
            .zip(sent)
            .filter(|(i, _)| **i >= first && seen.insert(**i))
            .map(|(_, e)| e)
            .collect();
        if batch.len() != new.len() {
            return Err(IndexError::Inconsistent(format!(
                "{} entries appended, the log holds {} after them",
                new.len(),
                batch.len()
            )));
        }
        for ((index, logged), mut expected) in batch.iter().zip(new) {
            expected.prev = logged.prev;
            if *logged != expected {
                return Err(IndexError::Inconsistent(format!(
                    "log entry {index} is not the entry appended"
                )));
            }
        }
        let changes = index_entries(&tx, self.blobs, &batch, Some(run))?;
        set_log_size_indexed(&tx, size)?;
        tx.commit()?;

        for (slot, index) in slots.into_iter().zip(appended.indices) {
            results[slot].entry_index = Some(index);
            results[slot].change_id = changes.get(&index).copied();
        }
        Ok(results)
    }

    /// Finish run `run`: its end time, status and report (JSON).
    pub fn finish_run(
        &mut self,
        run: i64,
        finished_at: &str,
        status: RunStatus,
        report: &serde_json::Value,
    ) -> Result<(), IndexError> {
        let n = self.index.conn.execute(
            "UPDATE runs SET finished_at = ?2, status = ?3, report = ?4 WHERE id = ?1",
            params![
                run,
                finished_at,
                status.as_str(),
                serde_json::to_string(report)?
            ],
        )?;
        if n == 0 {
            return Err(IndexError::Invalid(format!("no run {run}")));
        }
        Ok(())
    }
}

/// What an entry says of an observed surface: [`toolmark_toolset::surface::digests`], each
/// unread status one the log takes (a status no name is recorded as `protocol`).
fn entry_surface(raw: &toolmark_toolset::surface::RawSurface) -> toolmark_log::entry::EntrySurface {
    let mut kinds = toolmark_toolset::surface::digests(raw)
        .into_iter()
        .map(|(kind, d)| (kind, d.into()))
        .collect::<toolmark_log::entry::EntrySurface>();
    // In the order of the kinds' names, as the entry is encoded and read back.
    kinds.sort_by_key(|(kind, _)| kind.as_str());
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_are_capped_and_names_only() {
        assert_eq!(cap_detail("short"), "short");
        let long = "é".repeat(MAX_DETAIL_CHARS + 5);
        let capped = cap_detail(&long);
        assert_eq!(capped.chars().count(), MAX_DETAIL_CHARS);
        assert!(capped.ends_with('…'));
        assert_eq!(
            skip_detail(&SkipReason::HeaderRequired {
                headers: vec!["Authorization".into(), "X-Api-Key".into()]
            })
            .as_deref(),
            Some("Authorization, X-Api-Key")
        );
        assert_eq!(skip_detail(&SkipReason::CleartextUrl), None);
    }

    #[test]
    fn package_targets_are_named_by_ecosystem() {
        let kind = |ecosystem| TargetKind::Package {
            ecosystem,
            name: "@scope/pkg".into(),
            version: Some("1.0.0".into()),
            transport: "stdio".into(),
        };
        assert_eq!(target_string(&kind(Ecosystem::Npm)), "npm:@scope/pkg");
        assert_eq!(target_string(&kind(Ecosystem::Pypi)), "pypi:@scope/pkg");
        assert_eq!(
            target_string(&kind(Ecosystem::Other("oci".into()))),
            "oci:@scope/pkg"
        );
    }
}
