//! docs/crawler.md's limits table (the one operators read) lists every limit of
//! `toolmark_mcp::limits` too, which the crawler runs under and re-exports.

#[test]
fn every_session_limit_is_in_the_crawler_limits_table() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("src/limits.rs")).unwrap();
    let doc = std::fs::read_to_string(root.join("../docs/crawler.md")).unwrap();
    let names: Vec<&str> = source
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert_eq!(names.len(), 6, "found {names:?}");
    let missing: Vec<&&str> = names
        .iter()
        .filter(|n| !doc.contains(&format!("| `{n}` |")))
        .collect();
    assert!(missing.is_empty(), "not in docs/crawler.md: {missing:?}");
}
