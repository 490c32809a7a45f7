//! The connection layer's limits as an operator sets them, defined once: [`HttpOptions`] is the
//! `[http]` section of `toolmark run`'s TOML (serde; whole seconds and MiB), [`HttpFlags`] the
//! same knobs as flags with environment variables (clap, flattened into `toolmark serve` and
//! `toolmark run`), applied over a file's values or the defaults; [`HttpOptions::limits`] turns
//! them into [`Limits`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::limits::{Limits, MAX_REQUEST_BODY};

/// The connection layer's limits (`toolmark_server::limits`; docs/operations.md, "Limits").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpOptions {
    /// Connections open at once overall (further kept 512 below the open-file limit).
    pub max_connections: usize,
    /// Connections open at once per client (IPv4 address, IPv6 /64).
    pub max_connections_per_client: usize,
    /// HTTP/2 streams open at once per connection.
    pub max_concurrent_streams: u32,
    /// Seconds a client has to send a request's headers (also HTTP/1.1's keep-alive idle).
    pub header_read_timeout_seconds: u64,
    /// Seconds from a request's headers to its response's headers (body upload included).
    pub request_timeout_seconds: u64,
    /// Seconds a request body may pause between two pieces.
    pub body_idle_timeout_seconds: u64,
    /// Seconds a response write may make no progress before the connection is closed.
    pub write_timeout_seconds: u64,
    /// Seconds a connection may ask for nothing while nothing is being sent to it.
    pub idle_timeout_seconds: u64,
    /// MiB of request bodies all requests may hold at once (over it: 503 + Retry-After).
    pub request_body_budget_mib: usize,
    /// Seconds graceful shutdown waits for open connections before dropping them.
    pub shutdown_deadline_seconds: u64,
}

impl Default for HttpOptions {
    fn default() -> Self {
        let l = Limits::default();
        HttpOptions {
            max_connections: l.max_connections,
            max_connections_per_client: l.max_connections_per_client,
            max_concurrent_streams: l.max_concurrent_streams,
            header_read_timeout_seconds: l.header_read_timeout.as_secs(),
            request_timeout_seconds: l.request_timeout.as_secs(),
            body_idle_timeout_seconds: l.body_idle_timeout.as_secs(),
            write_timeout_seconds: l.write_timeout.as_secs(),
            idle_timeout_seconds: l.idle_timeout.as_secs(),
            request_body_budget_mib: l.request_body_budget / (1024 * 1024),
            shutdown_deadline_seconds: l.shutdown_deadline.as_secs(),
        }
    }
}

impl HttpOptions {
    /// Why these options cannot work (the message names the key), if they cannot.
    pub fn problem(&self) -> Option<String> {
        let at_least_one = [
            ("http.max_connections", self.max_connections as u64),
            (
                "http.max_connections_per_client",
                self.max_connections_per_client as u64,
            ),
            (
                "http.max_concurrent_streams",
                u64::from(self.max_concurrent_streams),
            ),
            (
                "http.header_read_timeout_seconds",
                self.header_read_timeout_seconds,
            ),
            ("http.request_timeout_seconds", self.request_timeout_seconds),
            (
                "http.body_idle_timeout_seconds",
                self.body_idle_timeout_seconds,
            ),
            ("http.write_timeout_seconds", self.write_timeout_seconds),
            ("http.idle_timeout_seconds", self.idle_timeout_seconds),
            (
                "http.request_body_budget_mib",
                self.request_body_budget_mib as u64,
            ),
        ];
        if let Some((key, _)) = at_least_one.iter().find(|(_, v)| *v == 0) {
            return Some(format!("{key} must be at least 1"));
        }
        // Below 3 MiB the large-body pool could not hold one 2 MiB body.
        if !(3..=4095).contains(&self.request_body_budget_mib) {
            return Some(format!(
                "http.request_body_budget_mib must be 3 to 4095, not {}",
                self.request_body_budget_mib
            ));
        }
        None
    }

    /// The connection layer's limits.
    pub fn limits(&self) -> Limits {
        Limits {
            header_read_timeout: Duration::from_secs(self.header_read_timeout_seconds),
            request_timeout: Duration::from_secs(self.request_timeout_seconds),
            body_idle_timeout: Duration::from_secs(self.body_idle_timeout_seconds),
            write_timeout: Duration::from_secs(self.write_timeout_seconds),
            idle_timeout: Duration::from_secs(self.idle_timeout_seconds),
            max_connections: self.max_connections,
            max_connections_per_client: self.max_connections_per_client,
            max_concurrent_streams: self.max_concurrent_streams,
            request_body_budget: self.request_body_budget_mib * 1024 * 1024,
            max_request_body: MAX_REQUEST_BODY,
            shutdown_deadline: Duration::from_secs(self.shutdown_deadline_seconds),
        }
    }
}

/// The `[http]` keys as flags, each also read from its environment variable (a flag wins);
/// shared by `toolmark serve` and `toolmark run` (`#[command(flatten)]`).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct HttpFlags {
    /// Connections open at once overall.
    #[arg(long, env = "TOOLMARK_HTTP_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Connections open at once per client address (IPv6: per /64).
    #[arg(long, env = "TOOLMARK_HTTP_MAX_CONNECTIONS_PER_CLIENT")]
    pub max_connections_per_client: Option<usize>,
    /// HTTP/2 streams per connection.
    #[arg(long, env = "TOOLMARK_HTTP_MAX_CONCURRENT_STREAMS")]
    pub max_concurrent_streams: Option<u32>,
    /// Seconds to send a request's headers.
    #[arg(long, env = "TOOLMARK_HTTP_HEADER_READ_TIMEOUT")]
    pub header_read_timeout: Option<u64>,
    /// Seconds from a request's headers to its response's.
    #[arg(long, env = "TOOLMARK_HTTP_REQUEST_TIMEOUT")]
    pub request_timeout: Option<u64>,
    /// Seconds a request body may pause.
    #[arg(long, env = "TOOLMARK_HTTP_BODY_IDLE_TIMEOUT")]
    pub body_idle_timeout: Option<u64>,
    /// Seconds a response write may make no progress.
    #[arg(long, env = "TOOLMARK_HTTP_WRITE_TIMEOUT")]
    pub write_timeout: Option<u64>,
    /// Seconds a connection may move no bytes.
    #[arg(long, env = "TOOLMARK_HTTP_IDLE_TIMEOUT")]
    pub idle_timeout: Option<u64>,
    /// MiB of request bodies in flight at once.
    #[arg(long, env = "TOOLMARK_HTTP_REQUEST_BODY_BUDGET_MIB")]
    pub request_body_budget_mib: Option<usize>,
    /// Seconds shutdown waits for open connections.
    #[arg(long, env = "TOOLMARK_HTTP_SHUTDOWN_DEADLINE")]
    pub shutdown_deadline: Option<u64>,
}

impl HttpFlags {
    /// `options` with every flag (or variable) that is set applied over it.
    pub fn apply(&self, options: &mut HttpOptions) {
        let o = options;
        o.max_connections = self.max_connections.unwrap_or(o.max_connections);
        o.max_connections_per_client = self
            .max_connections_per_client
            .unwrap_or(o.max_connections_per_client);
        o.max_concurrent_streams = self
            .max_concurrent_streams
            .unwrap_or(o.max_concurrent_streams);
        let seconds = [
            (self.header_read_timeout, &mut o.header_read_timeout_seconds),
            (self.request_timeout, &mut o.request_timeout_seconds),
            (self.body_idle_timeout, &mut o.body_idle_timeout_seconds),
            (self.write_timeout, &mut o.write_timeout_seconds),
            (self.idle_timeout, &mut o.idle_timeout_seconds),
            (self.shutdown_deadline, &mut o.shutdown_deadline_seconds),
        ];
        for (from, to) in seconds {
            *to = from.unwrap_or(*to);
        }
        o.request_body_budget_mib = self
            .request_body_budget_mib
            .unwrap_or(o.request_body_budget_mib);
    }
}

/// HTTP settings that cannot work: [`HttpOptions::problem`]'s message, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadHttpOptions(pub String);

impl HttpFlags {
    /// The limits of the default options with these flags applied (what `toolmark serve` and
    /// `toolmark witness` serve under).
    ///
    /// # Errors
    ///
    /// [`BadHttpOptions`] when they cannot work.
    pub fn limits(&self) -> Result<Limits, BadHttpOptions> {
        let mut options = HttpOptions::default();
        self.apply(&mut options);
        match options.problem() {
            Some(problem) => Err(BadHttpOptions(problem)),
            None => Ok(options.limits()),
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
        flags: HttpFlags,
    }

    fn applied(args: &[&str]) -> HttpOptions {
        let cli = Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap();
        let mut o = HttpOptions::default();
        cli.flags.apply(&mut o);
        o
    }

    #[test]
    fn the_defaults_are_the_named_limits() {
        assert_eq!(HttpOptions::default().limits(), Limits::default());
        assert_eq!(HttpOptions::default().problem(), None);
    }

    #[test]
    fn flags_give_the_limits_or_the_problem_naming_the_key() {
        let cli = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap()
        };
        let limits = cli(&["--max-connections", "7"]).flags.limits().unwrap();
        assert_eq!(limits.max_connections, 7);
        let bad = cli(&["--max-connections", "0"]).flags.limits().unwrap_err();
        assert!(bad.0.contains("http.max_connections"), "{bad}");
    }

    #[test]
    fn set_flags_override_and_unset_flags_keep_the_base() {
        let o = applied(&["--max-connections", "7", "--shutdown-deadline", "0"]);
        assert_eq!((o.max_connections, o.shutdown_deadline_seconds), (7, 0));
        assert_eq!(applied(&[]), HttpOptions::default());
    }

    #[test]
    fn problems_name_the_key() {
        let bad = |f: fn(&mut HttpOptions)| {
            let mut o = HttpOptions::default();
            f(&mut o);
            o.problem().unwrap()
        };
        assert!(bad(|o| o.max_connections = 0).contains("http.max_connections"));
        assert!(bad(|o| o.idle_timeout_seconds = 0).contains("http.idle_timeout_seconds"));
        assert!(bad(|o| o.request_body_budget_mib = 2).contains("3 to 4095"));
    }
}
