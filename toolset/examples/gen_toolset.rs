//! Write the benchmark's generated tool set to a file, for HISTOR's side of `bench/run.sh`.
//!
//! ```text
//! cargo run --release -p toolmark-toolset --example gen_toolset -- PATH [TOOLS]
//! ```
//!
//! TOOLS defaults to 5000. The bytes are the ones `benches/digest.rs` measures (same generator,
//! fixed seed); the program checks that MTL/1 digests them and prints size and digests.

#[path = "../benches/support/realistic.rs"]
mod realistic;

use toolmark_toolset::{Sri, ToolSet, full, mtl1};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: gen_toolset PATH [TOOLS]");
        std::process::exit(2);
    };
    let n: usize = args
        .next()
        .map(|a| a.parse().expect("TOOLS is a number"))
        .unwrap_or(5000);
    let text = realistic::tool_set(n);
    let set = ToolSet::parse(text.as_bytes()).expect("the generated set parses");
    let mtl1 = mtl1::tool_set_digest(&set).expect("MTL/1 digests the generated set");
    if let Some(dir) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(dir).expect("create the output directory");
    }
    std::fs::write(&path, &text).expect("write the tool set");
    println!(
        "{path}: {n} tools, {} bytes, file {}, MTL/1 {mtl1}, full {}",
        text.len(),
        Sri::of(text.as_bytes()),
        full::digest(&set)
    );
}
