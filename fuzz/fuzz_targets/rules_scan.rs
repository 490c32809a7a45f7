//! The rule set never panics and stays within its bounds: arbitrary bytes as a tool set (and the
//! same bytes, lossily decoded, as the server's instructions) → `rules::scan` and `legs::set_legs`;
//! the text's two halves as old and new instructions → `instructions::change`.
//! Every listed match names a rule, `scan-truncated` or (advise tier) `learned-score`, lies within its field's characters and is
//! counted; at most `MAX_MATCHES` are listed.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_toolset::rules::{self, LEARNED_SCORE, MAX_MATCHES, RULES, SCAN_TRUNCATED, Tier};
use toolmark_toolset::{ToolSet, instructions, legs};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let empty = ToolSet::of_raw::<&str>(&[]).unwrap();
    let only_text = rules::scan(&empty, Some(&text));
    check(&only_text);
    for m in &only_text.matches {
        assert!(m.span[0] <= m.span[1] && m.span[1] <= text.chars().count(), "{m:?}");
    }
    let mid = text.char_indices().nth(text.chars().count() / 2).map_or(0, |(i, _)| i);
    let (old, new) = text.split_at(mid);
    match instructions::change(Some(old), Some(new)) {
        None => assert_eq!(old, new),
        Some(c) => assert!(c.signals.iter().all(|s| s.class <= c.class)),
    }
    let Ok(set) = ToolSet::parse(data) else { return };
    let scan = rules::scan(&set, Some(&text));
    check(&scan);
    for m in &scan.matches {
        let unique = |n: &str| set.tools.iter().filter(|t| t.name() == Some(n)).count() == 1;
        if let (Some(name), true) = (&m.tool, m.field != "$['instructions']") {
            if !unique(name) {
                continue;
            }
            if let Some(field) = set.get(name).and_then(|t| rules::field_text(t, &m.field)) {
                assert!(m.span[1] <= field.chars().count(), "{m:?}");
            }
        }
    }
    let _ = legs::set_legs(&set);
});

fn check(scan: &rules::Scan) {
    assert!(scan.matches.len() <= MAX_MATCHES);
    assert_eq!(scan.block + scan.advise, scan.matches.len() + scan.truncated);
    for m in &scan.matches {
        assert!(
            m.code == SCAN_TRUNCATED
                || (m.code == LEARNED_SCORE && m.tier == Tier::Advise)
                || RULES.iter().any(|r| r.code == m.code)
        );
        assert!(m.span[0] <= m.span[1]);
    }
}
