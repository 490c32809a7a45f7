//! docs/crawler.md lists every limit of `outbound::limits` (the crawler re-exports them, and
//! operators read them in its limits table).

#[path = "../../mcp/tests/support/limits_table.rs"]
mod limits_table;

#[test]
fn every_limit_is_documented() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (names, missing) = limits_table::limits_and_undocumented(root);
    assert!(names.len() >= 5, "found {names:?}");
    assert!(missing.is_empty(), "not in docs/crawler.md: {missing:?}");
}
