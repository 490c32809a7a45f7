//! Any bytes as a runsc debug log: parsing never panics, every event decodes or is refused
//! without panicking, and nothing is kept past the limits.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_sandbox::trace;

fuzz_target!(|data: &[u8]| {
    let t = trace::parse(data);
    assert!(t.events.len() <= trace::MAX_TRACE_EVENTS);
    for e in &t.events {
        let _ = trace::decode(e);
        let _ = trace::decode_in(e, trace::shown_cwd(e).as_deref());
        let _ = t.leaves(e);
        let _ = trace::split_args(&e.args);
    }
});
