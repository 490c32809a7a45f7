//! Real package registries on loopback for the tests: Verdaccio (npm, `scripts/verdaccio`)
//! and pypiserver (PyPI, `scripts/pypiserver`), each on a free port, with storage of its own,
//! no uplink and no fallback: what a test publishes is all they serve. Shared by the sandbox's
//! tests and the package sweep's (`#[path]`).
#![allow(
    clippy::disallowed_methods,
    reason = "starts the registries and npm publish"
)]
#![allow(dead_code, reason = "each test binary uses part of it")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Wait until `url` answers (60 s at most).
fn wait_for(url: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::process::Command::new("curl")
        .args(["-sf", "-o", "/dev/null", url])
        .status()
        .map_or(true, |s| !s.success())
    {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A real npm registry on loopback: Verdaccio (`scripts/verdaccio`), with storage of its own,
/// no uplink, and publishing for a user the test registers.
pub struct Verdaccio {
    process: Child,
    /// Its base URL.
    pub url: String,
    npmrc: PathBuf,
}

impl Verdaccio {
    /// Start the Verdaccio installed in `install` with its home under `dir`.
    pub fn start(install: &Path, dir: &Path) -> Verdaccio {
        let home = dir.join("verdaccio");
        std::fs::create_dir_all(home.join("storage")).unwrap();
        std::fs::write(
            home.join("config.yaml"),
            "storage: ./storage\nauth:\n  htpasswd:\n    file: ./htpasswd\n    max_users: 1\n\
             uplinks: {}\npackages:\n  '**':\n    access: $all\n    publish: $authenticated\n\
             log: { type: stdout, format: pretty, level: warn }\n",
        )
        .unwrap();
        // A free loopback port for it.
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}");
        let process = Command::new(install.join("node_modules/.bin/verdaccio"))
            .arg("--config")
            .arg(home.join("config.yaml"))
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(&format!("{url}/-/ping"), "verdaccio");
        // Register a user (as `npm adduser` does) and keep its token for `npm publish`.
        let answer = Command::new("curl")
            .args([
                "-sf",
                "-X",
                "PUT",
                "-H",
                "content-type: application/json",
                "-d",
            ])
            .arg(r#"{"name": "toolmark", "password": "toolmark-test"}"#)
            .arg(format!("{url}/-/user/org.couchdb.user:toolmark"))
            .output()
            .unwrap();
        let token: serde_json::Value = serde_json::from_slice(&answer.stdout).unwrap();
        let npmrc = home.join("npmrc");
        std::fs::write(
            &npmrc,
            format!(
                "//127.0.0.1:{port}/:_authToken={}\n",
                token["token"].as_str().unwrap()
            ),
        )
        .unwrap();
        Verdaccio {
            process,
            url,
            npmrc,
        }
    }

    /// `npm publish` of a tarball to it.
    pub fn publish(&self, tarball: &Path) {
        let out = Command::new("/usr/bin/npm")
            .arg("publish")
            .arg(tarball)
            .args(["--registry", &self.url, "--userconfig"])
            .arg(&self.npmrc)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

impl Drop for Verdaccio {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// pypiserver serving the files in a directory, with no fallback to pypi.org.
pub struct PypiServer {
    process: Child,
    /// Its base URL (`/simple/` under it).
    pub url: String,
}

impl PypiServer {
    /// Start the pypiserver of the venv `venv` over the files in `packages`.
    pub fn start(venv: &Path, packages: &Path) -> PypiServer {
        let port = free_port();
        let process = Command::new(venv.join("bin/pypi-server"))
            .args(["run", "-i", "127.0.0.1", "-p", &port.to_string()])
            .args([
                "-a",
                ".",
                "-P",
                ".",
                "--disable-fallback",
                "--hash-algo",
                "sha256",
            ])
            .arg(packages)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        wait_for(&format!("{url}/simple/"), "pypiserver");
        PypiServer { process, url }
    }
}

impl Drop for PypiServer {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// The install directory a registry's script made (`variable`), or a skip (a failure under
/// CI).
pub fn installed(variable: &str, script: &str) -> Option<PathBuf> {
    let found = std::env::var_os(variable).map(PathBuf::from);
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{variable} (scripts/{script}) is needed under CI"
        );
        eprintln!("skipped: no {variable} (export {variable}=$(scripts/{script}))");
    }
    found
}
