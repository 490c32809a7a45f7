//! The legs judge against the labelled leg set (`tests/fixtures/rules/legs.jsonl`: real tools
//! of real servers, each leg labelled `confirmed`, `possible` or `none` by a person reading the
//! definition). Per leg, precision and recall where a leg counts as present when labelled (or
//! judged) `confirmed` or `possible`, and again counting `confirmed` only. Run with
//! `--nocapture` to see the table; `LEGS_MISSES=1` also prints every disagreement.

use std::collections::BTreeMap;

use serde_json::Value;
use toolmark_toolset::ToolSet;
use toolmark_toolset::legs::{Certainty, Leg, tool_legs};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/rules/legs.jsonl"
);

/// Floors the judge reaches on the labelled set (present = confirmed or possible).
const MIN_PRECISION: f64 = 0.90;
const MIN_RECALL: f64 = 0.80;

#[derive(Default, Clone, Copy)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
}

impl Counts {
    fn add(&mut self, truth: bool, judged: bool) {
        match (truth, judged) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
            (false, false) => {}
        }
    }
    fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }
    fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

fn label(v: &Value) -> Option<Certainty> {
    match v.as_str() {
        Some("confirmed") => Some(Certainty::Confirmed),
        Some("possible") => Some(Certainty::Possible),
        Some("none") | None => None,
        Some(other) => panic!("unknown leg label {other:?}"),
    }
}

#[test]
fn legs_match_the_labelled_set() {
    let text = std::fs::read_to_string(FIXTURE).expect("legs.jsonl is readable");
    let misses = std::env::var_os("LEGS_MISSES").is_some();
    let mut present: BTreeMap<Leg, Counts> = BTreeMap::new();
    let mut confirmed: BTreeMap<Leg, Counts> = BTreeMap::new();
    let mut exact = 0;
    let mut slots = 0;
    let mut tools = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry: Value = serde_json::from_str(line).expect("a JSON line");
        let id = entry["id"].as_str().unwrap_or("?");
        let raw = serde_json::to_string(&Value::Array(vec![entry["tool"].clone()])).unwrap();
        let set = ToolSet::parse(raw.as_bytes()).expect("a tool");
        let judged = tool_legs(&set.tools[0]);
        tools += 1;
        for leg in Leg::ALL {
            let truth = label(&entry["legs"][leg.as_str()]);
            let got = judged.iter().find(|l| l.leg == leg);
            let got_c = got.map(|l| l.certainty);
            present
                .entry(leg)
                .or_default()
                .add(truth.is_some(), got.is_some());
            confirmed.entry(leg).or_default().add(
                truth == Some(Certainty::Confirmed),
                got_c == Some(Certainty::Confirmed),
            );
            slots += 1;
            exact += usize::from(truth == got_c);
            if misses && truth.is_some() != got.is_some() {
                println!(
                    "{id} {} {}: labelled {:?}, judged {:?} {:?}",
                    entry["tool"]["name"],
                    leg.as_str(),
                    truth,
                    got_c,
                    got.map(|l| &l.evidence)
                );
            }
        }
    }
    println!("legs judged on {tools} labelled tools ({exact}/{slots} labels exactly equal)");
    println!(
        "{:<16} {:>5} {:>5} {:>5} {:>9} {:>7} | {:>17} {:>14}",
        "leg", "tp", "fp", "fn", "precision", "recall", "confirmed: prec", "recall"
    );
    for leg in Leg::ALL {
        let p = present[&leg];
        let c = confirmed[&leg];
        println!(
            "{:<16} {:>5} {:>5} {:>5} {:>8.1}% {:>6.1}% | {:>16.1}% {:>13.1}%",
            leg.as_str(),
            p.tp,
            p.fp,
            p.fn_,
            100.0 * p.precision(),
            100.0 * p.recall(),
            100.0 * c.precision(),
            100.0 * c.recall()
        );
    }
    assert!(tools >= 200, "only {tools} labelled tools");
    for leg in Leg::ALL {
        let p = present[&leg];
        assert!(
            p.precision() >= MIN_PRECISION && p.recall() >= MIN_RECALL,
            "{}: precision {:.3}, recall {:.3}",
            leg.as_str(),
            p.precision(),
            p.recall()
        );
    }
}
