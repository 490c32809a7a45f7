//! Any bytes as a registry page: parsing never panics, every kept record yields targets (each
//! either dialable or with a reason), every kept record has its item text and every rejected
//! item its (optional) name, and choosing the latest record per name is total.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_observation::registry;

fuzz_target!(|data: &[u8]| {
    if let Ok(page) = registry::parse_page(data) {
        assert_eq!(page.items.len(), page.servers.len());
        assert_eq!(page.rejected_names.len(), page.rejected.len());
        for r in &page.servers {
            let _ = registry::targets(r);
        }
        let latest = registry::latest_per_name(page.servers);
        assert!(
            latest.windows(2).all(|w| w[0].name < w[1].name),
            "latest_per_name is not sorted by name"
        );
    }
});
