//! `standin-fleet`: start a fleet of stand-in MCP servers on loopback and a registry stand-in
//! listing it, print one JSON line describing them, and serve until SIGTERM or SIGINT.
//!
//! ```text
//! standin-fleet --hosts 1000 --per-host 2 --min-ms 50 --max-ms 500 --seed 1 [--remotes-per-server 1]
//! ```
//!
//! The line on stdout: `{"registry": "http://127.0.0.1:P", "endpoints": N, "hosts": H,
//! "servers": S, "boundSeconds": B, "bounds": {...}, "latencies": {...}}`, where `boundSeconds`
//! is toolmark's schedule lower bound and `bounds` has it for toolmark (4 requests per
//! observation, 256 in flight) and HISTOR (3 requests, 12 workers), both at `--per-host-limit`.
//! On exit (SIGTERM, SIGINT), the requests the fleet answered are printed to stderr as one JSON
//! line, with each host's peak of requests answered at once (`peakInFlight`: the highest, and
//! how many hosts peaked at each count), which a crawler keeping `n` observations per host holds
//! at `n` for whatever it sends inside an observation; on SIGUSR1 the same line is printed for
//! the requests so far and the fleet serves on (a benchmark's first crawl, then its second).
//!
//! ```text
//! standin-fleet --items ITEMS.json --pins-out PINS.toml --ca-out CA.pem [--cluster-concurrency 32 …]
//! ```
//!
//! serves given registry items instead (bench/registry_60k.py writes them): the registry
//! stand-in lists them, and every `https` remote URL in them is served by a stand-in MCP
//! server over TLS, one loopback address per host name ([`Fleet::start_sites`]). The crawler
//! reaches them through the pins written to `--pins-out` (a config file's `[crawl]` section:
//! `resolve`, `no_dns`, `allow_private`) and trusts the CA written to `--ca-out`. `bounds` then
//! also has `cluster`: for each `--cluster-concurrency` C, the bound at C observations in
//! flight (a cluster's workers × the jobs each claims at once), 3 requests an observation (the
//! discover probe is paid once per host, the session's `DELETE` outside the host's places).
//!
//! `--surface beside-tools` gives every endpoint the surface stand-in around its own tool set
//! (`Surface::beside_tools`: prompts, resources in two pages, a template, a card, cache hints),
//! `--surface beside-tools-stateless` the same served as a 2026-07-28 stateless server
//! (`server/discover`, no session and so no `DELETE`: every request a crawler sends is inside
//! an observation), `--surface honest` the honest stand-in with its own tools and app page: the
//! surface observation's cost is measured against the same fleet without it.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Parser;
use serde_json::json;
use toolmark_standins::fleet::surface::Surface;
use toolmark_standins::fleet::{self, Fleet, FleetSpec, SiteSpec};
use toolmark_standins::registry::{self, RegistryStandIn};

#[derive(Parser)]
#[command(about = "A fleet of stand-in MCP servers on 127.1.x.y and a registry listing it")]
struct Args {
    /// Distinct hosts (loopback addresses 127.1.x.y).
    #[arg(long, required_unless_present = "items")]
    hosts: Option<usize>,
    /// Endpoints per host.
    #[arg(long, required_unless_present = "items")]
    per_host: Option<usize>,
    /// Serve these registry items (a JSON array) and their remotes instead of a made-up fleet.
    #[arg(long, conflicts_with_all = ["hosts", "per_host"], requires_all = ["pins_out", "ca_out"])]
    items: Option<PathBuf>,
    /// With `--items`: write the `[crawl]` section that reaches the fleet here (TOML).
    #[arg(long, requires = "items")]
    pins_out: Option<PathBuf>,
    /// With `--items`: write the fleet's CA certificate here (PEM).
    #[arg(long, requires = "items")]
    ca_out: Option<PathBuf>,
    /// With `--items`: also bound the crawl at this many observations in flight (repeat).
    #[arg(long, requires = "items")]
    cluster_concurrency: Vec<usize>,
    /// Shortest endpoint latency (ms), applied to every request.
    #[arg(long, default_value_t = 50)]
    min_ms: u64,
    /// Longest endpoint latency (ms).
    #[arg(long, default_value_t = 500)]
    max_ms: u64,
    /// Seed of the latency draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Remotes per registry server (endpoints are grouped in order).
    #[arg(long, default_value_t = 1)]
    remotes_per_server: usize,
    /// Directory of tool-set JSON files (one level of subdirectories is read too).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../toolset/tests/fixtures/corpus"))]
    toolsets: PathBuf,
    /// The per-host limit the bounds assume.
    #[arg(long, default_value_t = 2)]
    per_host_limit: usize,
    /// Write every endpoint's latency here, one `{"url": …, "latencyMs": …}` line each.
    #[arg(long)]
    dump_latencies: Option<PathBuf>,
    /// Give every endpoint a surface beyond its tools.
    #[arg(long, value_enum)]
    surface: Option<SurfaceKind>,
}

/// The surfaces `--surface` gives.
#[derive(Clone, Copy, clap::ValueEnum)]
enum SurfaceKind {
    /// `Surface::beside_tools`: the endpoint's own tools, and prompts, resources, a template
    /// and a card.
    BesideTools,
    /// `Surface::beside_tools`, answering 2026-07-28 stateless requests after `server/discover`.
    BesideToolsStateless,
    /// `Surface::honest`: its own tools and app page too.
    Honest,
}

/// Raise the soft open-file limit to the hard one (each host is a listener; each connection a
/// descriptor).
fn raise_nofile() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        if let Err(e) = setrlimit(Resource::Nofile, limit) {
            eprintln!("standin-fleet: cannot raise RLIMIT_NOFILE: {e}");
        }
    }
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    raise_nofile();
    let tool_sets = fleet::load_tool_sets(&args.toolsets)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let started = SystemTime::now();
        let mut signals = Signals::new();
        let latency = (
            Duration::from_millis(args.min_ms),
            Duration::from_millis(args.max_ms),
        );
        let given = match &args.items {
            Some(path) => Some(registry::load_snapshot(path)?),
            None => None,
        };
        let fleet = match &given {
            Some(items) => {
                Fleet::start_sites(SiteSpec {
                    urls: remote_urls(items),
                    latency,
                    seed: args.seed,
                    tool_sets: tool_sets.clone(),
                })
                .await?
            }
            None => {
                Fleet::start(FleetSpec {
                    hosts: args.hosts.unwrap_or_default(),
                    endpoints_per_host: args.per_host.unwrap_or_default(),
                    latency,
                    seed: args.seed,
                    tool_sets: tool_sets.clone(),
                })
                .await?
            }
        };
        if let Some(kind) = args.surface {
            let surface = match kind {
                SurfaceKind::BesideTools => Surface::beside_tools(),
                SurfaceKind::BesideToolsStateless => Surface {
                    stateless: true,
                    ..Surface::beside_tools()
                },
                SurfaceKind::Honest => Surface::honest(),
            };
            fleet.set_surface_everywhere(surface);
        }
        if let (Some(pins), Some(ca)) = (&args.pins_out, &args.ca_out) {
            std::fs::write(pins, crawl_section(&fleet.pins()))?;
            std::fs::write(ca, fleet.ca_certificate_pem().unwrap_or_default())?;
        }
        if let Some(path) = &args.dump_latencies {
            let mut text = String::new();
            for (url, latency) in fleet.urls().iter().zip(fleet.latencies()) {
                let line = json!({"url": url, "latencyMs": latency.as_secs_f64() * 1000.0});
                text.push_str(&line.to_string());
                text.push('\n');
            }
            std::fs::write(path, text)?;
        }
        let items = given.unwrap_or_else(|| fleet.registry_items(args.remotes_per_server));
        let servers = items.len();
        let registry = RegistryStandIn::start(items).await?;
        let grouped = fleet.latencies_by_host();
        let by_host: Vec<&[Duration]> = grouped.iter().map(Vec::as_slice).collect();
        // Each host's politeness key: its name when it has one, else its address.
        let pins = fleet.pins();
        let keys: Vec<String> = if pins.is_empty() {
            fleet
                .host_addrs()
                .iter()
                .map(|a| a.ip().to_string())
                .collect()
        } else {
            pins.iter()
                .map(|p| p.split('=').next().unwrap_or_default().to_owned())
                .collect()
        };
        let keyed: Vec<(String, &[Duration])> =
            keys.into_iter().zip(by_host.iter().copied()).collect();
        // toolmark: discover + initialize + initialized + tools/list, 256 in flight, the host with
        // the most targets left first. HISTOR: initialize + initialized + tools/list, 12 workers
        // over a host-interleaved list.
        let per = args.per_host_limit;
        let bound = |requests: u32, concurrency: usize, histor: bool| {
            let b = fleet::schedule_bound(&by_host, requests, per, concurrency);
            let simulated = if histor {
                fleet::simulate_round_robin_fifo(&by_host, requests, per, concurrency)
            } else {
                fleet::simulate_most_left_first(&keyed, requests, per, concurrency)
            };
            json!({
                "requests": requests,
                "concurrency": concurrency,
                "perHost": per,
                "seconds": b.seconds,
                "hostSeconds": b.host_seconds,
                "globalSeconds": b.global_seconds,
                "exactHostSeconds": b.exact_host_seconds,
                "tightSeconds": b.tight_seconds(),
                "simulatedSeconds": simulated,
            })
        };
        let toolmark = bound(4, 256, false);
        let cluster: serde_json::Map<String, serde_json::Value> = args
            .cluster_concurrency
            .iter()
            // A host's places carry 3 requests an observation: the discover probe is paid once
            // per host and the session's DELETE is sent after the place is given back.
            .map(|&c| (c.to_string(), bound(3, c, false)))
            .collect();
        let line = json!({
            "registry": registry.url(),
            "endpoints": fleet.urls().len(),
            "hosts": fleet.host_addrs().len(),
            "perHost": args.per_host,
            "servers": servers,
            "remotesPerServer": args.remotes_per_server,
            "seed": args.seed,
            "toolSets": tool_sets.len(),
            "toolSetBytes": tool_sets.iter().map(String::len).collect::<Vec<_>>(),
            "boundSeconds": toolmark["seconds"],
            "bounds": { "toolmark": toolmark, "histor": bound(3, 12, true), "cluster": cluster },
            "latencies": fleet::latency_summary(fleet.latencies()),
        });
        println!("{line}");
        // SIGUSR1: the counts so far, and serve on; SIGTERM or SIGINT: the counts, and stop.
        while signals.next().await == Signal::Counts {
            eprintln!("{}", counts_line(&fleet, &registry, started));
        }
        eprintln!("{}", counts_line(&fleet, &registry, started));
        fleet.shutdown(Duration::from_secs(2)).await;
        registry.shutdown().await;
        Ok(())
    })
}

/// The requests `fleet` and `registry` answered so far, by kind, the fleet's first request in
/// and last answer out, and each host's peak of requests at once: the line printed on exit.
fn counts_line(
    fleet: &Fleet,
    registry: &RegistryStandIn,
    started: SystemTime,
) -> serde_json::Value {
    let counts = fleet.requests();
    let peaks = fleet.peak_in_flight();
    let mut hosts_at_peak = std::collections::BTreeMap::<u64, usize>::new();
    for &peak in &peaks {
        *hosts_at_peak.entry(peak).or_default() += 1;
    }
    json!({
        "requests": {
            "discover": counts.discover,
            "initialize": counts.initialize,
            "initialized": counts.initialized,
            "toolsList": counts.tools_list,
            "promptsList": counts.prompts_list,
            "resourcesList": counts.resources_list,
            "templatesList": counts.templates_list,
            "resourcesRead": counts.resources_read,
            "cards": counts.cards,
            "closed": counts.closed,
            "other": counts.other,
        },
        // Seconds since the fleet started: first request in, last answer out.
        "firstRequestAt": counts.first_at.map(|d| d.as_secs_f64()),
        "lastAnswerAt": counts.last_at.map(|d| d.as_secs_f64()),
        "firstRequestUnix": counts.first_at.map(|d| unix(started + d)),
        "lastAnswerUnix": counts.last_at.map(|d| unix(started + d)),
        "activeSeconds": match (counts.first_at, counts.last_at) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64()),
            _ => None,
        },
        "registryRequests": registry.requests().len(),
        // The most requests one host answered at once, and hosts by their peak.
        "peakInFlight": {
            "max": peaks.iter().max(),
            "hosts": hosts_at_peak
                .iter()
                .map(|(peak, hosts)| (peak.to_string(), json!(hosts)))
                .collect::<serde_json::Map<_, _>>(),
        },
    })
}

/// Every `https` remote URL of `items`, each once, in order.
fn remote_urls(items: &[serde_json::Value]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .filter_map(|i| i.pointer("/server/remotes")?.as_array())
        .flatten()
        .filter_map(|r| r.get("url")?.as_str())
        .filter(|u| u.starts_with("https://"))
        .filter(|u| seen.insert(u.to_string()))
        .map(str::to_owned)
        .collect()
}

/// The `[crawl]` section of a config file that reaches the fleet: every host name pinned to
/// its loopback address, no other name resolved, loopback allowed.
fn crawl_section(pins: &[String]) -> String {
    let list: Vec<String> = pins.iter().map(|p| format!("  \"{p}\",")).collect();
    format!(
        "[crawl]\nallow_private = true\nno_dns = true\nresolve = [\n{}\n]\n",
        list.join("\n")
    )
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// What a signal asks of the fleet.
#[derive(PartialEq, Eq)]
enum Signal {
    /// SIGUSR1: print the counts so far and serve on.
    Counts,
    /// SIGTERM or SIGINT: print the counts and stop.
    Stop,
}

/// The signals the fleet answers (SIGTERM, SIGINT, SIGUSR1), listened to from its start to its
/// end, so none is missed between two waits.
struct Signals(Option<[tokio::signal::unix::Signal; 3]>);

impl Signals {
    fn new() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = || -> std::io::Result<_> {
            Ok([
                signal(SignalKind::terminate())?,
                signal(SignalKind::interrupt())?,
                signal(SignalKind::user_defined1())?,
            ])
        };
        Signals(listen().ok())
    }

    /// The next signal (Ctrl-C alone when the handlers could not be installed).
    async fn next(&mut self) -> Signal {
        match &mut self.0 {
            Some([term, int, usr1]) => {
                tokio::select! {
                    _ = term.recv() => Signal::Stop,
                    _ = int.recv() => Signal::Stop,
                    _ = usr1.recv() => Signal::Counts,
                }
            }
            None => {
                let _ = tokio::signal::ctrl_c().await;
                Signal::Stop
            }
        }
    }
}
