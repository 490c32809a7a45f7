//! Any bytes: decoding a log entry never panics, and an entry that decodes encodes to exactly
//! those bytes, which are also what the general RFC 8785 canonicaliser makes of them. The other
//! way round, an entry built from the input that encodes decodes back to itself (so the
//! decoder's success path is reached without a seed corpus).
#![no_main]
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use toolmark_log::entry::{Entry, EntrySurface, KindEntry, MtlResult, Status, Subject, valid_time};
use toolmark_toolset::surface::Kind;
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
    // A kind as an entry holds it: read (a digest and a count) or not (a status name).
    let kind_entry = |u: &mut Unstructured| -> Result<KindEntry> {
        Ok(if u.arbitrary()? {
            KindEntry::Read {
                digest: sri(u)?.unwrap_or_else(|| Sri::of(b"")),
                count: u.arbitrary()?,
            }
        } else {
            let name: String = u.arbitrary()?;
            KindEntry::Unread(Status::new(name).unwrap_or_else(|_| Status::ok()))
        })
    };
    let tool_index = sri(u)?;
    let surface = if u.arbitrary()? {
        // Each kind at most once, in the order of their names (as an entry is encoded).
        let mut kinds = Kind::ALL.to_vec();
        kinds.sort_by_key(|k| k.as_str());
        let mut surface = EntrySurface::new();
        for kind in kinds {
            if u.arbitrary()? {
                surface.push((kind, kind_entry(u)?));
            }
        }
        Some(surface)
    } else {
        None
    };
    let second = if u.arbitrary()? {
        Some(kind_entry(u)?)
    } else {
        None
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
        tool_index,
        surface,
        second,
    })
}
