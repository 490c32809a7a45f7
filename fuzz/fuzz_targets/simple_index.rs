//! Any bytes as a Python simple-index page (PEP 503): reading its links never panics and keeps
//! at most `MAX_SIMPLE_LINKS`; choosing a wheel from it never panics, and a chosen wheel has a
//! 64-hex SHA-256, an HTTP URL without a fragment, and a file name the page listed.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_crawler::packages::{MAX_SIMPLE_LINKS, pypi_simple_wheel, simple_links};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let links = simple_links(text);
        assert!(links.len() <= MAX_SIMPLE_LINKS);
        if let Ok(wheel) =
            pypi_simple_wheel(data, "demo", "1.0", "https://index.example/simple/demo/")
        {
            assert_eq!(wheel.sha256.len(), 64);
            assert!(wheel.url.starts_with("http") && !wheel.url.contains('#'));
            assert!(links.iter().any(|l| l.text == wheel.filename));
        }
    }
});
