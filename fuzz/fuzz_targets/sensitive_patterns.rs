//! Any bytes as sensitive-tool patterns and server names (one per line: lines starting `@` are
//! server names, the rest patterns): parsing never panics, a refused pattern is refused for a
//! stated reason, and matching the accepted ones against a real tool set, with the starter
//! policy, never panics and splits every distinct name exactly once.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_toolset::{ToolSet, policy, sensitive};

const TOOLS: &[u8] = br#"[{"name":"read_file"},{"name":"write_file"},{"name":"send_email"},
{"name":"refund"},{"name":"fs/write"},{"name":"\u0130x"}]"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (servers, patterns): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('@'));
    let servers: Vec<&str> = servers.iter().map(|s| &s[1..]).collect();
    let parsed = match sensitive::parse_patterns(&patterns) {
        Ok(p) => p,
        Err(e) => {
            assert!(!e.reason.is_empty());
            return;
        }
    };
    let set = ToolSet::parse(TOOLS).unwrap();
    let names = sensitive::ServerNames::new(&servers);
    let starter = policy::STARTER.compile();
    let _ = sensitive::match_work(&set, &parsed, Some(&policy::STARTER), &names);
    let split = sensitive::classify_sensitive(&set, &parsed, Some(&starter), &names);
    assert_eq!(split.sensitive.len() + split.safe.len(), 6);
});
