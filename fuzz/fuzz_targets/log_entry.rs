//! Any bytes: decoding a log entry never panics, and an entry that decodes encodes to exactly
//! those bytes, which are also what the general RFC 8785 canonicaliser makes of them. The other
//! way round, an entry built from the input that encodes decodes back to itself (so the
//! decoder's success path is reached without a seed corpus).
#![no_main]
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use toolmark_log::entry::{Entry, MtlResult, Status, Subject, valid_time};
use toolmark_toolset::Sri;
use toolmark_toolset::canon::{self, Numbers};
use toolmark_toolset::json;

fuzz_target!(|data: &[u8]| {
    if let Ok(e) = Entry::decode(data) {
        assert_eq!(e.encode().expect("decoded entry encodes"), data);
        assert_canonical(data);
    }
    if let Ok(e) = build(&mut Unstructured::new(data)) {
        if let Ok(bytes) = e.encode() {
            assert_canonical(&bytes);
            assert_eq!(
                Entry::decode(&bytes).as_ref(),
                Ok(&e),
                "{}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
});

fn assert_canonical(bytes: &[u8]) {
    let value = json::parse(std::str::from_utf8(bytes).unwrap()).expect("entry is JSON");
    let canonical = canon::to_vec(&value, Numbers::IntegersOnly).expect("integers only");
    assert_eq!(canonical, bytes, "{}", String::from_utf8_lossy(bytes));
}

/// An entry whose digests are valid SRI digests, whose status is a name and whose time is valid
/// often enough to encode.
fn build(u: &mut Unstructured) -> Result<Entry> {
    let sri = |u: &mut Unstructured| -> Result<Option<Sri>> {
        Ok(match u.int_in_range(0..=2u8)? {
            0 => None,
            1 => Some(Sri::of(b"")),
            _ => Some(Sri(u.arbitrary()?)),
        })
    };
    let t: String = u.arbitrary()?;
    let status: String = u.arbitrary()?;
    let mtl1 = match u.int_in_range(0..=2u8)? {
        0 => None,
        1 => sri(u)?.map(MtlResult::Digest),
        _ => Some(MtlResult::Error(u.arbitrary()?)),
    };
    Ok(Entry {
        subject: Subject {
            server: u.arbitrary()?,
            target: u.arbitrary()?,
            package: u.arbitrary()?,
        },
        observed_at: if valid_time(&t) {
            t
        } else {
            "2026-11-30T14:00:00Z".into()
        },
        status: Status::new(status).unwrap_or_else(|_| Status::ok()),
        detail: u.arbitrary()?,
        mtl1,
        full: sri(u)?,
        tools: u.arbitrary()?,
        raw: sri(u)?,
        prev: u.arbitrary()?,
    })
}
