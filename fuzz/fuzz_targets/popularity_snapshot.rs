//! Any bytes as a popularity snapshot (`toolmark-popularity/1`) and as names asked about:
//! reading never panics; a snapshot read writes back to text that reads back equal; the
//! look-alike index built over it answers any key and any server name without panicking, and
//! never names the asked package itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_names::packages::{LookalikeIndex, PackageKey};
use toolmark_names::servers::ServerNames;
use toolmark_names::snapshot::Snapshot;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(snapshot) = Snapshot::parse(text) {
        assert_eq!(Snapshot::parse(&snapshot.to_text()).as_ref(), Ok(&snapshot));
        let index = LookalikeIndex::new(&snapshot);
        for key in snapshot.counts.keys().take(64) {
            let parsed = PackageKey::parse(key).unwrap();
            if let Some(found) = index.check(&parsed) {
                assert_ne!(found.of, *key);
            }
        }
    }
    for line in text.lines().take(64) {
        if let Ok(key) = PackageKey::parse(line) {
            let _ = key.key();
        }
    }
    let names = ServerNames::new(text.lines().take(256));
    for line in text.lines().take(64) {
        if let Some(found) = names.check(line) {
            assert_ne!(found.of, line);
        }
    }
});
