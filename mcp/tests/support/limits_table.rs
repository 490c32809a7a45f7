//! The check both limits tables share: every `pub const` of a `limits.rs` has its row in
//! docs/crawler.md's limits table (a line starting `| `NAME` |`).

use std::path::Path;

/// The constants `pub const`-declared in `crate_dir/src/limits.rs`, and those of them
/// docs/crawler.md's table has no row for.
pub fn limits_and_undocumented(crate_dir: &Path) -> (Vec<String>, Vec<String>) {
    let source = std::fs::read_to_string(crate_dir.join("src/limits.rs")).unwrap();
    let doc = std::fs::read_to_string(crate_dir.join("../docs/crawler.md")).unwrap();
    let names: Vec<String> = source
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter_map(|l| l.split(':').next())
        .map(str::to_owned)
        .collect();
    let missing = names
        .iter()
        .filter(|n| !doc.contains(&format!("| `{n}` |")))
        .cloned()
        .collect();
    (names, missing)
}
