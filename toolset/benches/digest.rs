//! Digest throughput from bytes, on the inputs HISTOR's side of `bench/run.sh` also digests:
//!
//! * `okta`: `tests/fixtures/corpus/docker-mcp-registry/okta-mcp-server.tools.json` (108 tools);
//! * `gen5000`: the generated 5,000-tool set (`benches/support/realistic.rs`), read from
//!   `<target>/tmp/tools-5000.json` and written there first when missing
//!   (`examples/gen_toolset.rs` writes the same bytes).
//!
//! For each: `parse` (`ToolSet::parse` alone, to see where the time goes), `mtl1` (parse + MTL/1
//! digest) and `full` (parse + toolmark/1 full digest), with criterion's byte throughput.
//! `bench/run.sh` turns criterion's estimates and HISTOR's timings into one table.

/// The allocator the `toolmark` binary ships with (src/main.rs), so these figures are what the
/// binary gets.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/realistic.rs"]
mod realistic;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;
use toolmark_toolset::{ToolSet, full, mtl1};

const OKTA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/corpus/docker-mcp-registry/okta-mcp-server.tools.json"
);
const GENERATED: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/tools-5000.json");

fn generated() -> Vec<u8> {
    let path = Path::new(GENERATED);
    if let Ok(bytes) = std::fs::read(path) {
        if bytes == realistic::tool_set(5000).as_bytes() {
            return bytes;
        }
    }
    let text = realistic::tool_set(5000);
    std::fs::create_dir_all(path.parent().expect("a directory")).expect("create target/tmp");
    std::fs::write(path, &text).expect("write the generated set");
    text.into_bytes()
}

fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("okta", std::fs::read(OKTA).expect("read the okta fixture")),
        ("gen5000", generated()),
    ]
}

fn digest(c: &mut Criterion) {
    for (name, bytes) in inputs() {
        // The inputs must be digestible, or `mtl1` would time an early error.
        let set = ToolSet::parse(&bytes).expect("the input parses");
        mtl1::tool_set_digest(&set).expect("MTL/1 digests the input");

        let mut group = c.benchmark_group("digest");
        group.throughput(Throughput::BytesDecimal(bytes.len() as u64));
        if bytes.len() > 1_000_000 {
            group.sample_size(20);
            group.measurement_time(Duration::from_secs(8));
        }
        group.bench_with_input(BenchmarkId::new("parse", name), &bytes, |b, bytes| {
            b.iter(|| ToolSet::parse(black_box(bytes)).expect("parses"))
        });
        group.bench_with_input(BenchmarkId::new("mtl1", name), &bytes, |b, bytes| {
            b.iter(|| {
                let set = ToolSet::parse(black_box(bytes)).expect("parses");
                mtl1::tool_set_digest(&set).expect("digests")
            })
        });
        group.bench_with_input(BenchmarkId::new("full", name), &bytes, |b, bytes| {
            b.iter(|| {
                let set = ToolSet::parse(black_box(bytes)).expect("parses");
                full::digest(&set)
            })
        });
        group.finish();
    }
}

criterion_group!(benches, digest);
criterion_main!(benches);
