//! docs/crawler.md lists every limit of `crawler::limits` (the table operators read).

#[test]
fn every_limit_is_documented() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("src/limits.rs")).unwrap();
    let doc = std::fs::read_to_string(root.join("../docs/crawler.md")).unwrap();
    let names: Vec<&str> = source
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert!(names.len() >= 20, "found {names:?}");
    let missing: Vec<&&str> = names
        .iter()
        .filter(|n| !doc.contains(&format!("| `{n}` |")))
        .collect();
    assert!(missing.is_empty(), "not in docs/crawler.md: {missing:?}");
}
