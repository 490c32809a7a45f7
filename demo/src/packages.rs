//! The package half of the demo: a few real npm and PyPI MCP servers, from the files
//! `scripts/mcp-servers` downloads, listed in the registry replica, served by a loopback npm
//! registry and PyPI index stand-in ([`toolmark_standins::packages`]) and, when gVisor can run
//! (`runsc` installed, the process root), swept once after the crawls by the same
//! `toolmark_ingest::run_sweep` as `toolmark package sweep`.
//!
//! The registry entries are made up (the bundled registry days list none of these servers):
//! their names follow server-everything's (`io.github.modelcontextprotocol/…`); the packages,
//! versions and files are the real ones. The sandbox installs their dependencies offline: npm
//! from the cache `scripts/mcp-servers` warmed (`packages/npm-cache`), pip from its wheels
//! (`packages/wheels`); nothing is asked of the real registries.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolmark_sandbox::observe::{Limits, Observer};
use toolmark_sandbox::prepare::{NpmOptions, PYPI_SIMPLE, PipOptions};
use toolmark_standins::packages::{PackageFile, Served};

/// One real server the demo sweeps when its file is installed.
#[derive(Debug, Clone, Copy)]
pub struct DemoPackage {
    /// Its name in the replica (made up, like server-everything's).
    pub server: &'static str,
    /// What the replica says it is.
    pub description: &'static str,
    /// `npm` or `pypi`.
    pub ecosystem: &'static str,
    /// The package's name in its registry.
    pub identifier: &'static str,
}

/// The servers swept, at most [`MAX_SWEPT`] of those installed: the npm ones
/// `scripts/mcp-servers` packs (server-everything runs as a remote already) and its two PyPI
/// wheels. Each takes 5–15 s in gVisor (docs/operations.md).
pub const PACKAGES: [DemoPackage; 3] = [
    DemoPackage {
        server: "io.github.modelcontextprotocol/server-memory",
        description: "Knowledge-graph memory (the real npm package, observed in gVisor by toolmark demo)",
        ecosystem: "npm",
        identifier: "@modelcontextprotocol/server-memory",
    },
    DemoPackage {
        server: "io.github.modelcontextprotocol/server-sequential-thinking",
        description: "Sequential thinking (the real npm package, observed in gVisor by toolmark demo)",
        ecosystem: "npm",
        identifier: "@modelcontextprotocol/server-sequential-thinking",
    },
    DemoPackage {
        server: "io.github.modelcontextprotocol/server-time",
        description: "Time and time zones (the real PyPI package, observed in gVisor by toolmark demo)",
        ecosystem: "pypi",
        identifier: "mcp-server-time",
    },
];

/// Versions one demo sweeps at most (the whole demo stays within a minute).
pub const MAX_SWEPT: usize = PACKAGES.len();

/// Sandboxes at once in the demo's sweep (the sweep's default).
pub const DEMO_CONCURRENCY: usize = toolmark_ingest::sweep::DEFAULT_CONCURRENCY;

/// The environment variable that hides gVisor from the demo (`--no-sandbox`): packages stay
/// unobserved, as on a machine without runsc.
pub const NO_SANDBOX_ENV: &str = "TOOLMARK_DEMO_NO_SANDBOX";

/// Why the demo's packages stay unobserved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unobserved {
    /// `scripts/mcp-servers` has not downloaded their files.
    NotInstalled,
    /// `--no-sandbox` (or [`NO_SANDBOX_ENV`]) hid gVisor.
    Hidden,
    /// No `runsc` in the places the sandbox looks.
    NoRunsc,
    /// runsc needs root; the demo runs as another user.
    NotRoot,
    /// The sweep ran and failed (the reason).
    Failed(String),
}

impl Unobserved {
    /// Why, for one line of the demo's output.
    pub fn why(&self) -> String {
        match self {
            Unobserved::NotInstalled => {
                "the real servers' files are not installed (scripts/mcp-servers)".into()
            }
            Unobserved::Hidden => "gVisor hidden by --no-sandbox".into(),
            Unobserved::NoRunsc => "runsc (gVisor) not found".into(),
            Unobserved::NotRoot => "not run as root (runsc needs it)".into(),
            Unobserved::Failed(why) => format!("the sweep failed: {why}"),
        }
    }

    /// What to do to see them swept.
    pub fn how(&self) -> &'static str {
        match self {
            Unobserved::NotInstalled => {
                "run scripts/mcp-servers, install Debian's runsc and run the demo as root"
            }
            Unobserved::Hidden => "run the demo without --no-sandbox",
            Unobserved::NoRunsc => "install Debian's runsc and run the demo as root",
            Unobserved::NotRoot => "run the demo as root",
            Unobserved::Failed(_) => "see docs/sandbox.md",
        }
    }
}

/// The demo's packages whose files are installed under `servers` (`scripts/mcp-servers`'s
/// directory), as the stand-in serves them.
pub fn installed(servers: &Path) -> Vec<(DemoPackage, PackageFile)> {
    let dir = servers.join("packages");
    let wheels: Vec<PathBuf> = std::fs::read_dir(dir.join("wheels"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    let mut out = Vec::new();
    for package in PACKAGES {
        let file = match package.ecosystem {
            "npm" => {
                // `npm pack` names `@scope/name@v` `scope-name-v.tgz`.
                let stem = package.identifier.trim_start_matches('@').replace('/', "-");
                newest(&dir, &format!("{stem}-"), ".tgz").map(PackageFile::Npm)
            }
            _ => {
                let project = toolmark_crawler::packages::pep503(package.identifier);
                let mut of_project: Vec<&PathBuf> = wheels
                    .iter()
                    .filter(|p| {
                        let name = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
                        name.split('-')
                            .next()
                            .is_some_and(|n| toolmark_crawler::packages::pep503(n) == project)
                    })
                    .collect();
                of_project.sort();
                of_project.pop().map(|path| PackageFile::Wheel {
                    project,
                    path: path.clone(),
                })
            }
        };
        if let Some(file) = file {
            out.push((package, file));
        }
    }
    out.truncate(MAX_SWEPT);
    out
}

/// The last (by name) file of `dir` named `<prefix>…<suffix>`.
fn newest(dir: &Path, prefix: &str, suffix: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(prefix) && f.ends_with(suffix))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Whether the sandbox can run here: `Ok` with runsc's path, or why not. `hidden`: the demo
/// was told not to use it.
pub fn sandbox(hidden: bool) -> Result<PathBuf, Unobserved> {
    if hidden {
        return Err(Unobserved::Hidden);
    }
    let runsc = toolmark_sandbox::runsc::runsc_path().ok_or(Unobserved::NoRunsc)?;
    if !rustix::process::geteuid().is_root() {
        return Err(Unobserved::NotRoot);
    }
    Ok(runsc)
}

/// The registry item listing `package` as `served` (a made-up entry: see the module's docs).
pub fn item(package: &DemoPackage, served: &Served) -> Value {
    crate::world::listed(json!({
        "$schema": toolmark_standins::fleet::SERVER_SCHEMA,
        "name": package.server,
        "description": package.description,
        "version": served.version,
        "repository": {"url": "https://github.com/modelcontextprotocol/servers", "source": "github"},
        "packages": [{
            "registryType": package.ecosystem,
            "identifier": package.identifier,
            "version": served.version,
            "transport": {"type": "stdio"},
        }],
    }))
}

/// The target string the sweep knows `package` by (`npm:<name>`, `pypi:<name>`).
pub fn target(package: &DemoPackage) -> String {
    format!("{}:{}", package.ecosystem, package.identifier)
}

/// The observer of the demo's sweep: gVisor at `runsc`, npm installing from the cache
/// `scripts/mcp-servers` warmed and pip from its wheels (both offline: the registry npm keys its
/// cache by is named, never asked), runs under `work`, the probe if built.
pub fn observer(runsc: PathBuf, servers: &Path, work: &Path, probe: Option<PathBuf>) -> Observer {
    let packages = servers.join("packages");
    Observer {
        runsc: Some(runsc),
        npm: NpmOptions::new(
            "https://registry.npmjs.org/",
            packages.join("npm-cache"),
            true,
        ),
        pip: PipOptions::new(PYPI_SIMPLE, work.join("pip-cache")).offline(packages.join("wheels")),
        work: work.to_owned(),
        limits: Limits::default(),
        keep: false,
        probe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_gvisor_is_unobserved_whatever_is_installed() {
        assert_eq!(sandbox(true), Err(Unobserved::Hidden));
        let line = format!("{}; {}", Unobserved::Hidden.why(), Unobserved::Hidden.how());
        assert!(line.contains("--no-sandbox"), "{line}");
    }

    #[test]
    fn nothing_is_installed_in_an_empty_directory() {
        let dir = std::env::temp_dir().join(format!("toolmark-demo-none-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(installed(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_package_is_known_to_the_sweep_by_its_target_string() {
        assert_eq!(
            target(&PACKAGES[0]),
            "npm:@modelcontextprotocol/server-memory"
        );
        assert_eq!(target(&PACKAGES[2]), "pypi:mcp-server-time");
    }
}
