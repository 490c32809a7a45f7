//! The demo's stage: everything on loopback the service observes — the registry replica, the
//! fleet of stand-in MCP servers, the real server-everything and the package registry
//! stand-in — with no service attached. `toolmark demo` puts its own service in front of it;
//! `toolmark demo --stage` (what `scripts/cluster` starts) serves it alone, for a cluster's
//! roles to crawl with the settings [`Stage::settings`] names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use toolmark_ingest::CrawlOptions;
use toolmark_standins::fleet::{Fleet, SiteSpec};
use toolmark_standins::packages::PackagesStandIn;
use toolmark_standins::registry::RegistryStandIn;
use toolmark_toolset::model::tools_document;

use crate::everything::Everything;
use crate::packages::{self, DemoPackage};
use crate::world::{
    self, DAYS, Day, EDITS, EXTRA_CHANGE_EVERY, FLEET_LATENCY, REPLICA_RATE, TOOL_SETS,
};
use crate::{DEFAULT_MCP_SERVERS, DemoError};

/// The stand-ins of the registry's two days, serving day one until [`Stage::day_two`].
pub struct Stage {
    days: [Day; 2],
    sets: Vec<Vec<String>>,
    /// Every remote a crawler may dial on either day, sorted: the fleet's sites in order.
    originals: Vec<String>,
    fleet: Fleet,
    pins: Vec<String>,
    ca_pem: String,
    keyed: BTreeSet<String>,
    everything: Option<Everything>,
    servers_dir: Option<PathBuf>,
    demo_packages: Vec<DemoPackage>,
    package_registry: Option<PackagesStandIn>,
    package_items: Vec<Value>,
    registry: RegistryStandIn,
    /// What day two changed (the manifest's `standIns`), once it came.
    changed: Option<Vec<Value>>,
    everything_versions: Vec<&'static str>,
}

impl Stage {
    /// Starts day one's stand-ins: one per remote a crawler would dial on either day (those
    /// asking for a key refuse without one), the real server-everything when `mcp_servers`
    /// (default [`DEFAULT_MCP_SERVERS`] when present) holds it, and the real packages installed
    /// there, served by a loopback npm registry and PyPI index.
    pub async fn start(mcp_servers: Option<&Path>) -> Result<Stage, DemoError> {
        let days = [Day::load(DAYS[0].1)?, Day::load(DAYS[1].1)?];
        let sets: Vec<Vec<String>> = TOOL_SETS
            .iter()
            .map(|(file, text)| world::raw_tools(file, text))
            .collect::<Result<_, _>>()?;
        let mut originals: Vec<String> = days.iter().flat_map(|d| d.dialable(|_| true)).collect();
        originals.sort();
        originals.dedup();
        let fleet = Fleet::start_sites(SiteSpec {
            urls: originals.clone(),
            latency: FLEET_LATENCY,
            seed: 20251217,
            tool_sets: sets.iter().map(|t| tools_document(t)).collect(),
        })
        .await
        .map_err(|reason| DemoError::StandIn {
            what: "stand-in MCP servers",
            reason,
        })?;
        let pins = fleet.pins();
        let ca_pem = fleet.ca_certificate_pem().unwrap_or("").to_owned();
        let keyed: BTreeSet<String> = days.iter().flat_map(Day::keyed).collect();
        for (i, original) in originals.iter().enumerate() {
            if keyed.contains(original) {
                fleet.set_keyed(i, Some(world::authorization_server(original)));
            }
        }

        let servers_dir = mcp_servers.map(Path::to_owned).or_else(|| {
            let d = PathBuf::from(DEFAULT_MCP_SERVERS);
            d.is_dir().then_some(d)
        });
        let mut everything = servers_dir.as_deref().and_then(Everything::find);
        if everything.is_none() {
            tracing::info!(
                "the real server-everything is not installed (scripts/mcp-servers installs it); using stand-ins only"
            );
        }
        let mut first_items = days[0].items.clone();
        if let Some(e) = everything.as_mut() {
            let version = e.version(0);
            match tokio::task::block_in_place(|| e.start(version)) {
                Ok(()) => first_items.push(e.item(version)),
                Err(err) => {
                    tracing::warn!("{err}; continuing without it");
                    everything = None;
                }
            }
        }
        let local = servers_dir
            .as_deref()
            .map(packages::installed)
            .unwrap_or_default();
        let (demo_packages, files): (Vec<_>, Vec<_>) = local.into_iter().unzip();
        let package_registry = if files.is_empty() {
            None
        } else {
            Some(
                PackagesStandIn::start(&files)
                    .await
                    .map_err(|reason| DemoError::StandIn {
                        what: "package registry stand-in",
                        reason,
                    })?,
            )
        };
        let package_items: Vec<Value> = package_registry
            .iter()
            .flat_map(|r| demo_packages.iter().zip(r.served()))
            .map(|(p, served)| packages::item(p, served))
            .collect();
        first_items.extend(package_items.iter().cloned());
        let registry = RegistryStandIn::start(first_items)
            .await
            .map_err(|reason| DemoError::StandIn {
                what: "registry replica",
                reason,
            })?;
        Ok(Stage {
            days,
            sets,
            originals,
            fleet,
            pins,
            ca_pem,
            keyed,
            everything,
            servers_dir,
            demo_packages,
            package_registry,
            package_items,
            registry,
            changed: None,
            everything_versions: Vec::new(),
        })
    }

    /// The registry replica's URL.
    pub fn registry_url(&self) -> String {
        self.registry.url()
    }

    /// Stand-in MCP servers started.
    pub fn stand_ins(&self) -> usize {
        self.originals.len()
    }

    /// Whether the real server-everything runs.
    pub fn everything(&self) -> bool {
        self.everything.is_some()
    }

    /// Where the real MCP servers and packages are installed, if anywhere.
    pub fn servers_dir(&self) -> Option<&Path> {
        self.servers_dir.as_deref()
    }

    /// The real packages listed (none when they are not installed).
    pub fn packages(&self) -> &[DemoPackage] {
        &self.demo_packages
    }

    /// The package registry stand-in's URL (npm registry and PyPI index in one), when the real
    /// packages are installed.
    pub fn package_registry_url(&self) -> Option<String> {
        self.package_registry.as_ref().map(PackagesStandIn::url)
    }

    /// The stand-ins' throwaway CA (PEM): the only root a crawl of the stage may trust.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// How a crawl reaches the stage: every real host name pinned to its stand-in, no DNS,
    /// loopback allowed, the replica's pace, and full harvests (each day is the registry's own
    /// snapshot with its 2025 timestamps: a delta would find nothing updated since day one).
    pub fn crawl_options(&self) -> CrawlOptions {
        CrawlOptions {
            allow_private: true,
            no_dns: true,
            resolve: self.pins.clone(),
            registry_rate: REPLICA_RATE.per_second,
            registry_burst: REPLICA_RATE.burst,
            harvest: toolmark_ingest::HarvestPolicy::Full,
            ..CrawlOptions::default()
        }
    }

    /// The crawl settings [`Stage::crawl_options`] makes, as the environment variables of
    /// `toolmark run` and the cluster's roles (`NAME=value` lines; the CA is written to
    /// `ca_file`, which `TOOLMARK_TRUST_ROOTS` names), and `STAGE_PACKAGE_REGISTRY`, the
    /// package registry stand-in's URL, when the real packages are installed.
    pub fn settings(&self, ca_file: &Path) -> Result<String, DemoError> {
        std::fs::write(ca_file, &self.ca_pem).map_err(|reason| DemoError::Io {
            what: "writing",
            path: ca_file.to_owned(),
            reason,
        })?;
        let o = self.crawl_options();
        let mut lines = vec![
            format!("TOOLMARK_REGISTRY={}", self.registry.url()),
            format!("TOOLMARK_RESOLVE={}", o.resolve.join(",")),
            "TOOLMARK_NO_DNS=true".to_owned(),
            "TOOLMARK_ALLOW_PRIVATE=true".to_owned(),
            format!("TOOLMARK_REGISTRY_RATE={}", o.registry_rate),
            format!("TOOLMARK_REGISTRY_BURST={}", o.registry_burst),
            "TOOLMARK_HARVEST=full".to_owned(),
            format!("TOOLMARK_TRUST_ROOTS={}", ca_file.display()),
        ];
        // Not a variable of toolmark's: `[packages] npm_registry` and `pypi_index` are set in
        // a configuration file (`scripts/cluster` writes one).
        if let Some(url) = self.package_registry_url() {
            lines.push(format!("STAGE_PACKAGE_REGISTRY={url}"));
        }
        Ok(lines.join("\n") + "\n")
    }

    /// The registry's next day: the replica serves 2025-12-18; the stand-ins of servers that
    /// published a new version (and of every [`EXTRA_CHANGE_EVERY`]th other) change their tool
    /// sets by one of [`EDITS`]; one keyed stand-in seen on day one swaps its authorization
    /// server; server-everything is upgraded when both versions are installed. Again: nothing.
    pub fn day_two(&mut self) -> Result<(), DemoError> {
        if self.changed.is_some() {
            return Ok(());
        }
        let addresses: BTreeMap<&str, &str> =
            self.pins.iter().filter_map(|p| p.split_once('=')).collect();
        let stand_in = |url: &str| {
            let host = world::host_of(url)?;
            addresses.get(host.as_str()).map(|a| a.to_string())
        };
        let before: BTreeSet<(&str, &str)> = self.days[0]
            .latest
            .iter()
            .map(|r| (r.name.as_str(), r.version.as_str()))
            .collect();
        let urls_of_new_versions: BTreeSet<String> = self.days[1]
            .dialable(|r| !before.contains(&(r.name.as_str(), r.version.as_str())))
            .into_iter()
            .collect();
        // Only a stand-in observed on day one can show a change on day two.
        let day_one: BTreeSet<String> = self.days[0].dialable(|_| true).into_iter().collect();
        let (sets, fleet) = (&self.sets, &self.fleet);
        let mut manifest = Vec::new();
        let mut edits = 0;
        let mut swapped = false;
        for (i, original) in self.originals.iter().enumerate() {
            let set = i % sets.len();
            let mut entry = json!({
                "url": original,
                "standIn": stand_in(original),
                "day1": TOOL_SETS[set].0,
            });
            if self.keyed.contains(original) {
                // A keyed stand-in serves no tools to the crawler: it refuses. One of those
                // seen on day one swaps its authorization server on day two.
                let first = world::authorization_server(original);
                entry = json!({
                    "url": original,
                    "standIn": stand_in(original),
                    "keyed": true,
                    "day1AuthorizationServer": first,
                });
                if !swapped && day_one.contains(original) {
                    swapped = true;
                    fleet.set_keyed(i, Some(world::SWAPPED_AUTHORIZATION_SERVER.to_owned()));
                    entry["day2AuthorizationServer"] = json!(world::SWAPPED_AUTHORIZATION_SERVER);
                }
                manifest.push(entry);
                continue;
            }
            let changes = urls_of_new_versions.contains(original)
                || i % EXTRA_CHANGE_EVERY == EXTRA_CHANGE_EVERY / 2;
            if changes && day_one.contains(original) {
                let edit = EDITS[edits % EDITS.len()];
                edits += 1;
                let tools = edit.apply(&sets[set], &sets[(set + 1) % sets.len()])?;
                let served = tools_document(&tools);
                fleet.set_tool_set(i, served.clone());
                entry["day2Edit"] = json!(edit.name());
                entry["day2Tools"] = serde_json::from_str(&served)?;
            }
            manifest.push(entry);
        }
        let mut second_items = self.days[1].items.clone();
        if let Some(e) = self.everything.as_mut() {
            let (old, new) = (e.version(0), e.version(1));
            self.everything_versions = vec![old, new];
            if old != new {
                tokio::task::block_in_place(|| e.start(new))?;
            }
            second_items.push(e.item(new));
        }
        second_items.extend(self.package_items.iter().cloned());
        self.registry.set_items(second_items);
        self.changed = Some(manifest);
        Ok(())
    }

    /// What the stage served on each day (`DATA/demo.json`): the desk at `desk`, and whether
    /// gVisor could observe the packages (`sandbox`).
    pub fn manifest(&self, desk: &str, sandbox: bool) -> Value {
        json!({
            "desk": desk,
            "registry": self.registry.url(),
            "days": DAYS.iter().map(|d| d.0).collect::<Vec<_>>(),
            "serverEverything": self.everything.as_ref().map(|e| json!({
                "url": e.url(), "versions": self.everything_versions,
            })),
            "standIns": self.changed.clone().unwrap_or_default(),
            "packageRegistry": self.package_registry_url(),
            "packages": self.package_registry.iter().flat_map(|r| self.demo_packages.iter().zip(r.served())).map(|(p, served)| json!({
                "server": p.server,
                "package": packages::target(p),
                "version": served.version,
                "sandbox": sandbox,
            })).collect::<Vec<_>>(),
        })
    }

    /// Stops every stand-in (and server-everything).
    pub async fn shutdown(self) {
        drop(self.everything);
        self.fleet.shutdown(Duration::from_secs(2)).await;
        self.registry.shutdown().await;
        if let Some(r) = self.package_registry {
            r.shutdown().await;
        }
    }
}

/// `toolmark demo --stage DIR`: starts the stage, writes `DIR/stage.env` ([`Stage::settings`];
/// the CA as `DIR/ca.pem`), reports the file's path to `ready`, moves to day two when
/// `next_day` completes, and serves until `stop`.
pub async fn serve(
    mcp_servers: Option<&Path>,
    dir: &Path,
    next_day: impl std::future::Future<Output = ()>,
    stop: toolmark_ingest::Stop,
    ready: &dyn Fn(&Path, &str),
) -> Result<(), DemoError> {
    std::fs::create_dir_all(dir).map_err(|reason| DemoError::Io {
        what: "creating",
        path: dir.to_owned(),
        reason,
    })?;
    let mut stage = Stage::start(mcp_servers).await?;
    let env = dir.join("stage.env");
    let settings = stage.settings(&dir.join("ca.pem"))?;
    std::fs::write(&env, settings).map_err(|reason| DemoError::Io {
        what: "writing",
        path: env.clone(),
        reason,
    })?;
    ready(&env, DAYS[0].0);
    tokio::select! {
        () = next_day => {
            stage.day_two()?;
            ready(&env, DAYS[1].0);
            stop.cancelled().await;
        }
        () = stop.cancelled() => {}
    }
    stage.shutdown().await;
    Ok(())
}
