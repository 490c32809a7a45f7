//! Any bytes as a DNS query to the probe's sink: parsing never panics, a question it reads
//! lies within the query and is echoed exactly in the answer, and a name (escaped) is never
//! over four times the 255 bytes a wire name may have.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_probe::dns;

fuzz_target!(|data: &[u8]| {
    if let Some(q) = dns::parse(data) {
        assert!(q.name.len() <= 4 * 255);
        assert_eq!(&data[12..12 + q.raw.len()], q.raw.as_slice());
        let a = dns::answer(&q, Some(dns::address(0)));
        assert_eq!(&a[..2], &data[..2]);
        assert_eq!(&a[12..12 + q.raw.len()], q.raw.as_slice());
    }
});
