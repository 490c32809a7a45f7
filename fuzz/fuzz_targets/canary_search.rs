//! Any bytes searched for a run's canary: the search never panics, never reads past its
//! limits, and the canary spliced into any bytes — in hex, or base64-encoded together with
//! them at whatever alignment they give it — is always found.
#![no_main]
use std::sync::OnceLock;

use base64::Engine;
use libfuzzer_sys::fuzz_target;
use toolmark_sandbox::canary::Search;

const CANARY: &str = "toolmark-canary-0123456789abcdef";

/// One search for every input: building it (its regex) costs far more than a search, and a
/// run's budget without end, so only a limit of one payload could cut it.
static SEARCH: OnceLock<Search> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let search = SEARCH.get_or_init(|| Search::with_budget(CANARY, u64::MAX));
    let _ = search.find(data);
    let mid = data.len() / 2;
    let hex: String = CANARY.bytes().map(|b| format!("{b:02x}")).collect();
    let mut spliced = data[..mid].to_vec();
    spliced.extend_from_slice(hex.as_bytes());
    spliced.extend_from_slice(&data[mid..]);
    assert!(search.find(&spliced).is_some());
    let mut plain = data.to_vec();
    plain.extend_from_slice(CANARY.as_bytes());
    let encoded = base64::engine::general_purpose::STANDARD.encode(&plain);
    assert!(search.find(encoded.as_bytes()).is_some());
    assert_eq!(search.cuts(), 0, "far below the limits");
});
