//! Two tool sets from one input (split at the first 0x00 byte): diff and classification never
//! panic, and a set compared with itself is an empty, benign change with no signals.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_toolset::classify::{self, Class};
use toolmark_toolset::{ToolSet, diff};

fuzz_target!(|data: &[u8]| {
    let (a, b) = match data.iter().position(|&x| x == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, data),
    };
    let (Ok(old), Ok(new)) = (ToolSet::parse(a), ToolSet::parse(b)) else { return };
    let _ = diff::diff(&old, &new);
    let _ = classify::classify(&old, &new);
    let same = classify::classify(&new, &new);
    assert_eq!(same.class, Class::Benign);
    assert!(same.signals.is_empty(), "{:?}", same.signals);
    assert!(diff::diff(&new, &new).is_empty());
});
