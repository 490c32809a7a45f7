//! The real `@modelcontextprotocol/server-everything` (when `scripts/mcp-servers` installed
//! it), one version at a time on one loopback port, run by the sandbox crate (the only one that
//! spawns processes).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use toolmark_sandbox::local::{self, LoopbackServer};

use crate::DemoError;

/// How long the real server-everything may take to start listening.
pub const EVERYTHING_START: Duration = Duration::from_secs(20);

/// The name server-everything is listed under in the replica.
pub const EVERYTHING_NAME: &str = "io.github.modelcontextprotocol/server-everything";

/// The versions `scripts/mcp-servers` installs, oldest first.
const VERSIONS: [&str; 2] = ["2025.9.25", "2026.8.31"];

/// The real server-everything, one version at a time on one port.
pub struct Everything {
    dir: PathBuf,
    port: u16,
    running: Option<LoopbackServer>,
    versions: Vec<&'static str>,
}

impl Everything {
    /// The installed versions under `dir` (oldest first), if node is there to run them.
    pub fn find(dir: &Path) -> Option<Everything> {
        let versions: Vec<&'static str> = VERSIONS
            .into_iter()
            .filter(|v| Everything::script(dir, v).is_file())
            .collect();
        let port = local::free_port().ok()?;
        (local::available("node") && !versions.is_empty()).then(|| Everything {
            dir: dir.to_owned(),
            port,
            running: None,
            versions,
        })
    }

    fn script(dir: &Path, version: &str) -> PathBuf {
        dir.join(format!("everything-{version}"))
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    }

    /// Where it serves MCP.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The version served on `day` (0 or 1): the oldest, then the newest.
    pub fn version(&self, day: usize) -> &'static str {
        if day == 0 {
            self.versions[0]
        } else {
            self.versions[self.versions.len() - 1]
        }
    }

    /// Stop what runs and start `version`, waiting until it listens.
    pub fn start(&mut self, version: &str) -> Result<(), DemoError> {
        // The old process is gone and its port free before the new one starts.
        drop(self.running.take());
        let script = Everything::script(&self.dir, version);
        let server = LoopbackServer::start(
            "node",
            [script.as_os_str(), "streamableHttp".as_ref()],
            &[("PORT", self.port.to_string())],
            self.port,
            EVERYTHING_START,
        )
        .map_err(|reason| DemoError::Everything {
            version: version.to_owned(),
            reason,
        })?;
        self.running = Some(server);
        Ok(())
    }

    /// The registry item listing it at `version`.
    pub fn item(&self, version: &str) -> Value {
        crate::world::listed(json!({
            "$schema": toolmark_standins::fleet::SERVER_SCHEMA,
            "name": EVERYTHING_NAME,
            "description": "The MCP reference test server (real, from npm), run on loopback by toolmark demo",
            "version": version,
            "remotes": [{"type": "streamable-http", "url": self.url()}],
        }))
    }
}
