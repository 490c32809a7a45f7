//! `/api/openapi.json` describes exactly the routes the router has (read from the sources'
//! `.route("…")` calls), and is valid JSON with an operation per method.

use std::collections::BTreeSet;

#[test]
fn openapi_lists_every_route() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut routed = BTreeSet::new();
    // The sources, modules in directories (the desk's `src/desk/`) included.
    let mut files = Vec::new();
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for path in files {
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for part in text.split(".route(").skip(1) {
                let Some(route) = part
                    .trim_start()
                    .strip_prefix('"')
                    .and_then(|r| r.split('"').next())
                else {
                    continue;
                };
                // Embedded desk assets are files, not API operations.
                if route != "/desk/{name}" {
                    routed.insert(route.replace("{*path}", "{path}"));
                }
            }
        }
    }
    let doc: serde_json::Value = serde_json::from_str(toolmark_api::ops::OPENAPI).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let documented: BTreeSet<String> = doc["paths"].as_object().unwrap().keys().cloned().collect();
    assert!(routed.len() >= 25, "{routed:?}");
    assert_eq!(routed, documented, "router routes vs. openapi.json paths");
}
