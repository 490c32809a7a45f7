//! `/api/openapi.json` describes exactly the routes the router has (read from the sources'
//! `.route("…")` calls), and is valid JSON with an operation per method.

mod support;

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

/// The proof parameters' bounds in `/api/openapi.json` are the ones the code accepts: each of
/// `index`, `size`, `old` and `new` at its documented minimum and maximum (0 and u64::MAX) is
/// answered with a status the operation documents and never refused as a bad request (a size
/// of 0 is the empty tree: 404, not 400), and one past the maximum is a 400.
#[tokio::test]
async fn the_proof_parameters_bounds_are_the_ones_the_code_accepts() {
    let doc: serde_json::Value = serde_json::from_str(toolmark_api::ops::OPENAPI).unwrap();
    let p = support::populated("openapi-proof-bounds");
    for (route, required, optional) in [
        ("/api/v1/proof/inclusion", "index", "size"),
        ("/api/v1/proof/consistency", "old", "new"),
    ] {
        let operation = &doc["paths"][route]["get"];
        let documented: Vec<&str> = operation["responses"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        for name in [required, optional] {
            let parameter = operation["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|q| q["name"] == name)
                .unwrap();
            let schema = &parameter["schema"];
            let bounds = [schema["minimum"].as_u64(), schema["maximum"].as_u64()];
            assert_eq!(bounds, [Some(0), Some(u64::MAX)], "{route} {name}");
            // The other parameter at an ordinary value, so each bound is what is judged.
            let query = |value: &str| {
                if name == required {
                    format!("{route}?{name}={value}")
                } else {
                    format!("{route}?{required}=1&{name}={value}")
                }
            };
            for value in [0, u64::MAX] {
                let path = query(&value.to_string());
                let (status, _, body) = support::get(&p.state, &path).await;
                let body = String::from_utf8_lossy(&body);
                assert_ne!(
                    status,
                    axum::http::StatusCode::BAD_REQUEST,
                    "{path}: {body}"
                );
                assert!(
                    documented.contains(&status.as_str()),
                    "{path}: {status} is not documented ({documented:?}): {body}"
                );
            }
            let past = query("18446744073709551616");
            let (status, _, _) = support::get(&p.state, &past).await;
            assert_eq!(status, axum::http::StatusCode::BAD_REQUEST, "{past}");
        }
    }
}
