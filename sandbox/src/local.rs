//! A trusted local server as a child process on a loopback port (not sandboxed).

use std::ffi::OsStr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How often [`LoopbackServer::start`] and [`LoopbackServer::stop`] try the port.
const PORT_POLL: Duration = Duration::from_millis(50);

/// Why a local server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The program could not be started.
    #[error("starting {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// It started but did not listen in time (it was killed).
    #[error("{program} did not listen on 127.0.0.1:{port} within {within:?}")]
    NotListening {
        /// The program.
        program: String,
        /// The port waited for.
        port: u16,
        /// How long.
        within: Duration,
    },
}

/// Whether `program --version` runs and exits 0 (e.g. whether `node` is installed).
pub fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A free loopback port (bound and released; another process could take it meanwhile).
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A child process serving on `127.0.0.1:port`; killed (and waited for) when dropped.
#[derive(Debug)]
pub struct LoopbackServer {
    child: Option<Child>,
    port: u16,
    within: Duration,
}

impl LoopbackServer {
    /// Runs `program args…` with `env` added (stdin, stdout and stderr closed) and waits until
    /// `127.0.0.1:port` accepts connections, for at most `within`.
    pub fn start<I, S>(
        program: &str,
        args: I,
        env: &[(&str, String)],
        port: u16,
        within: Duration,
    ) -> Result<LoopbackServer, LocalError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| LocalError::Spawn {
                program: program.to_owned(),
                source,
            })?;
        let mut server = LoopbackServer {
            child: Some(child),
            port,
            within,
        };
        let started = Instant::now();
        while started.elapsed() < within {
            if server.listening() {
                return Ok(server);
            }
            std::thread::sleep(PORT_POLL);
        }
        server.stop();
        Err(LocalError::NotListening {
            program: program.to_owned(),
            port,
            within,
        })
    }

    /// The port it serves on.
    pub fn port(&self) -> u16 {
        self.port
    }

    fn listening(&self) -> bool {
        std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
    }

    /// Kills the process and waits (at most the start deadline) until its port is free.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            let started = Instant::now();
            while started.elapsed() < self.within && self.listening() {
                std::thread::sleep(PORT_POLL);
            }
        }
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_listens_is_started_and_its_port_freed_on_drop() {
        if !available("python3") {
            eprintln!("skipped: no python3");
            return;
        }
        let port = free_port().unwrap();
        let server = LoopbackServer::start(
            "python3",
            [
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ],
            &[],
            port,
            Duration::from_secs(20),
        )
        .unwrap();
        assert!(server.listening());
        drop(server);
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    }

    #[test]
    fn a_server_that_never_listens_is_killed_and_named() {
        let port = free_port().unwrap();
        let err = LoopbackServer::start("sleep", ["30"], &[], port, Duration::from_millis(300))
            .unwrap_err();
        assert!(matches!(err, LocalError::NotListening { .. }), "{err}");
        assert!(err.to_string().contains("sleep did not listen"), "{err}");
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let err =
            LoopbackServer::start("toolmark-no-such-program", [""; 0], &[], 1, Duration::ZERO)
                .unwrap_err();
        assert!(matches!(err, LocalError::Spawn { .. }), "{err}");
        assert!(!available("toolmark-no-such-program"));
    }
}
