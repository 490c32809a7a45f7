//! docs/crawler.md's limits table (the one operators read) lists every limit of
//! `toolmark_mcp::limits` too, which the crawler runs under and re-exports.

#[path = "support/limits_table.rs"]
mod limits_table;

#[test]
fn every_session_limit_is_in_the_crawler_limits_table() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (names, missing) = limits_table::limits_and_undocumented(root);
    assert_eq!(names.len(), 11, "found {names:?}");
    assert!(missing.is_empty(), "not in docs/crawler.md: {missing:?}");
}
