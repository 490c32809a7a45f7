//! Any text that parses as JSON canonicalises (ECMAScript profile) to JSON that parses again and
//! is its own canonical form; the integers-only form, when there is one, is the same bytes
//! whenever the value has no number that the two profiles spell differently.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_toolset::canon::{self, Numbers};
use toolmark_toolset::json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(value) = json::parse(text) else { return };
    let once = canon::to_vec(&value, Numbers::Ecmascript).expect("ECMAScript profile is total");
    let again = json::parse(std::str::from_utf8(&once).expect("canonical form is UTF-8"))
        .expect("canonical form parses");
    let twice = canon::to_vec(&again, Numbers::Ecmascript).unwrap();
    assert_eq!(once, twice, "canonicalisation is not idempotent");
    if let Ok(ints) = canon::to_vec(&value, Numbers::IntegersOnly) {
        let reparsed = json::parse(std::str::from_utf8(&ints).unwrap()).expect("parses");
        assert_eq!(canon::to_vec(&reparsed, Numbers::IntegersOnly).unwrap(), ints);
    }
});
