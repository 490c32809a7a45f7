//! The starter policy against the real tool sets of `tests/fixtures/corpus/` (the demo serves
//! the same sets): exactly these tools are called sensitive, in these categories, and every
//! read-only tool (`read_*`, `list_*`, `get_*`, `search_*`, …) stays safe.

use std::collections::BTreeMap;

use toolmark_toolset::ToolSet;
use toolmark_toolset::policy::STARTER;
use toolmark_toolset::sensitive::{ServerNames, classify_sensitive};

fn corpus(path: &str) -> ToolSet {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/corpus")
        .join(path);
    ToolSet::parse(&std::fs::read(&p).unwrap()).unwrap()
}

/// Tool → categories, as `classify_sensitive` reports them with the starter policy.
fn categories(path: &str) -> (BTreeMap<String, Vec<&'static str>>, Vec<String>) {
    let c = STARTER.compile();
    let split = classify_sensitive(&corpus(path), &[], Some(&c), &ServerNames::none());
    let cats = split.categories.unwrap();
    assert_eq!(cats.len(), split.sensitive.len(), "{path}");
    (cats, split.safe)
}

fn only(path: &str, category: &str) -> Vec<String> {
    let (cats, _) = categories(path);
    cats.into_iter()
        .filter(|(_, c)| c.contains(&category))
        .map(|(t, _)| t)
        .collect()
}

#[test]
fn the_filesystem_server_writes_files() {
    let (cats, safe) = categories("mcp-proxy-snapshots/server-filesystem.json");
    let got: Vec<(&str, &[&str])> = cats
        .iter()
        .map(|(t, c)| (t.as_str(), c.as_slice()))
        .collect();
    let files: &[&str] = &["files-and-storage"];
    assert_eq!(
        got,
        [
            ("create_directory", files),
            ("edit_file", files),
            ("move_file", files),
            ("write_file", files)
        ]
    );
    for read in [
        "read_file",
        "read_text_file",
        "read_media_file",
        "read_multiple_files",
        "list_directory",
        "list_directory_with_sizes",
        "directory_tree",
        "search_files",
        "get_file_info",
        "list_allowed_directories",
    ] {
        assert!(safe.contains(&read.to_owned()), "{read}");
    }
}

#[test]
fn the_memory_server_deletes() {
    let (cats, safe) = categories("mcp-proxy-snapshots/server-memory.json");
    assert_eq!(
        cats.keys().collect::<Vec<_>>(),
        ["delete_entities", "delete_observations", "delete_relations"]
    );
    assert!(cats.values().all(|c| c == &["destructive-database"]));
    assert_eq!(
        safe,
        [
            "create_entities",
            "create_relations",
            "add_observations",
            "read_graph",
            "search_nodes",
            "open_nodes"
        ]
    );
}

#[test]
fn read_only_servers_have_nothing_sensitive() {
    for path in [
        "mcp-proxy-snapshots/mcp-server-fetch.json",
        "mcp-proxy-snapshots/cloudflare-docs.json",
        "mcp-proxy-snapshots/server-puppeteer.json",
    ] {
        assert!(categories(path).0.is_empty(), "{path}");
    }
}

#[test]
fn alfresco_uploads_and_deletes() {
    let (cats, _) = categories("docker-mcp-registry/alfresco.tools.json");
    let got: Vec<(&str, &[&str])> = cats
        .iter()
        .map(|(t, c)| (t.as_str(), c.as_slice()))
        .collect();
    assert_eq!(
        got,
        [
            ("delete_node", &["destructive-database"][..]),
            ("upload_file", &["files-and-storage"][..])
        ]
    );
}

#[test]
fn okta_is_admin_and_deletes_but_its_reads_stay_safe() {
    let path = "docker-mcp-registry/okta-mcp-server.tools.json";
    let (cats, safe) = categories(path);
    // Every get_* and list_* tool is safe.
    let reads: Vec<&String> = cats
        .keys()
        .filter(|t| t.starts_with("get_") || t.starts_with("list_"))
        .collect();
    assert!(reads.is_empty(), "{reads:?}");
    assert!(safe.iter().any(|t| t == "list_users") && safe.iter().any(|t| t == "get_user"));
    assert_eq!(
        only(path, "admin"),
        [
            "activate_application",
            "activate_policy",
            "activate_policy_rule",
            "add_user_to_group",
            "create_device_assurance_policy",
            "create_group",
            "create_policy",
            "create_policy_rule",
            "create_user",
            "deactivate_application",
            "deactivate_policy",
            "deactivate_policy_rule",
            "deactivate_user",
            "delete_deactivated_user",
            "delete_device_assurance_policy",
            "delete_policy",
            "delete_policy_rule",
            "replace_device_assurance_policy",
            "update_policy",
            "update_policy_rule",
            "update_user"
        ]
    );
    assert_eq!(only(path, "email-and-messaging"), ["send_test_email"]);
    assert!(only(path, "money").is_empty());
    assert!(only(path, "external-writes").is_empty());
    // Every delete_* and the removal from a group are destructive.
    let destructive = only(path, "destructive-database");
    assert_eq!(destructive.len(), 21, "{destructive:?}");
    assert!(
        destructive
            .iter()
            .all(|t| t.contains("delete") || t.starts_with("remove_"))
    );
}
