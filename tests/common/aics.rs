//! A real witness for tests: `aics-witness` 0.1.0 (PyPI; C2SP tlog-witness, SQLite state,
//! cosignature/v1) on loopback, from the venv `scripts/test` makes (`TOOLMARK_AICS`: its bin
//! directory, also holding `aics-tlog`). Shared by the root crate's tests and, through
//! `#[path]`, by `cosign/tests`.
#![allow(clippy::disallowed_methods)] // runs aics-witness
#![allow(dead_code)] // each test binary uses part of it

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The venv's bin directory; `None` (a loud skip) without `TOOLMARK_AICS`, a failure under CI.
pub fn aics() -> Option<PathBuf> {
    match std::env::var_os("TOOLMARK_AICS") {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "TOOLMARK_AICS is unset: CI must run the aics-witness tests (scripts/test installs them)"
            );
            eprintln!("SKIPPED: TOOLMARK_AICS is unset (the aics-witness venv's bin directory)");
            None
        }
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A real aics-witness: its directory, port, vkey and process.
pub struct AicsWitness {
    bin: PathBuf,
    dir: PathBuf,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    /// Its cosignature verifier key.
    pub vkey: String,
    child: Option<Child>,
}

impl AicsWitness {
    pub fn new(bin: &Path, dir: &Path, name: &str, origin: &str, log_vkey: &str) -> AicsWitness {
        std::fs::create_dir_all(dir).unwrap();
        let port = free_port();
        let out = Command::new(bin.join("aics-witness"))
            .args(["init", "--config", "w.json", "--name", name, "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--db", "w.db", "--key-file", "w.key"])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let vkey = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned();
        let out = Command::new(bin.join("aics-witness"))
            .args([
                "add-log", "--config", "w.json", "--origin", origin, "--vkey", log_vkey,
            ])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut w = AicsWitness {
            bin: bin.to_owned(),
            dir: dir.to_owned(),
            port,
            vkey,
            child: None,
        };
        w.start();
        w
    }

    pub fn start(&mut self) {
        let child = Command::new(self.bin.join("aics-witness"))
            .args(["serve", "--config", "w.json", "--log-level", "WARNING"])
            .current_dir(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        self.child = Some(child);
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("aics-witness did not listen on {}", self.port);
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `VKEY@URL`, as `--witness` takes it.
    pub fn arg(&self) -> String {
        format!("{}@{}", self.vkey, self.url())
    }
}

impl Drop for AicsWitness {
    fn drop(&mut self) {
        self.stop();
    }
}
