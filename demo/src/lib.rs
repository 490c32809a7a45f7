//! `toolmark demo`'s world and its orchestration: the whole service on one machine with no
//! internet, in under a minute.
//!
//! On loopback it starts a replica of the official registry serving the bundled snapshot of
//! 2025-12-17 (`demo/data/`, 1,097 real servers), a fleet of stand-in MCP servers (one per
//! remote a crawler may dial; each serves one of the real tool sets in
//! `toolset/tests/fixtures/corpus/`), and — when `scripts/mcp-servers` has installed it — the
//! real `@modelcontextprotocol/server-everything` (through `toolmark_sandbox::local`). It
//! serves the API and desk over a fresh data directory ([`DemoData`]) through the same path as
//! `toolmark serve` (`toolmark_api::serve`), crawls with `toolmark_ingest::run_crawl`, moves the
//! replica to 2025-12-18 (the registry's real next day; the fleet changes the tool sets of the
//! servers that published a new version and of a few others, and server-everything is upgraded
//! from 2025.9.25 to 2026.8.31 when both are installed), crawls again, writes `DATA/demo.json`
//! (which endpoint served what on each day), and keeps serving until stopped.
//!
//! What it changes from the real data, so that it can run offline: nothing in the registry's
//! items. The stand-ins answer for the real remote URLs over https (one loopback address per
//! host name, [`Fleet::start_sites`]); the crawl pins every host name to its stand-in
//! (`crawl.resolve`, `NAME=IP:PORT`), uses no DNS, allows loopback addresses, and trusts only
//! the fleet's throwaway CA ([`toolmark_ingest::Trust::only`]). Remotes keep their declared headers, so the
//! crawler dials them as it dials the real ones (anonymously, withholding secrets); the
//! stand-ins of remotes that ask for a key ([`world::Day::keyed`]) refuse with 401 and
//! protected-resource metadata naming an authorization server (the real remote's origin: made
//! up). The day-two tool-set edits
//! ([`world::EDITS`]) and the one swapped authorization server
//! ([`world::SWAPPED_AUTHORIZATION_SERVER`]) are made up (listed in docs/operations.md); the
//! registry's day-two changes are real.
//!
//! The package half ([`packages`]): when `scripts/mcp-servers` downloaded them, a few real npm
//! and PyPI servers are listed too (made-up entries, real packages), served by a loopback npm
//! registry and PyPI index ([`toolmark_standins::packages`]); when gVisor can run (runsc, root,
//! not `--no-sandbox`) one package sweep (`toolmark_ingest::run_sweep`, at most
//! [`packages::MAX_SWEPT`] versions, [`packages::DEMO_CONCURRENCY`] at once) observes them after
//! the crawls, installing their dependencies offline; otherwise [`Event::PackagesUnobserved`]
//! says why. Every other listed package stays awaiting the sandbox (no local files).
//!
//! What it never does: install signal handlers or print to the terminal (the binary hands it a
//! [`Stop`] and prints the [`Event`]s it reports), spawn a process itself (the sandbox crate
//! runs server-everything), bind anything but loopback for its stand-ins, or dial anything
//! outside this machine.

#![deny(missing_docs)]

pub mod data;
pub mod everything;
pub mod packages;
pub mod stage;
mod text;
pub mod world;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toolmark_index::DataDir;
use toolmark_ingest::{CrawlOptions, CrawlRun, IngestError, RunSummary, Stop, SweepSummary};

pub use data::DemoData;
pub use stage::Stage;
use world::DAYS;

/// The address the desk and API listen on unless told otherwise; when it is taken, the demo
/// listens on any free loopback port instead.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Where `scripts/mcp-servers` installs the real MCP servers, used when present and no other
/// directory is given.
pub const DEFAULT_MCP_SERVERS: &str = ".venv/mcp-servers";

/// What the demo is run with.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Address the desk and API listen on ([`DEFAULT_LISTEN`] falls back to any free port).
    pub listen: SocketAddr,
    /// Where the real MCP servers are installed (default [`DEFAULT_MCP_SERVERS`] when present).
    pub mcp_servers: Option<PathBuf>,
    /// The log's origin.
    pub origin: String,
    /// The `toolmark-probe` binary for the package sweep's sandboxes (`None`: no traps).
    pub probe: Option<PathBuf>,
    /// Hide gVisor: the packages stay unobserved, as without runsc (`--no-sandbox`).
    pub no_sandbox: bool,
}

/// What the demo reports as it goes (the binary prints them).
#[derive(Debug)]
pub enum Event<'a> {
    /// The desk and API serve; the crawls follow.
    Serving {
        /// The desk's URL, without a trailing slash.
        base: &'a str,
        /// The data directory.
        data: &'a Path,
        /// The registry replica's URL.
        registry: &'a str,
        /// Stand-in MCP servers started.
        stand_ins: usize,
        /// Whether the real server-everything runs too.
        everything: bool,
    },
    /// Stopped before the desk served.
    StoppedDuringStartup,
    /// A crawl ended, completely or stopped early, with what it recorded.
    Crawled(&'a RunSummary),
    /// A day's crawl is done.
    Day {
        /// 1 or 2.
        number: usize,
        /// The registry's date that day.
        date: &'static str,
        /// What the crawl recorded.
        summary: &'a RunSummary,
        /// How long that day's crawl took (harvest, observation and recording: this crawl
        /// alone, not the time since the demo started).
        took: Duration,
        /// The desk's URL.
        base: &'a str,
    },
    /// The package sweep is done.
    Swept {
        /// What it recorded.
        summary: &'a SweepSummary,
        /// How long it took (fetching, the sandboxes, recording).
        took: Duration,
        /// Whether the sandboxes ran the probe (`toolmark-probe`: the DNS sink and traps).
        probe: bool,
        /// The desk's URL.
        base: &'a str,
    },
    /// The packages stay unobserved: reported after [`Event::Serving`] when gVisor cannot run
    /// (or the files are not installed), after the crawls when the sweep failed.
    PackagesUnobserved {
        /// Why.
        why: &'a packages::Unobserved,
        /// The demo's real packages listed (0 when none is installed).
        listed: usize,
    },
    /// Both crawls (and the sweep) are done; the demo serves until stopped.
    Ready {
        /// The desk's URL.
        base: &'a str,
    },
    /// Stopped during the crawls (what was observed is recorded); the demo shuts down.
    StoppedEarly(&'a DemoError),
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A file or directory could not be read or written.
    #[error("{what} {}: {reason}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        reason: std::io::Error,
    },
    /// The data directory holds something that is not an earlier demo's.
    #[error(
        "{} is not empty and not an earlier demo's data directory; give an empty or new one",
        .0.display()
    )]
    NotDemoData(PathBuf),
    /// The bundled data could not be read (a broken build).
    #[error("{0}")]
    Bundled(String),
    /// A stand-in (the fleet or the registry replica) could not start.
    #[error("starting the {what}: {reason}")]
    StandIn {
        /// Which.
        what: &'static str,
        /// Why.
        reason: std::io::Error,
    },
    /// The real server-everything could not start.
    #[error("server-everything {version}: {reason}")]
    Everything {
        /// The version.
        version: String,
        /// Why.
        reason: toolmark_sandbox::local::LocalError,
    },
    /// The data directory (log, keys) could not be opened.
    #[error(transparent)]
    Data(#[from] toolmark_index::DataError),
    /// The API's state could not be opened.
    #[error("opening {}: {reason}", path.display())]
    State {
        /// The data directory.
        path: PathBuf,
        /// Why.
        reason: toolmark_api::state::StateError,
    },
    /// The desk's address could not be listened on.
    #[error(transparent)]
    Listen(#[from] toolmark_server::ServeError),
    /// Serving failed.
    #[error("serving: {0}")]
    Serving(toolmark_server::ServeError),
    /// A crawl failed (or was stopped).
    #[error(transparent)]
    Crawl(#[from] IngestError),
    /// The stand-ins' CA could not be made the crawler's only trusted root.
    #[error(transparent)]
    Trust(#[from] toolmark_crawler::mcp::TrustError),
    /// A task of the demo ended abnormally.
    #[error("the {what} task: {reason}")]
    Task {
        /// Which.
        what: &'static str,
        /// Why.
        reason: tokio::task::JoinError,
    },
    /// JSON the demo builds could not be written or read back.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// Run the demo over `data` (fresh: [`DemoData::prepare`]) until `stop` is cancelled, reporting
/// to `report`. A stop during startup or the crawls ends it cleanly (the stand-ins, the replica
/// and server-everything are stopped); it runs on a multi-threaded runtime
/// (`toolmark_api::runtime`).
pub async fn run(
    options: &DemoOptions,
    data: &Path,
    stop: Stop,
    report: &dyn Fn(Event<'_>),
) -> Result<(), DemoError> {
    let stopped = || stop.is_cancelled();

    let mut stage = Stage::start(options.mcp_servers.as_deref()).await?;
    let trust = toolmark_ingest::Trust::only(stage.ca_pem().as_bytes())?;
    let sandbox = match stage.package_registry_url() {
        None => Err(packages::Unobserved::NotInstalled),
        Some(_) => packages::sandbox(options.no_sandbox),
    };

    // The log and index, then the desk.
    let origin = options.origin.as_str();
    drop(DataDir::new(data).open_writer(origin)?);
    let listener = match toolmark_server::bind(options.listen).await {
        Ok(l) => l,
        Err(e) if options.listen.to_string() == DEFAULT_LISTEN => {
            tracing::warn!("{e}; using any free port instead");
            toolmark_server::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?
        }
        Err(e) => return Err(e.into()),
    };
    let bound = listener.local_addr().map_err(|reason| DemoError::Io {
        what: "reading the address of",
        path: PathBuf::from(options.listen.to_string()),
        reason,
    })?;
    let base = format!("http://{bound}");
    let api = toolmark_api::ApiOptions::unlimited();
    let state = toolmark_api::AppState::open_with(data, &base, &api).map_err(|reason| {
        DemoError::State {
            path: data.to_owned(),
            reason,
        }
    })?;
    if stopped() {
        report(Event::StoppedDuringStartup);
        return Ok(());
    }
    let limits = toolmark_server::Limits::default();
    let mut server = tokio::spawn(toolmark_api::serve(
        listener,
        state,
        limits,
        stop.clone().cancelled_owned(),
    ));
    report(Event::Serving {
        base: &base,
        data,
        registry: &stage.registry_url(),
        stand_ins: stage.stand_ins(),
        everything: stage.everything(),
    });
    // Known from the start: said at once, not after the crawls.
    if let Err(why) = &sandbox {
        report(Event::PackagesUnobserved {
            why,
            listed: stage.packages().len(),
        });
    }

    let crawl_options = stage.crawl_options();
    let registry_url = stage.registry_url();
    let crawl_day = || {
        crawl(
            data,
            origin,
            &registry_url,
            (&crawl_options, &trust),
            &stop,
            report,
        )
    };

    // The two days. A stop during a crawl ends it early (what it observed is recorded) and
    // the demo shuts down cleanly.
    let crawled: Result<(), DemoError> = async {
        // Crawl day one.
        let (first, took) = crawl_day().await?;
        report(Event::Day {
            number: 1,
            date: DAYS[0].0,
            summary: &first,
            took,
            base: &base,
        });

        // Day two: the registry's next day; some servers change their tools.
        stage.day_two()?;
        let (second, took) = crawl_day().await?;
        let manifest_path = data.join("demo.json");
        let manifest = serde_json::to_vec_pretty(&stage.manifest(&base, sandbox.is_ok()))?;
        std::fs::write(&manifest_path, manifest).map_err(|reason| DemoError::Io {
            what: "writing",
            path: manifest_path,
            reason,
        })?;
        report(Event::Day {
            number: 2,
            date: DAYS[1].0,
            summary: &second,
            took,
            base: &base,
        });

        // The package half: one sweep of the real packages, when gVisor can run.
        let failed = match (&sandbox, stage.package_registry_url(), stage.servers_dir()) {
            (Ok(runsc), Some(served), Some(servers)) => {
                let work = data.join("sandbox");
                let observer =
                    packages::observer(runsc.clone(), servers, &work, options.probe.clone());
                let sweep_options = toolmark_ingest::SweepOptions {
                    cap: packages::MAX_SWEPT,
                    concurrency: packages::DEMO_CONCURRENCY,
                    npm_registry: served.clone(),
                    pypi_index: served,
                    work: work.clone(),
                    cache: work,
                    allow_private: true,
                    probe: options.probe.clone().unwrap_or_default(),
                };
                let only: Vec<String> = stage.packages().iter().map(packages::target).collect();
                match sweep(
                    data,
                    origin,
                    &registry_url,
                    (&sweep_options, &observer, &only),
                    &stop,
                )
                .await
                {
                    Ok((summary, took)) => {
                        report(Event::Swept {
                            summary: &summary,
                            took,
                            probe: options.probe.is_some(),
                            base: &base,
                        });
                        None
                    }
                    Err(e) if stopped() => return Err(e),
                    Err(e) => Some(packages::Unobserved::Failed(e.to_string())),
                }
            }
            // Reported at the start.
            _ => None,
        };
        if let Some(why) = failed {
            report(Event::PackagesUnobserved {
                why: &why,
                listed: stage.packages().len(),
            });
        }
        report(Event::Ready { base: &base });
        Ok(())
    }
    .await;
    match crawled {
        Err(e) if stopped() => report(Event::StoppedEarly(&e)),
        Err(e) => {
            stop.cancel();
            let _ = (&mut server).await;
            stage.shutdown().await;
            return Err(e);
        }
        Ok(()) => {}
    }

    // Serve until stopped.
    let served = (&mut server).await;
    stage.shutdown().await;
    served
        .map_err(|reason| DemoError::Task {
            what: "API server",
            reason,
        })?
        .map_err(DemoError::Serving)
}

/// One crawl of the demo's replica, off the async workers, and how long it took (timed from
/// its start: each day's crawl is timed on its own); `report`s what it recorded, also when it
/// was stopped early.
async fn crawl(
    data: &Path,
    origin: &str,
    registry: &str,
    (options, trust): (&CrawlOptions, &toolmark_ingest::Trust),
    stop: &Stop,
    report: &dyn Fn(Event<'_>),
) -> Result<(RunSummary, Duration), DemoError> {
    let started = std::time::Instant::now();
    let (data, origin, registry) = (DataDir::new(data), origin.to_owned(), registry.to_owned());
    let (options, trust, stop) = (options.clone(), trust.clone(), stop.clone());
    let handle = tokio::runtime::Handle::current();
    let result = tokio::task::spawn_blocking(move || {
        let run = CrawlRun {
            data: &data,
            origin: &origin,
            registry: &registry,
            since: None,
            options: &options,
            trust,
        };
        toolmark_ingest::run_crawl(&handle, &run, &stop, &())
    })
    .await
    .map_err(|reason| DemoError::Task {
        what: "crawl",
        reason,
    })?;
    let took = started.elapsed();
    match &result {
        Ok(summary) => report(Event::Crawled(summary)),
        Err(IngestError::Stopped { summary, .. }) => report(Event::Crawled(summary)),
        Err(_) => {}
    }
    Ok((result?, took))
}

/// One package sweep of the demo's replica, off the async workers, over the packages `only`
/// names, and how long it took.
async fn sweep(
    data: &Path,
    origin: &str,
    registry: &str,
    (options, observer, only): (
        &toolmark_ingest::SweepOptions,
        &toolmark_sandbox::observe::Observer,
        &[String],
    ),
    stop: &Stop,
) -> Result<(SweepSummary, Duration), DemoError> {
    let started = std::time::Instant::now();
    let (data, origin, registry) = (DataDir::new(data), origin.to_owned(), registry.to_owned());
    let (options, observer, only, stop) = (
        options.clone(),
        observer.clone(),
        only.to_vec(),
        stop.clone(),
    );
    let handle = tokio::runtime::Handle::current();
    let summary = tokio::task::spawn_blocking(move || {
        let run = toolmark_ingest::SweepRun {
            data: &data,
            origin: &origin,
            registry: &registry,
            options: &options,
            observer: &observer,
            only: Some(&only),
        };
        toolmark_ingest::run_sweep(&handle, &run, &stop)
    })
    .await
    .map_err(|reason| DemoError::Task {
        what: "package sweep",
        reason,
    })??;
    Ok((summary, started.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Instant;
    use toolmark_standins::registry::RegistryStandIn;

    /// A registry server with one npm package (listed, never dialled: the crawl is quick).
    fn package_item(name: &str) -> serde_json::Value {
        json!({
            "server": {
                "$schema": toolmark_standins::fleet::SERVER_SCHEMA,
                "name": name, "description": "a package", "version": "1.0.0",
                "packages": [{"registryType": "npm", "identifier": "@acme/pkg", "version": "1.0.0",
                              "transport": {"type": "stdio"}}],
            },
            "_meta": {
                toolmark_standins::registry::OFFICIAL_META: {
                    "status": "active", "publishedAt": "2025-12-01T00:00:00Z",
                    "updatedAt": "2025-12-01T00:00:00Z", "isLatest": true,
                }
            }
        })
    }

    /// What `Event::Day` reports is the crawl's own time: each crawl's `took` lies within that
    /// crawl's call, so the second day's does not count the first day's crawl (nor anything
    /// before it), as the time since the demo started did.
    #[test]
    fn each_days_crawl_reports_its_own_duration_not_the_time_since_start() {
        let runtime = toolmark_api::runtime().unwrap();
        let dir = std::env::temp_dir().join(format!("toolmark-demo-timing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let origin = "toolmark.test/log";
        drop(DataDir::new(&dir).open_writer(origin).unwrap());
        runtime.block_on(async {
            let registry = RegistryStandIn::start(vec![package_item("io.example/pkg")])
                .await
                .unwrap();
            let options = CrawlOptions {
                allow_private: true,
                no_dns: true,
                registry_rate: 1000.0,
                ..CrawlOptions::default()
            };
            let stop = Stop::new();
            let crawled = std::sync::Mutex::new(0);
            let report = |e: Event<'_>| {
                if let Event::Crawled(_) = e {
                    *crawled.lock().unwrap() += 1;
                }
            };
            let mut calls = Vec::new();
            for _ in 0..2 {
                let called = Instant::now();
                let (summary, took) = crawl(
                    &dir,
                    origin,
                    &registry.url(),
                    (&options, &toolmark_ingest::Trust::platform()),
                    &stop,
                    &report,
                )
                .await
                .unwrap();
                calls.push((called.elapsed(), took));
                assert_eq!(summary.report.servers, 1);
            }
            for (i, (call, took)) in calls.iter().enumerate() {
                assert!(
                    took <= call,
                    "day {}: {took:?} for a call of {call:?}",
                    i + 1
                );
            }
            assert_eq!(*crawled.lock().unwrap(), 2);
            registry.shutdown().await;
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}
