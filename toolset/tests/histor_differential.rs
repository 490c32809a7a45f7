//! Differential test: our MTL/1 tool-set digest against HISTOR 0.4.2's own
//! `histor.subject.tool_set_digest`, over thousands of random tool sets written as JSON text.
//!
//! HISTOR runs in a Python interpreter named by `HISTOR_PYTHON` (`scripts/histor-venv` makes a
//! venv and prints it). Without it the test is skipped loudly, or fails when `CI` is set.
//!
//! * `TOOLMARK_DIFF_SEED` (decimal or `0x…`) replays a run; the seed is printed either way.
//! * `TOOLMARK_DIFF_CASES` sets the number of cases (default 3000).
//!
//! Every case must get the same result from both: the same SRI, the same MTL error code, or a
//! parse failure on both sides. Besides, `full::digest` must not panic on anything we parse.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

#[path = "support/generate.rs"]
mod generate;

use std::collections::BTreeMap;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::Command;
use toolmark_toolset::{ToolSet, full, mtl1};

const HISTOR_VERSION: &str = "0.4.2";
const DEFAULT_CASES: usize = 3000;
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/histor/mtl1_digest.py");
/// Mismatching cases printed in full per kind of mismatch.
const SHOWN_PER_KIND: usize = 3;

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Sri(String),
    Code(String),
    /// Not JSON, or not a tool set (details differ between parsers and are not compared).
    ParseError(String),
    /// HISTOR raised something other than `MtlError`.
    Exception(String),
    /// Our code panicked.
    Panic(String),
}

impl Outcome {
    fn kind(&self) -> String {
        match self {
            Outcome::Sri(_) => "sri".into(),
            Outcome::Code(c) => c.clone(),
            Outcome::ParseError(_) => "parse error".into(),
            Outcome::Exception(_) => "exception".into(),
            Outcome::Panic(_) => "panic".into(),
        }
    }

    fn agrees(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::ParseError(_), Outcome::ParseError(_)) => true,
            (Outcome::Sri(a), Outcome::Sri(b)) | (Outcome::Code(a), Outcome::Code(b)) => a == b,
            _ => false,
        }
    }
}

fn histor_python() -> Option<String> {
    match std::env::var("HISTOR_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ if std::env::var_os("CI").is_some() => panic!(
            "HISTOR_PYTHON is not set, and CI must run the HISTOR differential test: \
             run `scripts/histor-venv` and export HISTOR_PYTHON=<the python it prints>"
        ),
        _ => {
            // Straight to the process's stderr: the test harness captures `eprintln!`.
            let _ = std::io::stderr().write_all(
                b"\n\
                ################################################################\n\
                ## histor_differential: SKIPPED: set HISTOR_PYTHON            ##\n\
                ## (`scripts/histor-venv` prints the interpreter to use)      ##\n\
                ################################################################\n\n",
            );
            None
        }
    }
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v:?} is not a number")))
}

fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    generate::Rng::new(nanos ^ (u64::from(std::process::id()) << 32)).next_u64()
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into())
}

/// Our result for one case; also checks that the full digest does not panic.
fn ours(doc: &str) -> (Outcome, Option<ToolSet>) {
    let set = match panic::catch_unwind(|| ToolSet::parse(doc.as_bytes())) {
        Err(p) => {
            return (
                Outcome::Panic(format!("ToolSet::parse: {}", panic_message(&*p))),
                None,
            );
        }
        Ok(Err(e)) => return (Outcome::ParseError(e.to_string()), None),
        Ok(Ok(set)) => set,
    };
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| full::digest(&set))) {
        return (
            Outcome::Panic(format!("full::digest: {}", panic_message(&*p))),
            None,
        );
    }
    let outcome = match panic::catch_unwind(AssertUnwindSafe(|| mtl1::tool_set_digest(&set))) {
        Err(p) => Outcome::Panic(format!("mtl1::tool_set_digest: {}", panic_message(&*p))),
        Ok(Ok(sri)) => Outcome::Sri(sri.to_string()),
        Ok(Err(e)) => Outcome::Code(e.code.as_str().to_string()),
    };
    (outcome, Some(set))
}

/// Our canonical MTL/1 text, for a mismatch report.
fn our_canonical(set: &ToolSet) -> Option<String> {
    panic::catch_unwind(AssertUnwindSafe(|| mtl1::canonical_bytes(set)))
        .ok()
        .and_then(Result::ok)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn parse_histor_line(line: &str) -> Outcome {
    let v: serde_json::Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("HISTOR program printed a line that is not JSON ({e}): {line}"));
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    if let Some(s) = field("sri") {
        Outcome::Sri(s)
    } else if let Some(c) = field("code") {
        Outcome::Code(c)
    } else if let Some(p) = field("parse_error") {
        Outcome::ParseError(p)
    } else if let Some(x) = field("exception") {
        Outcome::Exception(x)
    } else {
        panic!("HISTOR program printed an unexpected line: {line}")
    }
}

/// Run the HISTOR program over `docs`; returns one JSON object per case (header checked).
fn run_histor(python: &str, docs: &[&str], path: &PathBuf, canonical: bool) -> Vec<String> {
    let mut body = String::new();
    for d in docs {
        body.push_str(&serde_json::to_string(d).expect("a string serialises"));
        body.push('\n');
    }
    std::fs::write(path, body).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    let mut cmd = Command::new(python);
    cmd.arg(SCRIPT).arg(path);
    if canonical {
        cmd.arg("--canonical");
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running HISTOR_PYTHON={python}: {e}"));
    assert!(
        out.status.success(),
        "{SCRIPT} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("the HISTOR program prints ASCII JSON");
    let mut lines = stdout.lines();
    let header: serde_json::Value =
        serde_json::from_str(lines.next().unwrap_or("")).expect("a {\"histor\": version} header");
    assert_eq!(
        header.get("histor").and_then(|v| v.as_str()),
        Some(HISTOR_VERSION),
        "HISTOR_PYTHON={python} has another aimarket-histor than {HISTOR_VERSION}; \
         `scripts/histor-venv` installs the right one"
    );
    if !canonical {
        println!("histor_differential: reference {header}");
    }
    let results: Vec<String> = lines.map(str::to_string).collect();
    assert_eq!(
        results.len(),
        docs.len(),
        "the HISTOR program printed {} results for {} cases",
        results.len(),
        docs.len()
    );
    results
}

struct Mismatch {
    index: usize,
    ours: Outcome,
    ours_canonical: Option<String>,
    theirs: Outcome,
}

#[test]
fn mtl1_tool_set_digest_matches_histor() {
    let Some(python) = histor_python() else {
        return;
    };
    let seed = env_number("TOOLMARK_DIFF_SEED").unwrap_or_else(fresh_seed);
    let n = env_number("TOOLMARK_DIFF_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    println!(
        "histor_differential: seed {seed:#018x}, {n} cases \
         (replay: TOOLMARK_DIFF_SEED={seed:#x} TOOLMARK_DIFF_CASES={n})"
    );

    let mut rng = generate::Rng::new(seed);
    let started = std::time::Instant::now();
    let docs: Vec<String> = (0..n).map(|_| generate::case(&mut rng)).collect();
    let bytes: usize = docs.iter().map(String::len).sum();
    println!(
        "histor_differential: generated {n} cases, {:.1} MB, in {:.2?}",
        bytes as f64 / 1e6,
        started.elapsed()
    );
    let doc_refs: Vec<&str> = docs.iter().map(String::as_str).collect();

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!(
        "histor-diff-{seed:016x}-{}.jsonl",
        std::process::id()
    ));
    let started = std::time::Instant::now();
    let theirs: Vec<Outcome> = run_histor(&python, &doc_refs, &path, false)
        .iter()
        .map(|l| parse_histor_line(l))
        .collect();
    let histor_time = started.elapsed();

    // Our panics are reported as mismatches, not printed as they happen.
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let started = std::time::Instant::now();
    let ours: Vec<(Outcome, Option<ToolSet>)> = docs.iter().map(|d| ours(d)).collect();
    let our_time = started.elapsed();
    panic::set_hook(hook);

    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    let mut mismatches: Vec<Mismatch> = Vec::new();
    for (i, ((o, set), t)) in ours.into_iter().zip(theirs).enumerate() {
        *tally.entry(t.kind()).or_default() += 1;
        if !o.agrees(&t) {
            // Only a digest disagreement needs the canonical text (and it cannot panic then).
            let ours_canonical = match o {
                Outcome::Sri(_) => set.as_ref().and_then(our_canonical),
                _ => None,
            };
            mismatches.push(Mismatch {
                index: i,
                ours: o,
                ours_canonical,
                theirs: t,
            });
        }
    }
    println!(
        "histor_differential: HISTOR results {tally:?}; HISTOR {histor_time:.2?}, ours {our_time:.2?}"
    );
    let _ = std::fs::remove_file(&path);

    let digested = tally.get("sri").copied().unwrap_or(0);
    if mismatches.is_empty() {
        assert!(
            n < 200 || digested * 2 >= n,
            "only {digested} of {n} cases were digestible: the generator no longer compares digests"
        );
        println!("histor_differential: all {n} cases agree ({digested} digests compared)");
        return;
    }

    // Group by kind of disagreement; show a few of each in full, with HISTOR's canonical text
    // where both sides digested.
    let mut kinds: BTreeMap<(String, String), Vec<&Mismatch>> = BTreeMap::new();
    for m in &mismatches {
        kinds
            .entry((m.ours.kind(), m.theirs.kind()))
            .or_default()
            .push(m);
    }
    let shown: Vec<&Mismatch> = kinds
        .values()
        .flat_map(|v| v.iter().take(SHOWN_PER_KIND).copied())
        .collect();
    let shown_docs: Vec<&str> = shown.iter().map(|m| docs[m.index].as_str()).collect();
    let canon_path = dir.join(format!(
        "histor-diff-{seed:016x}-{}-canon.jsonl",
        std::process::id()
    ));
    let histor_canon: Vec<Option<String>> = run_histor(&python, &shown_docs, &canon_path, true)
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| {
                    v.get("canonical")
                        .and_then(|c| c.as_str())
                        .map(str::to_string)
                })
        })
        .collect();
    let _ = std::fs::remove_file(&canon_path);

    eprintln!(
        "\n==== {} of {n} cases disagree with HISTOR {HISTOR_VERSION} ====",
        mismatches.len()
    );
    for ((o, t), v) in &kinds {
        eprintln!("  ours {o:<12} vs HISTOR {t:<12}: {} case(s)", v.len());
    }
    for (m, hc) in shown.iter().zip(histor_canon) {
        eprintln!("\n---- case #{} (seed {seed:#x}) ----", m.index);
        eprintln!("case text: {}", docs[m.index]);
        eprintln!(
            "case (JSON-escaped): {}",
            serde_json::to_string(&docs[m.index]).unwrap()
        );
        eprintln!("ours:   {:?}", m.ours);
        eprintln!("HISTOR: {:?}", m.theirs);
        if let (Outcome::Sri(_), Outcome::Sri(_)) = (&m.ours, &m.theirs) {
            eprintln!(
                "ours canonical:   {}",
                m.ours_canonical.as_deref().unwrap_or("?")
            );
            eprintln!("HISTOR canonical: {}", hc.as_deref().unwrap_or("?"));
        }
    }
    panic!(
        "{} of {n} cases disagree with HISTOR {HISTOR_VERSION} (seed {seed:#x}; see above)",
        mismatches.len()
    );
}
