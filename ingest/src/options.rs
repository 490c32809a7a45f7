//! The crawl's knobs, defined once: [`CrawlOptions`] is what a run uses (and the `[crawl]`
//! section of `toolmark run`'s TOML), [`CrawlFlags`] the same knobs as flags with environment
//! variables, applied over a file's values or the defaults.

use serde::{Deserialize, Serialize};
use toolmark_crawler::crawl::CrawlConfig;
use toolmark_crawler::harvest::Rate;

/// The crawl's memory budget, in MiB (`toolmark_crawler::limits::MEMORY_BUDGET`).
pub const DEFAULT_MEMORY_BUDGET_MIB: usize =
    toolmark_crawler::limits::MEMORY_BUDGET / (1024 * 1024);

/// Days between full harvests when the crawl harvests deltas ([`CrawlOptions::full_harvest_days`]):
/// weekly.
pub const DEFAULT_FULL_HARVEST_DAYS: u32 = 7;

/// How a crawl harvests the registry when it is not given `--since`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum HarvestPolicy {
    /// A delta (`updated_since` the last complete harvest) merged into the registry records the
    /// index keeps, then the whole latest set observed; a full harvest instead when none is
    /// stored yet or the last full one is [`CrawlOptions::full_harvest_days`] old.
    Delta,
    /// A full harvest (`version=latest`) every time.
    Full,
}

/// Crawl limits and network policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrawlOptions {
    /// Observe only the first N servers by name (0: all).
    pub limit: usize,
    /// Observations in flight per host.
    pub per_host: usize,
    /// Observations in flight overall.
    pub concurrency: usize,
    /// MiB the observations in flight may hold together.
    pub memory_budget_mib: usize,
    /// Registry requests per second (the official registry asks for 1).
    pub registry_rate: f64,
    /// Registry requests that may go back to back.
    pub registry_burst: u32,
    /// Allow http:// and loopback/private addresses (tests and demos only).
    pub allow_private: bool,
    /// `NAME=IP` or `NAME=IP:PORT` answered without DNS ([`parse_pin`]).
    pub resolve: Vec<String>,
    /// No DNS beyond `resolve`.
    pub no_dns: bool,
    /// `delta` (the default: deltas, with a full harvest every `full_harvest_days`) or `full`.
    pub harvest: HarvestPolicy,
    /// Under `harvest = "delta"`, a full harvest runs when the last complete one started at
    /// least this many days ago (less an hour of slack, so a daily crawl's jitter does not push
    /// it to the next day); only a full harvest delists servers.
    pub full_harvest_days: u32,
    /// A PEM file of root certificates that remote endpoints' certificates must chain to,
    /// instead of the platform's roots (tests, demos and `scripts/cluster`, whose stand-ins
    /// have a throwaway CA). Empty: the platform's roots, as for every real crawl.
    pub trust_roots: std::path::PathBuf,
    /// Read each remote's surface beyond `tools/list` (prompts, resources, templates, `ui://`
    /// pages) and its Server Card (docs/crawler.md, "The surface"); `false`: tools only.
    pub surface: bool,
    /// Once a remote's surface was read, it is read again one crawl day in this many, chosen
    /// by its URL; 1: every crawl ([`toolmark_crawler::crawl::CrawlConfig::surface_days`]).
    pub surface_days: u64,
    /// Once a remote has been observed, its second look is made one crawl day in this many.
    pub second_look_days: u64,
    /// List each remote whose tools were listed completely a second time, from a second client
    /// identity (docs/crawler.md, "Cloaking: the second look"); `false`: once.
    pub second_look: bool,
    /// The second look's client, `name/version`: its `clientInfo` and `User-Agent`
    /// ([`toolmark_crawler::observe::SecondClient`]; never naming toolmark).
    pub second_client: String,
    /// The local IP address the second look connects from (one of this machine's); empty: the
    /// one the system picks.
    pub second_source: String,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        let c = CrawlConfig::default();
        CrawlOptions {
            limit: 0,
            per_host: c.per_host,
            concurrency: c.concurrency,
            memory_budget_mib: DEFAULT_MEMORY_BUDGET_MIB,
            registry_rate: Rate::REGISTRY.per_second,
            registry_burst: Rate::REGISTRY.burst,
            allow_private: false,
            resolve: Vec::new(),
            no_dns: false,
            harvest: HarvestPolicy::Delta,
            full_harvest_days: DEFAULT_FULL_HARVEST_DAYS,
            trust_roots: std::path::PathBuf::new(),
            surface: true,
            surface_days: c.surface_days,
            second_look_days: c.second_look_days,
            second_look: true,
            second_client: toolmark_crawler::observe::SECOND_CLIENT.to_owned(),
            second_source: String::new(),
        }
    }
}

impl CrawlOptions {
    /// Which server certificates observations accept: the roots in
    /// [`CrawlOptions::trust_roots`] alone when it names a file, else the platform's.
    pub fn trust(&self) -> Result<toolmark_crawler::mcp::Trust, String> {
        use toolmark_crawler::mcp::Trust;
        let path = &self.trust_roots;
        if path.as_os_str().is_empty() {
            return Ok(Trust::platform());
        }
        let pem = std::fs::read(path)
            .map_err(|e| format!("crawl.trust_roots {}: {e}", path.display()))?;
        Trust::only(&pem).map_err(|e| format!("crawl.trust_roots {}: {e}", path.display()))
    }

    /// The second look's client ([`CrawlOptions::second_client`]).
    pub fn second_client(&self) -> Result<toolmark_crawler::observe::SecondClient, String> {
        self.second_client
            .parse()
            .map_err(|e| format!("crawl.second_client {e}"))
    }

    /// The second look's local address ([`CrawlOptions::second_source`]), `None` when empty.
    pub fn second_source(&self) -> Result<Option<std::net::IpAddr>, String> {
        let source = self.second_source.trim();
        if source.is_empty() {
            return Ok(None);
        }
        source
            .parse()
            .map(Some)
            .map_err(|_| format!("crawl.second_source {source:?} is not an IP address"))
    }

    /// Set the second look's options on a crawl's client: on or off, its client, its source.
    pub fn apply_second_look(
        &self,
        client: &mut toolmark_crawler::mcp::ClientConfig,
    ) -> Result<(), String> {
        client.limits.second_look = self.second_look;
        client.second_client = self.second_client()?;
        client.second_source = self.second_source()?;
        Ok(())
    }

    /// The registry's pacing.
    pub fn rate(&self) -> Rate {
        Rate {
            per_second: self.registry_rate,
            burst: self.registry_burst,
        }
    }

    /// Why these options cannot work (each message names the key), if they cannot.
    pub fn problem(&self) -> Option<String> {
        if self.per_host == 0 || self.concurrency == 0 {
            return Some("crawl.per_host and crawl.concurrency must be at least 1".into());
        }
        if self.memory_budget_mib < 64 {
            return Some(format!(
                "crawl.memory_budget_mib must be at least 64 (a cap-sized tool set is charged about 47 MiB), not {}",
                self.memory_budget_mib
            ));
        }
        if !(self.registry_rate.is_finite() && self.registry_rate > 0.0) {
            return Some(format!(
                "crawl.registry_rate must be a positive number of requests per second, not {}",
                self.registry_rate
            ));
        }
        if self.registry_burst == 0 {
            return Some("crawl.registry_burst must be at least 1".into());
        }
        if self.surface_days == 0 || self.second_look_days == 0 {
            return Some(
                "crawl.surface_days and crawl.second_look_days must be at least 1 (1: every crawl)"
                    .into(),
            );
        }
        if self.full_harvest_days == 0 {
            return Some("crawl.full_harvest_days must be at least 1 (for a full harvest every run, set crawl.harvest = \"full\")".into());
        }
        self.resolve
            .iter()
            .find_map(|entry| parse_pin(entry).err().map(|e| format!("crawl.resolve {e}")))
            .or_else(|| self.trust().err())
            .or_else(|| self.second_client().err())
            .or_else(|| self.second_source().err())
    }
}

/// One `resolve` entry: `NAME=IP` (dialled at the URL's port) or `NAME=IP:PORT`
/// (`NAME=[IPv6]:PORT`; where the name's URLs without a port of their own are dialled — a port
/// written in the URL still wins). Returns the name as the crawler's guard looks it up (IDNA
/// applied, lower case, without a root dot; surrounding spaces ignored) and the address, port 0
/// when none is given.
pub fn parse_pin(entry: &str) -> Result<(String, std::net::SocketAddr), String> {
    use std::net::{IpAddr, SocketAddr};
    let (name, addr) = entry
        .split_once('=')
        .ok_or_else(|| format!("entry {entry:?} is not NAME=IP or NAME=IP:PORT"))?;
    let name = match url::Host::parse(name.trim()) {
        Ok(url::Host::Domain(d)) if !d.trim_end_matches('.').is_empty() => {
            d.trim_end_matches('.').to_owned()
        }
        _ => return Err(format!("entry {entry:?}: {name:?} is not a host name")),
    };
    let addr = addr.trim();
    let addr = match (addr.parse::<IpAddr>(), addr.parse::<SocketAddr>()) {
        (Ok(ip), _) => SocketAddr::new(ip, 0),
        (_, Ok(at)) if at.port() != 0 => at,
        _ => {
            return Err(format!(
                "entry {entry:?}: {addr:?} is not an IP address or IP:PORT"
            ));
        }
    };
    Ok((name, addr))
}

/// The crawl's knobs as flags, each also read from its environment variable (a flag wins);
/// shared by `toolmark crawl` and `toolmark run` (`#[command(flatten)]`).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct CrawlFlags {
    /// Observe only the first N servers by name (0: all).
    #[arg(
        long = "crawl-limit",
        visible_alias = "limit",
        env = "TOOLMARK_CRAWL_LIMIT"
    )]
    pub limit: Option<usize>,
    /// Observations in flight per host.
    #[arg(long, env = "TOOLMARK_CRAWL_PER_HOST")]
    pub per_host: Option<usize>,
    /// Observations in flight overall.
    #[arg(long, env = "TOOLMARK_CRAWL_CONCURRENCY")]
    pub concurrency: Option<usize>,
    /// MiB the crawl's observations may hold together.
    #[arg(long, env = "TOOLMARK_CRAWL_MEMORY_BUDGET_MIB")]
    pub memory_budget_mib: Option<usize>,
    /// Registry requests per second.
    #[arg(long, env = "TOOLMARK_REGISTRY_RATE")]
    pub registry_rate: Option<f64>,
    /// Registry requests that may go back to back.
    #[arg(long, env = "TOOLMARK_REGISTRY_BURST")]
    pub registry_burst: Option<u32>,
    /// NAME=IP or NAME=IP:PORT answered without DNS (repeat, or comma-separated in the
    /// variable); replaces the file's list. A port is where the name's URLs without a port of
    /// their own are dialled. With --no-dns these are the only names that resolve; otherwise they
    /// are answered first and the system resolver handles the rest. The SSRF guard checks
    /// these addresses like any other.
    #[arg(
        long = "resolve",
        value_name = "NAME=IP[:PORT]",
        env = "TOOLMARK_RESOLVE",
        value_delimiter = ','
    )]
    pub resolve: Vec<String>,
    /// Allow http:// and loopback/private addresses (tests and demos only); `--allow-private`
    /// alone means true.
    #[arg(long, env = "TOOLMARK_ALLOW_PRIVATE", num_args = 0..=1, default_missing_value = "true")]
    pub allow_private: Option<bool>,
    /// Use no DNS beyond the `resolve` table (offline machines, where every outside lookup
    /// would only time out); `--no-dns` alone means true.
    #[arg(long, env = "TOOLMARK_NO_DNS", num_args = 0..=1, default_missing_value = "true")]
    pub no_dns: Option<bool>,
    /// `delta` (deltas, with a full harvest every --full-harvest-days) or `full` (a full
    /// harvest every run; `--harvest full` forces one).
    #[arg(long, value_enum, env = "TOOLMARK_HARVEST")]
    pub harvest: Option<HarvestPolicy>,
    /// Under `--harvest delta`, days between full harvests.
    #[arg(long, env = "TOOLMARK_FULL_HARVEST_DAYS")]
    pub full_harvest_days: Option<u32>,
    /// A PEM file of the only root certificates remote endpoints may chain to (tests and
    /// demos with a throwaway CA; unset: the platform's roots).
    #[arg(long, value_name = "PEM", env = "TOOLMARK_TRUST_ROOTS")]
    pub trust_roots: Option<std::path::PathBuf>,
    /// Read the surface beyond tools/list and the Server Card (the default); `--surface false`
    /// observes tools only.
    #[arg(long, env = "TOOLMARK_CRAWL_SURFACE", num_args = 0..=1, default_missing_value = "true")]
    pub surface: Option<bool>,
    /// Days between two reads of a remote's surface once one crawl read it (1: every crawl).
    #[arg(long, value_name = "DAYS", env = "TOOLMARK_CRAWL_SURFACE_DAYS")]
    pub surface_days: Option<u64>,
    /// Days between two second looks at a remote once it has been observed (1: every crawl).
    #[arg(long, value_name = "DAYS", env = "TOOLMARK_CRAWL_SECOND_LOOK_DAYS")]
    pub second_look_days: Option<u64>,
    /// List each remote a second time from a second client identity (the default);
    /// `--second-look false` lists it once.
    #[arg(long, env = "TOOLMARK_CRAWL_SECOND_LOOK", num_args = 0..=1, default_missing_value = "true")]
    pub second_look: Option<bool>,
    /// The second look's client, name/version (its clientInfo and User-Agent).
    #[arg(
        long,
        value_name = "NAME/VERSION",
        env = "TOOLMARK_CRAWL_SECOND_CLIENT"
    )]
    pub second_client: Option<String>,
    /// The local IP address the second look connects from ("": the system's choice).
    #[arg(long, value_name = "IP", env = "TOOLMARK_CRAWL_SECOND_SOURCE")]
    pub second_source: Option<String>,
}

impl CrawlFlags {
    /// `options` with every flag (or variable) that is set applied over it.
    pub fn apply(&self, options: &mut CrawlOptions) {
        let o = options;
        o.limit = self.limit.unwrap_or(o.limit);
        o.per_host = self.per_host.unwrap_or(o.per_host);
        o.concurrency = self.concurrency.unwrap_or(o.concurrency);
        o.memory_budget_mib = self.memory_budget_mib.unwrap_or(o.memory_budget_mib);
        o.registry_rate = self.registry_rate.unwrap_or(o.registry_rate);
        o.registry_burst = self.registry_burst.unwrap_or(o.registry_burst);
        if !self.resolve.is_empty() {
            o.resolve.clone_from(&self.resolve);
        }
        o.allow_private = self.allow_private.unwrap_or(o.allow_private);
        o.no_dns = self.no_dns.unwrap_or(o.no_dns);
        o.harvest = self.harvest.unwrap_or(o.harvest);
        o.full_harvest_days = self.full_harvest_days.unwrap_or(o.full_harvest_days);
        o.surface = self.surface.unwrap_or(o.surface);
        o.surface_days = self.surface_days.unwrap_or(o.surface_days);
        o.second_look_days = self.second_look_days.unwrap_or(o.second_look_days);
        o.second_look = self.second_look.unwrap_or(o.second_look);
        if let Some(c) = &self.second_client {
            o.second_client.clone_from(c);
        }
        if let Some(s) = &self.second_source {
            o.second_source.clone_from(s);
        }
        if let Some(path) = &self.trust_roots {
            o.trust_roots.clone_from(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        flags: CrawlFlags,
    }

    fn applied(args: &[&str]) -> CrawlOptions {
        let cli = Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap();
        let mut o = CrawlOptions::default();
        cli.flags.apply(&mut o);
        o
    }

    #[test]
    fn bare_switches_mean_true_and_values_are_accepted_too() {
        let o = applied(&["--allow-private", "--no-dns"]);
        assert!(o.allow_private && o.no_dns);
        let o = applied(&["--allow-private", "false", "--no-dns=true"]);
        assert!(!o.allow_private && o.no_dns);
    }

    #[test]
    fn harvest_policy_is_a_flag_with_a_weekly_full_by_default() {
        let o = applied(&[]);
        assert_eq!((o.harvest, o.full_harvest_days), (HarvestPolicy::Delta, 7));
        let o = applied(&["--harvest", "full", "--full-harvest-days", "3"]);
        assert_eq!((o.harvest, o.full_harvest_days), (HarvestPolicy::Full, 3));
    }

    #[test]
    fn limit_has_both_names_and_unset_flags_keep_the_base() {
        assert_eq!(applied(&["--limit", "3"]).limit, 3);
        assert_eq!(applied(&["--crawl-limit", "4"]).limit, 4);
        assert_eq!(applied(&[]), CrawlOptions::default());
    }

    #[test]
    fn problems_name_the_key() {
        let bad = |f: fn(&mut CrawlOptions)| {
            let mut o = CrawlOptions::default();
            f(&mut o);
            o.problem().unwrap()
        };
        assert!(bad(|o| o.per_host = 0).contains("crawl.per_host"));
        assert!(bad(|o| o.memory_budget_mib = 10).contains("crawl.memory_budget_mib"));
        assert!(bad(|o| o.registry_rate = f64::NAN).contains("crawl.registry_rate"));
        assert!(bad(|o| o.registry_burst = 0).contains("crawl.registry_burst"));
        assert!(bad(|o| o.resolve = vec!["x=nope".into()]).contains("crawl.resolve"));
        assert!(bad(|o| o.full_harvest_days = 0).contains("crawl.full_harvest_days"));
        assert!(bad(|o| o.surface_days = 0).contains("crawl.surface_days"));
        assert!(bad(|o| o.second_look_days = 0).contains("crawl.second_look_days"));
        assert!(
            bad(|o| o.trust_roots = "/nonexistent/roots.pem".into()).contains("crawl.trust_roots")
        );
        assert!(bad(|o| o.second_client = "toolmark/2".into()).contains("crawl.second_client"));
        assert!(bad(|o| o.second_client = "no-version".into()).contains("crawl.second_client"));
        assert!(bad(|o| o.second_source = "10.0.0".into()).contains("crawl.second_source"));
        assert_eq!(CrawlOptions::default().problem(), None);
    }

    #[test]
    fn the_second_look_is_on_by_default_and_its_options_reach_the_client() {
        let o = applied(&[]);
        let mut client = toolmark_crawler::mcp::ClientConfig::default();
        o.apply_second_look(&mut client).unwrap();
        assert!(client.limits.second_look);
        assert_eq!(client.second_client.to_string(), "mcp-client/1.0.0");
        assert_eq!(client.second_source, None);
        let o = applied(&[
            "--second-look",
            "false",
            "--second-client",
            "claude-ai/0.1.0",
            "--second-source",
            "192.0.2.7",
        ]);
        o.apply_second_look(&mut client).unwrap();
        assert!(!client.limits.second_look);
        assert_eq!(client.second_client.to_string(), "claude-ai/0.1.0");
        assert_eq!(client.second_source, Some("192.0.2.7".parse().unwrap()));
        assert!(applied(&["--second-look"]).second_look);
    }

    #[test]
    fn a_pin_is_an_address_with_or_without_a_port() {
        let at = |s: &str| s.parse::<std::net::SocketAddr>().unwrap();
        assert_eq!(
            parse_pin("MCP.example=127.1.1.1").unwrap(),
            ("mcp.example".into(), at("127.1.1.1:0"))
        );
        assert_eq!(
            parse_pin("mcp.example=127.1.1.1:8443").unwrap().1,
            at("127.1.1.1:8443")
        );
        assert_eq!(parse_pin("mcp.example=::1").unwrap().1, at("[::1]:0"));
        // The name as the guard looks it up: trimmed, IDNA, no root dot.
        assert_eq!(
            parse_pin(" Bücher.example. = 127.0.0.1").unwrap().0,
            "xn--bcher-kva.example"
        );
        assert_eq!(
            parse_pin("mcp.example=[::1]:8443").unwrap().1,
            at("[::1]:8443")
        );
    }

    #[test]
    fn a_pin_without_a_name_an_address_or_with_port_zero_is_refused() {
        for bad in [
            "mcp.example",
            "=127.0.0.1",
            "mcp.example=host.example",
            "mcp.example=127.0.0.1:0",
            "mcp.example=127.0.0.1:99999",
            "127.0.0.2=127.0.0.1",
            ".=127.0.0.1",
        ] {
            let e = parse_pin(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }
}
