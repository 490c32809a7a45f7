//! docs/crawler.md lists every limit of `crawler::limits` (the table operators read).

#[path = "../../mcp/tests/support/limits_table.rs"]
mod limits_table;

#[test]
fn every_limit_is_documented() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (names, missing) = limits_table::limits_and_undocumented(root);
    assert!(names.len() >= 19, "found {names:?}");
    assert!(missing.is_empty(), "not in docs/crawler.md: {missing:?}");
}
