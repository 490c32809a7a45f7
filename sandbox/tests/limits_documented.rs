//! docs/sandbox.md names every limit of the sandbox and the probe: each `pub const` of a size,
//! count or time in `sandbox/src` and `probe/src` appears there.

#[test]
fn every_sandbox_and_probe_limit_is_in_sandbox_md() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/sandbox.md")).unwrap();
    let mut names = Vec::new();
    for dir in ["sandbox/src", "probe/src"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let source = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            names.extend(source.lines().filter_map(|l| {
                let (name, ty) = l.strip_prefix("pub const ")?.split_once(": ")?;
                let limit = ["usize", "u64", "Duration", "std::time::Duration"]
                    .iter()
                    .any(|t| ty.starts_with(&format!("{t} ")));
                limit.then(|| name.to_owned())
            }));
        }
    }
    assert!(names.len() >= 25, "found {names:?}");
    let missing: Vec<_> = names
        .iter()
        .filter(|n| !doc.contains(&format!("`{n}`")))
        .collect();
    assert!(missing.is_empty(), "not in docs/sandbox.md: {missing:?}");
}
