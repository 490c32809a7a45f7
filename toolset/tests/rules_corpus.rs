//! The rule set measured on the labelled corpus in `tests/fixtures/rules/`: every
//! `poisoned*.jsonl` (recall, overall and per class) and every `clean*.jsonl` (false positives)
//! present. Goals, asserted on every development file: recall ≥ 90% overall and ≥ 80% per
//! class (an entry is detected when any rule or the learned score matches it), at most 0.5% of
//! clean entries with any match and none with a block-tier match.
//! `cargo test -p toolmark-toolset --test rules_corpus -- --nocapture` prints the tables
//! (docs/benchmarks.md quotes them).
//!
//! The development files: the rules have been written against all of them, and the learned
//! score trained on them (`scripts/train-scorer`). Two of them were held out before, and what
//! `toolmark-rules/1` measured on them is kept as the record of a blind measure:
//!
//! * `*-heldout.jsonl`: written and captured in session 8, beside the development split, read
//!   by the rule author after the rule set was written: 62.2% recall, 0.9% of clean tools
//!   matched (3 at block tier);
//! * `*-fresh.jsonl`: made in session 9 by helpers who did not read the rules, measured blind
//!   before any rule changed: 56.7% recall, 0.2% of clean tools matched (all 4 at block tier).
//!
//! From the change that widened the rules on them (session 10) they are development files like
//! the others, the goals asserted on them too.
//!
//! The files of [`HELD_OUT`] are read the same way, but the goals are NOT all met on them
//! (docs/benchmarks.md; issue #28), so the test asserts only that no change makes them worse
//! than measured:
//!
//! * `*-blind.jsonl`: made in session 10 by helpers who did not read the rules, while the rules
//!   were being widened on the others; in session 11 the validation split of the learned score,
//!   in session 12 part of its training data;
//! * `clean-train.jsonl`, `clean-topics.jsonl` (and their instructions): captured in session 11
//!   to train the learned score (real servers in other languages, and on the topics poisoning
//!   demos borrow); in session 12 the rules were narrowed on their block-tier false positives;
//! * `*-blind5.jsonl`: made in session 12 by a helper who read neither the rules nor the
//!   learned score, measured once blind (72 of 81, 88.9%). Then one rule (`ransomware`, and
//!   `offensive-exploitation` on a name starting "attack") was narrowed on its one clean tool
//!   and one clean instructions matched at block tier, and, for a review's findings not drawn
//!   from this split, a few rules were fixed, the learned score learned clean counterparts of
//!   the poisoned tools and counts scripts without spaces as prose; its figures were seen
//!   after each of those changes (74, then 75 of 81), none was chosen on them.
//!
//! `*-blind4.jsonl` (session 11, blind to both rules and model when measured: 72.8% recall) and
//! `poisoned-train5.jsonl` (session 12, written after public sources for training) have been
//! training data of the learned score since session 12, and meet the goals as development
//! files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolmark_toolset::rules::{self, RuleClass, Scan, Tier};

// `group` is the feature dump's (examples/score_features.rs), not this test's.
#[allow(dead_code)]
#[path = "support/corpus_line.rs"]
mod corpus_line;

const RECALL_MIN: f64 = 0.90;
const CLASS_RECALL_MIN: f64 = 0.80;
const FP_MAX: f64 = 0.005;

/// The held-out files and what `toolmark-rules/4` measured on each: for a poisoned file the
/// entries detected (a floor), for a clean file the entries matched (a ceiling). Not the goals.
/// Earlier measures of the `*-blind` files: `toolmark-rules/1` 66 of 113 poisoned entries
/// (58.4%), 3 of 1,744 clean tools, 1 of 18 clean instructions; `toolmark-rules/2` 68, 5 and 1;
/// `toolmark-rules/3` 95, 7 (5 at block tier) and 1.
const HELD_OUT: &[(&str, usize)] = &[
    ("poisoned-blind.jsonl", POISONED_BLIND),
    ("clean-blind.jsonl", CLEAN_BLIND),
    ("clean-instructions-blind.jsonl", CLEAN_INSTRUCTIONS_BLIND),
    ("clean-train.jsonl", CLEAN_TRAIN),
    ("clean-instructions-train.jsonl", CLEAN_INSTRUCTIONS_TRAIN),
    ("clean-topics.jsonl", CLEAN_TOPICS),
    ("poisoned-blind5.jsonl", POISONED_BLIND5),
    ("clean-blind5.jsonl", CLEAN_BLIND5),
    ("clean-instructions-blind5.jsonl", CLEAN_INSTRUCTIONS_BLIND5),
];

/// `toolmark-rules/4`'s measures (session 12). `*-blind5`, measured blind: 72 of 81 (88.9%;
/// destructive-command, tool-preference and harmful-purpose 6 of 8 each), 1 of 1,288 clean
/// tools and 1 of 41 instructions, both at block tier by `ransomware` on a vulnerability
/// feed's `ransomware` filter; as published (after the changes above): 75 of 81 (92.6%, every
/// class 7 of 8 or more), 3 of 1,288 clean tools (advise, learned score), 0 of 41
/// instructions. `*-blind` (now training data): 108 of 113, 2 of 1,744, 1 of 18. The training
/// files: 1 of 1,575 and 2 of 701.
const POISONED_BLIND: usize = 108;
const CLEAN_BLIND: usize = 2;
const CLEAN_INSTRUCTIONS_BLIND: usize = 1;
const CLEAN_TRAIN: usize = 1;
const CLEAN_INSTRUCTIONS_TRAIN: usize = 0;
const CLEAN_TOPICS: usize = 2;
const POISONED_BLIND5: usize = 75;
const CLEAN_BLIND5: usize = 3;
const CLEAN_INSTRUCTIONS_BLIND5: usize = 0;

struct Entry {
    id: String,
    class: Option<String>,
    scan: Scan,
    /// The matched characters of each match (at most 80), for the report.
    excerpts: Vec<String>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    n.ends_with(".jsonl") && (n.starts_with("poisoned") || n.starts_with("clean"))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn read(path: &Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(n, line)| {
            let corpus_line::Line {
                id,
                class,
                set,
                instructions,
                ..
            } = corpus_line::read(&path.display().to_string(), n, line);
            let scan = rules::scan(&set, instructions.as_deref());
            let excerpts = scan
                .matches
                .iter()
                .map(|m| {
                    let text = match set.tools.first() {
                        Some(t) if m.tool.is_some() => rules::field_text(t, &m.field),
                        _ => instructions.clone(),
                    }
                    .unwrap_or_default();
                    let chars: String = text
                        .chars()
                        .skip(m.span[0])
                        .take((m.span[1] - m.span[0]).min(80))
                        .collect();
                    format!("{} {:?}", m.code, chars)
                })
                .collect();
            Entry {
                id,
                class,
                scan,
                excerpts,
            }
        })
        .collect()
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / d as f64)
    }
}

fn codes(s: &Scan) -> String {
    let mut c: Vec<String> = s
        .matches
        .iter()
        .map(|m| format!("{}({})", m.code, m.tier.as_str()))
        .collect();
    c.dedup();
    c.join(" ")
}

/// The table of a poisoned file, and what falls short of the goals.
fn poisoned(name: &str, entries: &[Entry], out: &mut String, failures: &mut Vec<String>) {
    let mut by: BTreeMap<RuleClass, [usize; 3]> = BTreeMap::new();
    let mut missed = Vec::new();
    for e in entries {
        let class = e.class.as_deref().unwrap_or("");
        let class = RuleClass::ALL
            .into_iter()
            .find(|c| c.as_str() == class)
            .unwrap_or_else(|| panic!("{name}: {} has class {class:?}", e.id));
        let row = by.entry(class).or_default();
        row[0] += 1;
        if e.scan.flagged() {
            row[1] += 1;
        } else {
            missed.push(format!("{} ({})", e.id, class.as_str()));
        }
        if e.scan.block > 0 {
            row[2] += 1;
        }
    }
    writeln!(out, "\n{name}\n").unwrap();
    writeln!(out, "| class | entries | detected | blocked | recall |").unwrap();
    writeln!(out, "|---|---:|---:|---:|---:|").unwrap();
    let mut total = [0; 3];
    for (class, row) in &by {
        let recall = pct(row[1], row[0]);
        writeln!(
            out,
            "| {} | {} | {} | {} | {recall} |",
            class.as_str(),
            row[0],
            row[1],
            row[2]
        )
        .unwrap();
        for i in 0..3 {
            total[i] += row[i];
        }
        if (row[1] as f64) < CLASS_RECALL_MIN * row[0] as f64 {
            failures.push(format!("{name}: {} recall {recall}", class.as_str()));
        }
    }
    let recall = pct(total[1], total[0]);
    writeln!(
        out,
        "| **all** | {} | {} | {} | **{recall}** |",
        total[0], total[1], total[2]
    )
    .unwrap();
    if (total[1] as f64) < RECALL_MIN * total[0] as f64 {
        failures.push(format!("{name}: recall {recall}"));
    }
    if !missed.is_empty() {
        writeln!(out, "\nmissed: {}", missed.join(", ")).unwrap();
    }
}

/// The table of a clean file, and what falls short of the goals.
fn clean(name: &str, entries: &[Entry], out: &mut String, failures: &mut Vec<String>) {
    let any = entries.iter().filter(|e| e.scan.flagged()).count();
    let block = entries.iter().filter(|e| e.scan.block > 0).count();
    let n = entries.len();
    writeln!(out, "\n{name}\n").unwrap();
    writeln!(
        out,
        "| entries | with any match | with a block match | FP rate |"
    )
    .unwrap();
    writeln!(out, "|---:|---:|---:|---:|").unwrap();
    writeln!(out, "| {n} | {any} | {block} | {} |", pct(any, n)).unwrap();
    for e in entries.iter().filter(|e| e.scan.flagged()) {
        let tier = if e.scan.block > 0 {
            Tier::Block
        } else {
            Tier::Advise
        };
        writeln!(out, "  {} {}: {}", tier.as_str(), e.id, codes(&e.scan)).unwrap();
        for x in &e.excerpts {
            writeln!(out, "    {x}").unwrap();
        }
    }
    if any as f64 > FP_MAX * n as f64 {
        failures.push(format!(
            "{name}: {any} of {n} entries matched ({})",
            pct(any, n)
        ));
    }
    if block > 0 {
        failures.push(format!("{name}: {block} entries with a block-tier match"));
    }
}

#[test]
fn the_development_files_meet_the_goals_and_the_blind_ones_do_not_regress() {
    let files = corpus_files();
    assert!(
        !files.is_empty(),
        "no poisoned*.jsonl or clean*.jsonl in {}",
        dir().display()
    );
    let mut out = format!("rule set {} ({})\n", rules::RULES_ID, rules::digest());
    let mut failures = Vec::new();
    let mut held_out = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let entries = read(path);
        // The blind files' misses against the goals are reported, not failures.
        let measured = HELD_OUT.iter().find(|(f, _)| *f == name).map(|&(_, n)| n);
        let sink = if measured.is_some() {
            &mut held_out
        } else {
            &mut failures
        };
        let flagged = entries.iter().filter(|e| e.scan.flagged()).count();
        if name.starts_with("poisoned") {
            poisoned(&name, &entries, &mut out, sink);
            if let Some(floor) = measured
                && flagged < floor
            {
                failures.push(format!(
                    "{name}: recall {flagged}/{} fell below the measured {floor}",
                    entries.len()
                ));
            }
        } else {
            clean(&name, &entries, &mut out, sink);
            if let Some(ceiling) = measured
                && flagged > ceiling
            {
                failures.push(format!(
                    "{name}: {flagged} clean entries matched, more than the measured {ceiling}"
                ));
            }
        }
    }
    println!("{out}");
    if !held_out.is_empty() {
        println!("blind, goals not met:\n{}", held_out.join("\n"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
