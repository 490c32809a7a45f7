//! A child process whose output lines the test reads as they come (shared by the `run` and
//! `demo` end-to-end tests).
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]
// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

pub mod packages;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running child; one of its streams (stdout or stderr) is read line by line.
pub struct Watched {
    pub child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line read so far.
    pub seen: Vec<String>,
}

/// Which stream of the child to read.
pub enum Stream {
    Stdout,
    Stderr,
}

impl Watched {
    /// Spawn `command`, reading `stream` (the other one goes to the test's stderr); lines are
    /// echoed to the test's stderr with `tag`.
    pub fn spawn(mut command: Command, stream: Stream, tag: &'static str) -> Watched {
        let (out, err) = match stream {
            Stream::Stdout => (Stdio::piped(), Stdio::inherit()),
            Stream::Stderr => (Stdio::null(), Stdio::piped()),
        };
        let mut child = command.stdout(out).stderr(err).spawn().expect("spawn");
        let pipe: Box<dyn Read + Send> = match stream {
            Stream::Stdout => Box::new(child.stdout.take().unwrap()),
            Stream::Stderr => Box::new(child.stderr.take().unwrap()),
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                eprintln!("[{tag}] {line}");
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watched {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The first line containing `needle`, read before `deadline` (panics otherwise).
    pub fn wait_for(&mut self, needle: &str, deadline: Instant) -> String {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => panic!("no {needle:?} in time; read so far: {:#?}", self.seen),
            }
        }
    }

    /// Send a signal (`-TERM`, `-INT`, `-KILL`).
    pub fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args([sig, &pid]).status().unwrap();
        assert!(sent.success());
    }

    /// Wait (until `deadline`) for the child to exit; keeps the lines it printed last.
    pub fn exit(&mut self, deadline: Instant) -> ExitStatus {
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                // The reader ends at end of file.
                while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
                    self.seen.push(line);
                }
                return s;
            }
            assert!(Instant::now() < deadline, "the child did not exit in time");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The first `http://…` word of `line`, without a trailing slash.
    pub fn url_in(line: &str) -> String {
        line.split_whitespace()
            .find(|w| w.starts_with("http://"))
            .expect("a URL in the line")
            .trim_end_matches('/')
            .to_owned()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `command` to its end with `stdin` as its input (none: an empty, closed stdin), capturing
/// stdout and stderr.
pub fn output_with_stdin(mut command: Command, stdin: Option<&str>) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// `POST base/api/v1/check` with `body`, answered 200; the answer.
pub fn check(base: &str, body: &serde_json::Value) -> serde_json::Value {
    let text = ureq::post(&format!("{base}/api/v1/check"))
        .header("content-type", "application/json")
        .send(body.to_string())
        .expect("POST /check")
        .body_mut()
        .read_to_string()
        .expect("the answer");
    serde_json::from_str(&text).expect("an answer in JSON")
}

/// The value of `metric` (a metric without labels) in `base`'s `/metrics`.
pub fn metric(base: &str, metric: &str) -> f64 {
    let text = ureq::get(&format!("{base}/metrics"))
        .call()
        .expect("GET /metrics")
        .body_mut()
        .read_to_string()
        .expect("the metrics text");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{metric} ")))
        .unwrap_or_else(|| panic!("{metric} not in {text}"))
        .parse()
        .expect("a number")
}

/// `command` pointed at the test bucket (the `AWS_*` variables the log's bucket client reads),
/// with the storage, configuration and data variables of this environment removed so that
/// only the flags the test gives count.
pub fn bucket_env<'a>(
    command: &'a mut Command,
    bucket: &toolmark_standins::services::Bucket,
) -> &'a mut Command {
    command
        .env("AWS_ENDPOINT_URL", &bucket.endpoint)
        .env("AWS_ACCESS_KEY_ID", &bucket.access_key_id)
        .env("AWS_SECRET_ACCESS_KEY", &bucket.secret_access_key)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env_remove("TOOLMARK_STORAGE_HEAD")
        .env_remove("TOOLMARK_STORAGE_OBJECTS")
        .env_remove("TOOLMARK_CONFIG")
        .env_remove("TOOLMARK_DATA")
}

/// The log's public objects (`log/public` under `objects`, an `s3://bucket/prefix` URL) in
/// `bucket`.
pub fn public_objects(
    bucket: &toolmark_standins::services::Bucket,
    objects: &str,
) -> toolmark_log::objects::Objects {
    toolmark_log::objects::Objects::s3(
        objects,
        &toolmark_log::objects::S3Options::at(
            &bucket.endpoint,
            &bucket.access_key_id,
            &bucket.secret_access_key,
        ),
    )
    .unwrap()
    .sub("log/public")
}

/// Copies a log's published tiles, checkpoint and verifier key from `public` into the
/// directory `to` (the C2SP tlog-tiles layout the Go and Python verifiers read).
pub fn download_public(public: &toolmark_log::objects::Objects, to: &std::path::Path) {
    for p in public.list("tile", 10_000_000).unwrap() {
        let bytes = public.get(&p).unwrap().unwrap();
        let file = to.join(&p);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    for p in ["checkpoint", "vkey"] {
        std::fs::write(to.join(p), public.get(p).unwrap().unwrap()).unwrap();
    }
}
