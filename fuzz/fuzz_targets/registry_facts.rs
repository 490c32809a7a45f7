//! Any bytes as registry metadata: an npm packument (its version `1.0.0`), a PyPI project JSON,
//! a PEP 691 simple JSON page and a PEP 740 provenance object. Reading them never panics, lists
//! stay within their caps (over a cap: unknown), strings within `MAX_FACT_CHARS` (+ `…`), and
//! comparing the facts with themselves raises no flag but the informational one.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_crawler::packages::facts::{pypi_facts, pypi_provenance, pypi_provenance_listing};
use toolmark_crawler::packages::npm_entry;
use toolmark_observation::registry_facts::{
    INSTALL_SCRIPTS, MAX_BINS, MAX_DEPENDENCIES, MAX_FACT_CHARS, MAX_MAINTAINERS, RegistryFacts,
    compare,
};

fn check(f: &RegistryFacts) {
    assert!(f.dependencies.as_ref().is_none_or(|d| d.len() <= MAX_DEPENDENCIES));
    assert!(f.maintainers.as_ref().is_none_or(|m| m.len() <= MAX_MAINTAINERS));
    assert!(f.bins.as_ref().is_none_or(|b| b.len() <= MAX_BINS));
    for name in f.maintainers.iter().flatten() {
        assert!(name.chars().count() <= MAX_FACT_CHARS + 1);
    }
    let same = compare(Some(f), f);
    assert!(same.flags.iter().all(|flag| flag == INSTALL_SCRIPTS));
}

fuzz_target!(|data: &[u8]| {
    if let Ok((_, facts)) = npm_entry(data, "1.0.0") {
        check(&facts);
    }
    if let Ok(f) = pypi_facts(data, "1.0.0") {
        check(&f);
    }
    let _ = pypi_provenance_listing(data, "demo-1.0.0-py3-none-any.whl");
    let _ = pypi_provenance(data);
});
