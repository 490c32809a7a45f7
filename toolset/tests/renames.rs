//! Renames: a removed and an added tool whose definitions are near-identical are one tool
//! renamed (`diff::Rename`), classified as a modified tool is (`tool-renamed`), and shown so.

use serde_json::{Value, json};
use toolmark_toolset::classify::{self, Class, Classification};
use toolmark_toolset::diff::{self, DescriptionDiff, Diff, RENAME_MIN_SIMILARITY_PERCENT};
use toolmark_toolset::{ToolSet, render};

fn set(tools: Value) -> ToolSet {
    ToolSet::parse(tools.to_string().as_bytes()).unwrap()
}

fn change(old: Value, new: Value) -> (Diff, Classification) {
    let (old, new) = (set(old), set(new));
    (diff::diff(&old, &new), classify::classify(&old, &new))
}

fn rules(c: &Classification) -> Vec<&str> {
    c.signals.iter().map(|s| s.rule).collect()
}

fn weather(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Get the current weather for a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    })
}

#[test]
fn an_identical_definition_under_a_new_name_is_a_benign_rename() {
    let (d, c) = change(
        json!([weather("get_weather")]),
        json!([weather("get_city_weather")]),
    );
    assert_eq!(d.renames_total, 1);
    let r = &d.renames[0];
    assert_eq!(
        (r.from.as_str(), r.to.as_str()),
        ("get_weather", "get_city_weather")
    );
    assert!(r.identical);
    assert_eq!(r.similarity, 100);
    assert_eq!(r.changes, None);
    assert_eq!((d.added_total, d.removed_total), (0, 0));
    assert!(d.added.is_empty() && d.removed.is_empty());
    assert!(!d.is_empty());
    assert_eq!(c.class, Class::Benign);
    assert_eq!(rules(&c), ["tool-renamed"]);
    let s = &c.signals[0];
    assert_eq!(s.tool.as_deref(), Some("get_city_weather"));
    assert_eq!(s.path.as_deref(), Some("$['name']"));
    assert_eq!(s.old.as_deref(), Some("get_weather"));
    assert_eq!(s.new.as_deref(), Some("get_city_weather"));
    assert_eq!(s.detail.as_deref(), Some("identical but for the name"));
    assert_eq!(c.tools.len(), 1);
    assert_eq!(c.tools[0].tool, "get_city_weather");
}

#[test]
fn a_rename_with_a_small_description_edit_carries_its_diff_and_signal() {
    let mut new = weather("get_city_weather");
    new["description"] = json!("Gets the current weather for a city.");
    let (d, c) = change(json!([weather("get_weather")]), json!([new]));
    let r = &d.renames[0];
    assert!(!r.identical);
    // One character added to 35: 1 − 1/36 = 97.2 %, rounded down.
    assert_eq!(r.similarity, 97);
    let changes = r.changes.as_ref().unwrap();
    assert_eq!(changes.name, "get_city_weather");
    assert!(matches!(
        changes.description,
        Some(DescriptionDiff::Words { .. })
    ));
    assert_eq!(changes.input_schema, None);
    assert_eq!(rules(&c), ["tool-renamed", "description-small-edit"]);
    assert_eq!(
        c.signals[0].detail.as_deref(),
        Some("same input schema, descriptions 97% similar")
    );
    assert_eq!(c.class, Class::Benign);
}

#[test]
fn a_rename_that_flips_a_hint_is_dangerous() {
    let mut old = weather("get_weather");
    old["annotations"] = json!({"readOnlyHint": true, "destructiveHint": true});
    let mut new = weather("get_city_weather");
    new["annotations"] = json!({"readOnlyHint": true, "destructiveHint": false});
    let (d, c) = change(json!([old]), json!([new]));
    assert_eq!(d.renames_total, 1);
    assert!(!d.renames[0].identical);
    assert_eq!(d.renames[0].similarity, 100);
    assert_eq!(c.class, Class::Dangerous);
    assert_eq!(rules(&c), ["tool-renamed", "hint-changed"]);
}

#[test]
fn a_rename_whose_new_name_gains_a_data_flow_leg_is_unsure() {
    let (d, c) = change(
        json!([weather("get_weather")]),
        json!([weather("fetch_weather")]),
    );
    assert!(d.renames[0].identical);
    assert_eq!(rules(&c), ["tool-renamed", "leg-added"]);
    assert_eq!(
        c.signals[1].detail.as_deref(),
        Some("untrusted-input: name: fetch verb `fetch`")
    );
    assert_eq!(c.class, Class::Unsure);
}

#[test]
fn another_input_schema_is_not_a_rename() {
    let mut new = weather("get_city_weather");
    new["inputSchema"]["properties"]["units"] = json!({"type": "string"});
    let (d, c) = change(json!([weather("get_weather")]), json!([new]));
    assert_eq!(d.renames_total, 0);
    assert_eq!(d.added, ["get_city_weather"]);
    assert_eq!(d.removed, ["get_weather"]);
    // Signals come in name order: `get_city_weather` before `get_weather`.
    assert_eq!(rules(&c), ["tool-added", "tool-removed"]);
}

#[test]
fn the_similarity_threshold_is_eighty_percent_of_the_longer_description() {
    assert_eq!(RENAME_MIN_SIMILARITY_PERCENT, 80);
    let tool = |name: &str, d: &str| json!({"name": name, "description": d, "inputSchema": {}});
    // Ten characters, two edited: 80 %, a rename.
    let (d, _) = change(
        json!([tool("a", "abcdefghij")]),
        json!([tool("b", "abcdefghXY")]),
    );
    assert_eq!(d.renames_total, 1);
    assert_eq!(d.renames[0].similarity, 80);
    // Three edited: 70 %, an added and a removed tool.
    let (d, _) = change(
        json!([tool("a", "abcdefghij")]),
        json!([tool("b", "abcdefgXYZ")]),
    );
    assert_eq!(d.renames_total, 0);
    assert_eq!((d.added_total, d.removed_total), (1, 1));
}

#[test]
fn two_tools_without_descriptions_and_with_the_same_schema_are_a_rename() {
    let (d, _) = change(
        json!([{"name": "ping", "inputSchema": {}}]),
        json!([{"name": "health", "inputSchema": {}}]),
    );
    assert_eq!(d.renames_total, 1);
    assert!(d.renames[0].identical);
}

#[test]
fn pairs_are_chosen_best_first_identical_before_similar() {
    let tool = |name: &str, d: &str| json!({"name": name, "description": d, "inputSchema": {}});
    // "b_old" is identical to "z_new" but for the name; "a_old" is only similar. The added tool
    // goes to the identical one although "a_old" comes first by name.
    let (d, _) = change(
        json!([
            tool("a_old", "List the files of a folder!"),
            tool("b_old", "List the files of a folder.")
        ]),
        json!([tool("z_new", "List the files of a folder.")]),
    );
    assert_eq!(d.renames_total, 1);
    assert_eq!(d.renames[0].from, "b_old");
    assert!(d.renames[0].identical);
    assert_eq!(d.removed, ["a_old"]);
}

#[test]
fn equal_candidates_pair_in_name_order() {
    let tool = |name: &str| json!({"name": name, "description": "Same.", "inputSchema": {}});
    let (d, _) = change(
        json!([tool("b1"), tool("a1")]),
        json!([tool("d2"), tool("c2")]),
    );
    let pairs: Vec<(&str, &str)> = d
        .renames
        .iter()
        .map(|r| (r.from.as_str(), r.to.as_str()))
        .collect();
    assert_eq!(pairs, [("a1", "c2"), ("b1", "d2")]);
}

#[test]
fn a_rename_into_a_sensitive_name_is_newly_sensitive_and_one_within_its_category_is_not() {
    let tool =
        |name: &str| json!({"name": name, "description": "Remove the files.", "inputSchema": {}});
    let (_, c) = change(json!([tool("list_files")]), json!([tool("delete_files")]));
    assert!(rules(&c).contains(&"newly-sensitive"), "{:?}", rules(&c));
    assert_eq!(c.class, Class::Unsure);
    let (d, c) = change(json!([tool("delete_files")]), json!([tool("delete_file")]));
    assert_eq!(d.renames_total, 1);
    assert_eq!(rules(&c), ["tool-renamed"]);
}

#[test]
fn descriptions_too_costly_to_compare_stay_unpaired_and_mark_the_diff_truncated() {
    let long = "word ".repeat(4_000);
    let (old, new) = (format!("{long}old"), format!("{long}new"));
    let (d, _) = change(
        json!([{"name": "a", "description": old, "inputSchema": {}}]),
        json!([{"name": "b", "description": new, "inputSchema": {}}]),
    );
    assert_eq!(d.renames_total, 0);
    assert_eq!((d.added_total, d.removed_total), (1, 1));
    assert!(d.truncated);
}

#[test]
fn a_diff_without_renames_serialises_as_before_and_one_with_renames_reads_back() {
    let (d, _) = change(json!([weather("a")]), json!([weather("a"), weather("b")]));
    let text = serde_json::to_string(&d).unwrap();
    assert!(!text.contains("renames"), "{text}");
    let back: Diff = serde_json::from_str(&text).unwrap();
    assert_eq!(back, d);
    let (d, _) = change(
        json!([weather("get_weather")]),
        json!([weather("get_city_weather")]),
    );
    let text = serde_json::to_string(&d).unwrap();
    assert!(
        text.contains(r#""renames":[{"from":"get_weather","to":"get_city_weather","identical":true,"similarity":100}],"renamesTotal":1"#),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<Diff>(&text).unwrap(), d);
}

#[test]
fn render_shows_a_rename_and_its_changes() {
    let mut new = weather("get_city_weather");
    new["description"] = json!("Gets the current weather for a city.");
    let (d, c) = change(json!([weather("get_weather")]), json!([new]));
    let out = render::text(&d, &c);
    assert!(
        out.contains(
            "renamed (1):\n  get_weather -> get_city_weather  (description 97% similar)\n    description: [-Get-]{+Gets+} the current weather for a city.\n"
        ),
        "{out}"
    );
    assert!(!out.contains("added"), "{out}");
    let (d, c) = change(json!([weather("a")]), json!([weather("b")]));
    assert!(
        render::text(&d, &c).contains("renamed (1):\n  a -> b  (identical but for the name)\n")
    );
}
