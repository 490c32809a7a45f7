//! `toolmark run`'s configuration: one TOML file, overridden by environment variables, overridden
//! by flags. Every key, its default and its variable are listed in docs/operations.md (a test
//! keeps that table, `toolmark.example.toml` and [`Config::default`] equal).
//!
//! The file is `--config FILE` (or `TOOLMARK_CONFIG`); without either, `./toolmark.toml` if it
//! exists, else the defaults alone. Unknown keys are errors (a typo must not silently fall back
//! to a default). The sections are the crates' own options: `[crawl]` is
//! `toolmark_ingest::CrawlOptions`, `[http]` is `toolmark_server::HttpOptions`, each with its
//! flags ([`RunFlags`] flattens them).
//!
//! What it never does: start anything, open the data directory, install signal handlers or
//! print (the binary loads a [`Config`] and runs the service with it).

#![deny(missing_docs)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::{Deserialize, Serialize};

use toolmark_api::ApiOptions;
pub use toolmark_cosign::WitnessOptions;
use toolmark_ingest::{CrawlFlags, CrawlOptions, SweepOptions};
pub use toolmark_log::store::StorageSpec;
use toolmark_server::{HttpFlags, HttpOptions};
pub use toolmark_webhooks::{Subscription, WebhookConfig};

/// The official registry (the default of `registry` and of `toolmark crawl --registry`).
pub const OFFICIAL_REGISTRY: &str = "https://registry.modelcontextprotocol.io";

/// The origin a log gets when it is not told one (`origin`, `toolmark log init`, `crawl`).
pub const DEFAULT_ORIGIN: &str = "toolmark.localhost/log";

/// Why a configuration cannot be used (each message names the file, key or value).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("config file {}: cannot read: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: std::io::Error,
    },
    /// The file is larger than a configuration can be.
    #[error(
        "config file {}: {bytes} bytes, more than the {MAX_CONFIG_BYTES} a config can be",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// The TOML does not parse into a configuration (the message names the line and key).
    #[error("{0}")]
    Syntax(String),
    /// A file's TOML does not parse into a configuration.
    #[error("config file {}: {message}", path.display())]
    FileSyntax {
        /// The file.
        path: PathBuf,
        /// What [`ConfigError::Syntax`] says.
        message: String,
    },
    /// A value cannot work (the message names the key and why).
    #[error("{0}")]
    Invalid(String),
    /// The configuration could not be written as TOML.
    #[error("writing the configuration as TOML: {0}")]
    Write(#[from] toml::ser::Error),
}

/// The file read when neither `--config` nor `TOOLMARK_CONFIG` names one (if it exists).
pub const DEFAULT_CONFIG_FILE: &str = "toolmark.toml";

/// Largest config file read: a real one is a few hundred bytes; anything near this is a mistake.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Data directory: the log (`log/`, key in `log/private/`), observation blobs (`blobs/`),
    /// the index (`index.sqlite`), the schedules' leases and history (`schedules.sqlite`), the
    /// API's answer key (`api/answer.key`).
    pub data: PathBuf,
    /// Address the API, feeds and desk listen on.
    pub listen: SocketAddr,
    /// Public base URL used in links (answers, feeds); empty: `http://<listen>`.
    pub base_url: String,
    /// The log's origin (checkpoint first line), used when the log is created.
    pub origin: String,
    /// The MCP registry read by the crawl.
    pub registry: String,
    /// `/check` requests per minute per client address (0: unlimited).
    pub check_rate: u32,
    /// `/sensitive` requests per minute per client address (0: unlimited).
    pub sensitive_rate: u32,
    /// MiB the cache of current tool sets (what server pages show) may hold.
    pub tool_set_cache_mib: usize,
    /// When jobs run.
    pub schedules: Schedules,
    /// How the crawl runs.
    pub crawl: CrawlOptions,
    /// How the package sweep runs.
    pub packages: SweepOptions,
    /// What one HTTP client may cost (connections, timeouts, request bodies).
    pub http: HttpOptions,
    /// The witnesses that cosign the log's checkpoints, and the policy a checkpoint must meet
    /// before it is published.
    pub witnessing: WitnessOptions,
    /// Where the log and the observation documents are stored (`[storage]`).
    pub storage: StorageOptions,
    /// Webhook subscriptions (`[[webhooks]]`: `id`, `url`, `secret` or `secret_env`,
    /// `watch`); none by default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<WebhookConfig>,
}

/// Cron expressions (5 fields `min hour day month weekday`, or 6 with seconds first), UTC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Schedules {
    /// The registry crawl.
    pub crawl: String,
    /// Re-signing the current checkpoint, so its publication time shows the log is alive.
    pub heartbeat: String,
    /// The package sweep (npm and PyPI servers observed in gVisor); empty: never.
    pub package_sweep: String,
    /// Refreshing the look-alike rules' weekly download counts from npm's downloads API and
    /// pypistats into `DATA/popularity/` (read by the API when it starts); empty: never (the
    /// default: the APIs must be reachable; a weekly `"0 4 * * 1"` where they are).
    pub popularity: String,
    /// A webhook delivery pass (only when `[[webhooks]]` lists subscriptions).
    pub webhooks: String,
    /// A job's lease on its lock: renewed every third of it while the job runs, so it only
    /// lapses when the holding process died or hung; that long, a dead holder blocks others.
    pub lease_seconds: u64,
}

impl Default for Config {
    fn default() -> Self {
        let api = ApiOptions::default();
        Config {
            data: PathBuf::from("./data"),
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            base_url: String::new(),
            origin: DEFAULT_ORIGIN.to_owned(),
            registry: OFFICIAL_REGISTRY.to_owned(),
            check_rate: api.check_rate,
            sensitive_rate: api.sensitive_rate,
            tool_set_cache_mib: api.tool_set_cache_mib,
            schedules: Schedules::default(),
            crawl: CrawlOptions::default(),
            packages: SweepOptions::default(),
            http: HttpOptions::default(),
            witnessing: WitnessOptions::default(),
            storage: StorageOptions::default(),
            webhooks: Vec::new(),
        }
    }
}

impl Default for Schedules {
    fn default() -> Self {
        Schedules {
            crawl: "0 3 * * *".to_owned(),
            heartbeat: "0 * * * *".to_owned(),
            package_sweep: "0 5 * * *".to_owned(),
            popularity: String::new(),
            webhooks: "0 * * * * *".to_owned(),
            lease_seconds: 120,
        }
    }
}

/// Where the log and the documents are stored (`[storage]`): the head store (`sqlite`, or a
/// `postgres://` URL for several writers) and the object store (`file:` — the data directory —,
/// `file:PATH`, or `s3://BUCKET/PREFIX`, reached as the `AWS_*` variables say).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageOptions {
    /// The head store: `sqlite` or `postgres://USER:PASSWORD@HOST:PORT/DB`.
    pub head: String,
    /// The object store: `file:`, `file:PATH` or `s3://BUCKET/PREFIX`.
    pub objects: String,
}

impl Default for StorageOptions {
    fn default() -> Self {
        StorageOptions {
            head: "sqlite".to_owned(),
            objects: "file:".to_owned(),
        }
    }
}

impl StorageOptions {
    /// The stores these name (errors name the key: `storage.head`, `storage.objects`).
    pub fn spec(&self) -> Result<StorageSpec, ConfigError> {
        StorageSpec::parse(&self.head, &self.objects).map_err(ConfigError::Invalid)
    }
}

/// `--head` and `--objects` (`TOOLMARK_STORAGE_HEAD`, `TOOLMARK_STORAGE_OBJECTS`): the
/// `[storage]` keys as flags, for `run`, `serve`, `crawl` and the `log` subcommands.
#[derive(Args, Debug, Default, Clone)]
pub struct StorageFlags {
    /// The head store: `sqlite` (default) or a `postgres://` URL.
    #[arg(
        long,
        env = "TOOLMARK_STORAGE_HEAD",
        value_name = "sqlite|postgres://…"
    )]
    pub head: Option<String>,
    /// The object store: `file:` (the data directory, default), `file:PATH` or
    /// `s3://BUCKET/PREFIX` (endpoint, region and credentials from the `AWS_*` variables).
    #[arg(
        long,
        env = "TOOLMARK_STORAGE_OBJECTS",
        value_name = "file:PATH|s3://BUCKET/PREFIX"
    )]
    pub objects: Option<String>,
}

impl StorageFlags {
    /// These flags over `base` (the file's `[storage]`, or the defaults).
    pub fn apply(&self, base: &mut StorageOptions) {
        if let Some(h) = &self.head {
            base.head.clone_from(h);
        }
        if let Some(o) = &self.objects {
            base.objects.clone_from(o);
        }
    }

    /// The stores these flags name over the defaults.
    pub fn spec(&self) -> Result<StorageSpec, ConfigError> {
        let mut o = StorageOptions::default();
        self.apply(&mut o);
        o.spec()
    }

    /// Whether either flag (or variable) was given.
    pub fn given(&self) -> bool {
        self.head.is_some() || self.objects.is_some()
    }
}

/// `toolmark serve`'s API knobs (what `run` reads from its file, variables and [`RunFlags`]):
/// the rate limits, the tool-set cache, and the witnesses whose cosignatures the API reports.
#[derive(Args, Debug, Clone)]
pub struct ApiFlags {
    /// `/check` requests per minute per client address (0: no limit, e.g. when a reverse proxy
    /// limits); a client's bucket holds 8⅓ minutes of it (500 at the default: one scan).
    #[arg(long, default_value_t = ApiOptions::default().check_rate)]
    pub check_rate: u32,
    /// `/sensitive` requests per minute per client address (0: no limit); bursts of a third
    /// as many.
    #[arg(long, default_value_t = ApiOptions::default().sensitive_rate)]
    pub sensitive_rate: u32,
    /// MiB the cache of current tool sets (what server pages show) may hold.
    #[arg(long, default_value_t = ApiOptions::default().tool_set_cache_mib)]
    pub tool_set_cache_mib: usize,
    /// A witness whose cosignatures the API reports, `VKEY@URL` (repeat; as `run --witness`).
    #[arg(long = "witness")]
    pub witnesses: Vec<String>,
    /// How many of the witnesses the policy needs (default 1).
    #[arg(long)]
    pub witness_quorum: Option<usize>,
    /// A C2SP tlog-policy file instead of --witness and --witness-quorum.
    #[arg(long)]
    pub witness_policy: Option<PathBuf>,
}

impl ApiFlags {
    /// The API's options these flags give.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] when the witnesses give no policy (both a list and a file, a
    /// key or file that does not parse).
    pub fn options(&self) -> Result<ApiOptions, ConfigError> {
        let witnesses = WitnessOptions {
            witnesses: self.witnesses.clone(),
            quorum: self.witness_quorum,
            policy_file: self.witness_policy.clone(),
            ..WitnessOptions::default()
        };
        Ok(ApiOptions {
            check_rate: self.check_rate,
            sensitive_rate: self.sensitive_rate,
            tool_set_cache_mib: self.tool_set_cache_mib,
            witnesses: witnesses
                .policy()
                .map_err(ConfigError::Invalid)?
                .map(std::sync::Arc::new),
        })
    }
}

/// `toolmark run`'s flags; each also reads its environment variable (flag wins).
#[derive(Args, Debug, Default)]
pub struct RunFlags {
    /// The TOML configuration file (default ./toolmark.toml when it exists).
    #[arg(long, env = "TOOLMARK_CONFIG")]
    pub config: Option<PathBuf>,
    /// Print the effective configuration (file, environment and flags applied) and exit.
    #[arg(long)]
    pub print_config: bool,
    /// Data directory.
    #[arg(long, env = "TOOLMARK_DATA")]
    pub data: Option<PathBuf>,
    /// Listen address.
    #[arg(long, env = "TOOLMARK_LISTEN")]
    pub listen: Option<String>,
    /// Public base URL.
    #[arg(long, env = "TOOLMARK_BASE_URL")]
    pub base_url: Option<String>,
    /// Log origin (used when the log is created).
    #[arg(long, env = "TOOLMARK_ORIGIN")]
    pub origin: Option<String>,
    /// Registry base URL.
    #[arg(long, env = "TOOLMARK_REGISTRY")]
    pub registry: Option<String>,
    /// `/check` requests per minute per client (0: unlimited).
    #[arg(long, env = "TOOLMARK_CHECK_RATE")]
    pub check_rate: Option<u32>,
    /// `/sensitive` requests per minute per client (0: unlimited).
    #[arg(long, env = "TOOLMARK_SENSITIVE_RATE")]
    pub sensitive_rate: Option<u32>,
    /// MiB of the tool-set cache.
    #[arg(long, env = "TOOLMARK_TOOL_SET_CACHE_MIB")]
    pub tool_set_cache_mib: Option<usize>,
    /// Cron expression of the crawl.
    #[arg(long, env = "TOOLMARK_CRAWL_SCHEDULE")]
    pub crawl_schedule: Option<String>,
    /// Cron expression of the checkpoint heartbeat.
    #[arg(long, env = "TOOLMARK_HEARTBEAT_SCHEDULE")]
    pub heartbeat_schedule: Option<String>,
    /// Cron expression of the package sweep (empty: never).
    #[arg(long, env = "TOOLMARK_PACKAGE_SWEEP_SCHEDULE")]
    pub package_sweep_schedule: Option<String>,
    /// Cron expression of the popularity refresh (empty: never).
    #[arg(long, env = "TOOLMARK_POPULARITY_SCHEDULE")]
    pub popularity_schedule: Option<String>,
    /// Cron expression of the webhook delivery pass.
    #[arg(long, env = "TOOLMARK_WEBHOOKS_SCHEDULE")]
    pub webhooks_schedule: Option<String>,
    /// Versions the package sweep observes per run at most.
    #[arg(long, env = "TOOLMARK_PACKAGE_SWEEP_CAP")]
    pub package_sweep_cap: Option<usize>,
    /// Sandboxes the package sweep runs at once.
    #[arg(long, env = "TOOLMARK_PACKAGE_SWEEP_CONCURRENCY")]
    pub package_sweep_concurrency: Option<usize>,
    /// A job's lease on its lock, in seconds.
    #[arg(long, env = "TOOLMARK_LEASE_SECONDS")]
    pub lease_seconds: Option<u64>,
    /// A witness that cosigns the log's checkpoints, `VKEY@URL` (repeat for more; replaces the
    /// file's list).
    #[arg(long = "witness", env = "TOOLMARK_WITNESSES", value_delimiter = ',')]
    pub witnesses: Vec<String>,
    /// How many witnesses must cosign a checkpoint before it is published.
    #[arg(long, env = "TOOLMARK_WITNESS_QUORUM")]
    pub witness_quorum: Option<usize>,
    /// A C2SP tlog-policy file (instead of --witness and --witness-quorum).
    #[arg(long, env = "TOOLMARK_WITNESS_POLICY")]
    pub witness_policy: Option<PathBuf>,
    /// Seconds one witness submission may take.
    #[arg(long, env = "TOOLMARK_WITNESS_TIMEOUT")]
    pub witness_timeout: Option<u64>,
    /// Least seconds between two witness rounds started by new batches.
    #[arg(long, env = "TOOLMARK_WITNESS_MIN_INTERVAL")]
    pub witness_min_interval: Option<u64>,
    /// The `[crawl]` knobs.
    #[command(flatten)]
    pub crawl: CrawlFlags,
    /// The `[http]` limits.
    #[command(flatten)]
    pub http: HttpFlags,
    /// The `[storage]` stores.
    #[command(flatten)]
    pub storage: StorageFlags,
}

impl Config {
    /// The effective configuration for `args`: file (or defaults), then environment and flags.
    pub fn load(args: &RunFlags) -> Result<Config, ConfigError> {
        let mut config = match &args.config {
            Some(path) => Config::from_file(path)?,
            None if Path::new(DEFAULT_CONFIG_FILE).exists() => {
                Config::from_file(Path::new(DEFAULT_CONFIG_FILE))?
            }
            None => Config::default(),
        };
        config.apply(args)?;
        config.validate()?;
        Ok(config)
    }

    /// Parse a config file (a clear error naming the file, line and key on any mistake).
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let unreadable = |reason| ConfigError::Read {
            path: path.to_owned(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(unreadable)?;
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge {
                path: path.to_owned(),
                bytes: meta.len(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(unreadable)?;
        Config::parse(&text).map_err(|e| ConfigError::FileSyntax {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// Parse TOML text.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string().trim_end().to_owned()))
    }

    fn apply(&mut self, a: &RunFlags) -> Result<(), ConfigError> {
        if let Some(v) = &a.data {
            self.data = v.clone();
        }
        if let Some(v) = &a.listen {
            self.listen = v.parse().map_err(|e| {
                ConfigError::Invalid(format!("listen address {v:?} is not IP:PORT: {e}"))
            })?;
        }
        let strings = [
            (&a.base_url, &mut self.base_url),
            (&a.origin, &mut self.origin),
            (&a.registry, &mut self.registry),
            (&a.crawl_schedule, &mut self.schedules.crawl),
            (&a.heartbeat_schedule, &mut self.schedules.heartbeat),
            (&a.package_sweep_schedule, &mut self.schedules.package_sweep),
            (&a.popularity_schedule, &mut self.schedules.popularity),
            (&a.webhooks_schedule, &mut self.schedules.webhooks),
        ];
        for (from, to) in strings {
            if let Some(v) = from {
                to.clone_from(v);
            }
        }
        self.check_rate = a.check_rate.unwrap_or(self.check_rate);
        self.sensitive_rate = a.sensitive_rate.unwrap_or(self.sensitive_rate);
        self.tool_set_cache_mib = a.tool_set_cache_mib.unwrap_or(self.tool_set_cache_mib);
        a.crawl.apply(&mut self.crawl);
        self.packages.cap = a.package_sweep_cap.unwrap_or(self.packages.cap);
        self.packages.concurrency = a
            .package_sweep_concurrency
            .unwrap_or(self.packages.concurrency);
        self.schedules.lease_seconds = a.lease_seconds.unwrap_or(self.schedules.lease_seconds);
        a.http.apply(&mut self.http);
        a.storage.apply(&mut self.storage);
        if !a.witnesses.is_empty() {
            self.witnessing.witnesses.clone_from(&a.witnesses);
        }
        if a.witness_quorum.is_some() {
            self.witnessing.quorum = a.witness_quorum;
        }
        if a.witness_policy.is_some() {
            self.witnessing.policy_file.clone_from(&a.witness_policy);
        }
        self.witnessing.timeout_seconds =
            a.witness_timeout.unwrap_or(self.witnessing.timeout_seconds);
        self.witnessing.min_interval_seconds = a
            .witness_min_interval
            .unwrap_or(self.witnessing.min_interval_seconds);
        Ok(())
    }

    /// Refuse values that cannot work (each error says which key and why).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |message: String| Err(ConfigError::Invalid(message));
        for (key, expr) in [
            ("schedules.crawl", &self.schedules.crawl),
            ("schedules.heartbeat", &self.schedules.heartbeat),
            ("schedules.package_sweep", &self.schedules.package_sweep),
            ("schedules.popularity", &self.schedules.popularity),
            ("schedules.webhooks", &self.schedules.webhooks),
        ] {
            let optional = matches!(key, "schedules.package_sweep" | "schedules.popularity");
            if optional && expr.is_empty() {
                continue;
            }
            toolmark_schedules::JobSpec::new(key, expr)
                .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        }
        let registry = url::Url::parse(&self.registry).map_err(|e| {
            ConfigError::Invalid(format!("registry {:?} is not a URL: {e}", self.registry))
        })?;
        if !matches!(registry.scheme(), "http" | "https") {
            return invalid(format!(
                "registry {:?} is not an http(s) URL",
                self.registry
            ));
        }
        if !self.base_url.is_empty() {
            let base = url::Url::parse(&self.base_url).map_err(|e| {
                ConfigError::Invalid(format!("base_url {:?} is not a URL: {e}", self.base_url))
            })?;
            if !matches!(base.scheme(), "http" | "https") {
                return invalid(format!(
                    "base_url {:?} is not an http(s) URL",
                    self.base_url
                ));
            }
        }
        if self.origin.is_empty() || self.origin.contains(char::is_whitespace) {
            return invalid(format!(
                "origin {:?} must be non-empty without spaces",
                self.origin
            ));
        }
        if !(3..=86_400).contains(&self.schedules.lease_seconds) {
            return invalid(format!(
                "schedules.lease_seconds must be 3 to 86400, not {}",
                self.schedules.lease_seconds
            ));
        }
        self.subscriptions()?;
        self.witness_policy()?;
        self.storage.spec()?;
        if !(1..=120).contains(&self.witnessing.timeout_seconds) {
            return invalid(format!(
                "witnessing.timeout_seconds must be 1 to 120, not {}",
                self.witnessing.timeout_seconds
            ));
        }
        if self.witnessing.min_interval_seconds > 86_400 {
            return invalid(format!(
                "witnessing.min_interval_seconds must be at most 86400, not {}",
                self.witnessing.min_interval_seconds
            ));
        }
        if let Some(problem) = self
            .crawl
            .problem()
            .or_else(|| self.packages.problem())
            .or_else(|| self.http.problem())
        {
            return invalid(problem);
        }
        Ok(())
    }

    /// The webhook subscriptions, validated (secrets named by `secret_env` read from the
    /// environment); errors name the key (`webhooks[1].url`).
    pub fn subscriptions(&self) -> Result<Vec<Subscription>, ConfigError> {
        toolmark_webhooks::validate(&self.webhooks, |var| std::env::var(var).ok())
            .map_err(|e| ConfigError::Invalid(e.to_string()))
    }

    /// The witness policy (`None`: no witness, the log publishes its checkpoints itself); the
    /// error names the key.
    pub fn witness_policy(
        &self,
    ) -> Result<Option<toolmark_log::policy::WitnessPolicy>, ConfigError> {
        self.witnessing.policy().map_err(ConfigError::Invalid)
    }

    /// The public base URL (links in answers and feeds).
    pub fn public_base(&self, bound: SocketAddr) -> String {
        if self.base_url.is_empty() {
            format!("http://{bound}")
        } else {
            self.base_url.trim_end_matches('/').to_owned()
        }
    }

    /// The API's rate limits, cache and witness policy (an invalid policy, which
    /// [`Config::validate`] refuses, gives none).
    pub fn api_options(&self) -> ApiOptions {
        ApiOptions {
            check_rate: self.check_rate,
            sensitive_rate: self.sensitive_rate,
            tool_set_cache_mib: self.tool_set_cache_mib,
            witnesses: self
                .witness_policy()
                .ok()
                .flatten()
                .map(std::sync::Arc::new),
        }
    }

    /// The configuration as TOML (what `--print-config` shows).
    pub fn to_toml(&self) -> Result<String, ConfigError> {
        Ok(toml::to_string(self)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_s_api_flags_default_to_the_api_s_options_and_refuse_two_witness_sources() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            api: ApiFlags,
        }
        let parse = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
                .unwrap()
                .api
        };
        let options = parse(&[]).options().unwrap();
        assert_eq!(options.check_rate, ApiOptions::default().check_rate);
        assert!(options.witnesses.is_none());
        let both = parse(&[
            "--witness",
            "w+1+AQ==@https://w.example",
            "--witness-policy",
            "p",
        ]);
        assert!(matches!(both.options(), Err(ConfigError::Invalid(_))));
    }

    #[test]
    fn the_example_file_is_the_defaults() {
        let text = include_str!("../../toolmark.example.toml");
        assert_eq!(Config::parse(text).unwrap(), Config::default());
        Config::default().validate().unwrap();
    }

    #[test]
    fn the_popularity_schedule_is_optional_and_checked_when_set() {
        let mut c = Config::default();
        assert_eq!(c.schedules.popularity, "");
        c.validate().unwrap();
        c.schedules.popularity = "0 4 * * 1".into();
        c.validate().unwrap();
        c.schedules.popularity = "every monday".into();
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("schedules.popularity")
        );
    }

    /// docs/operations.md's table lists every key with its default, and no other.
    #[test]
    fn the_operations_doc_lists_every_key_and_default() {
        let doc = include_str!("../../docs/operations.md");
        let section = doc
            .split("## Configuration")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap();
        let documented: std::collections::BTreeMap<String, String> = section
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (
                    cells[1].trim_matches('`').to_owned(),
                    cells[2].trim_matches('`').to_owned(),
                )
            })
            .collect();
        let defaults: toml::Table = toml::from_str(&Config::default().to_toml().unwrap()).unwrap();
        let mut actual = std::collections::BTreeMap::new();
        for (key, value) in &defaults {
            match value {
                toml::Value::Table(t) => {
                    for (k, v) in t {
                        actual.insert(format!("{key}.{k}"), v.to_string());
                    }
                }
                v => {
                    actual.insert(key.clone(), v.to_string());
                }
            }
        }
        assert_eq!(documented, actual);
    }

    #[test]
    fn an_empty_file_is_the_defaults_and_printing_round_trips() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
        let mut c = Config::default();
        c.crawl.limit = 5;
        c.schedules.crawl = "*/5 * * * *".into();
        assert_eq!(Config::parse(&c.to_toml().unwrap()).unwrap(), c);
    }

    #[test]
    fn mistakes_are_named() {
        let e = Config::parse("dta = \"x\"").unwrap_err().to_string();
        assert!(e.contains("unknown field") && e.contains("dta"), "{e}");
        let e = Config::parse("[crawl]\nper_host = \"two\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("per_host") || e.contains("line 2"), "{e}");
        let e = Config::parse("listen = \"localhost\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("listen") || e.contains("line 1"), "{e}");
        let mut c = Config::default();
        c.schedules.crawl = "every day".into();
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("schedules.crawl") && e.contains("every day"),
            "{e}"
        );
        let c = Config {
            registry: "ftp://x".into(),
            ..Config::default()
        };
        assert!(c.validate().is_err());
        let mut c = Config::default();
        c.crawl.resolve = vec!["a.example=not-an-ip".into()];
        assert!(c.validate().unwrap_err().to_string().contains("a.example"));
    }

    #[test]
    fn webhook_subscriptions_are_read_and_validated_naming_the_key() {
        let ok = format!(
            "[[webhooks]]\nid = \"soc\"\nurl = \"https://hooks.example.com/t\"\nsecret = \"{}\"\n",
            "k".repeat(32)
        );
        let c = Config::parse(&ok).unwrap();
        c.validate().unwrap();
        assert_eq!(
            c.subscriptions().unwrap()[0].url,
            "https://hooks.example.com/t"
        );
        assert_eq!(Config::parse(&c.to_toml().unwrap()).unwrap(), c);
        let http = Config::parse(&ok.replace("https://", "http://")).unwrap();
        let e = http.validate().unwrap_err().to_string();
        assert!(e.contains("webhooks[0].url") && e.contains("https"), "{e}");
        let short = Config::parse(&ok.replace(&"k".repeat(32), "short")).unwrap();
        let e = short.validate().unwrap_err().to_string();
        assert!(e.contains("webhooks[0].secret") && e.contains("32"), "{e}");
        let e = Config::parse(&format!("{ok}colour = 1\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn flags_override_the_file() {
        let mut c = Config::parse("data = \"/srv/toolmark\"\ncheck_rate = 10\n").unwrap();
        c.apply(&RunFlags {
            check_rate: Some(0),
            crawl_schedule: Some("0 4 * * *".into()),
            listen: Some("127.0.0.1:9".into()),
            ..RunFlags::default()
        })
        .unwrap();
        assert_eq!(c.data, PathBuf::from("/srv/toolmark"));
        assert_eq!(c.check_rate, 0);
        assert_eq!(c.schedules.crawl, "0 4 * * *");
        assert_eq!(c.listen.port(), 9);
        assert!(
            c.apply(&RunFlags {
                listen: Some("nowhere".into()),
                ..RunFlags::default()
            })
            .is_err()
        );
    }
}
