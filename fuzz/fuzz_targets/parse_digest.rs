//! Any bytes: parsing a tool set never panics, and whatever parses has a full digest, an MTL/1
//! answer (digest or error code) and a sensitive split.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_toolset::{ToolSet, full, mtl1, sensitive};

fuzz_target!(|data: &[u8]| {
    if let Ok(set) = ToolSet::parse(data) {
        let _ = full::digest(&set);
        let _ = mtl1::tool_set_digest(&set);
        let info = mtl1::SubjectInfo {
            server_name: "fuzz".into(),
            registry: "r".into(),
            ..Default::default()
        };
        if mtl1::build_subject(&info, &set).is_err() {
            let _ = mtl1::fallback_subject(&info, &set);
        }
        let patterns = sensitive::parse_patterns(&["*a*", "x/*", "mcp://x/*"]).unwrap();
        let starter = toolmark_toolset::policy::STARTER.compile();
        let names = sensitive::ServerNames::new(["x"]);
        let _ = sensitive::classify_sensitive(&set, &patterns, Some(&starter), &names);
    }
});
