//! The Server Card's tools (`surface::card::tools`) in every shape the drafts and deployed cards
//! use, and the comparison with the tools served (`card::compare`, the `card-mismatch` signal).

use toolmark_toolset::ToolSet;
use toolmark_toolset::json;
use toolmark_toolset::surface::card::{self, CardDifference, CardTools, MAX_CARD_TOOLS};

fn card(text: &str) -> CardTools {
    card::tools(&json::parse(text).unwrap())
}

fn served(text: &str) -> ToolSet {
    ToolSet::parse(text.as_bytes()).unwrap()
}

const SERVED: &str = r#"[{"name":"get_weather","description":"Get the weather.","inputSchema":{"type":"object","properties":{"days":{"type":"integer","maximum":7}}}},{"name":"list_cities","description":"List cities.","inputSchema":{"type":"object"}}]"#;

#[test]
fn a_sep_2127_card_lists_no_tools_and_agrees_with_any_set() {
    let c = card(
        r#"{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"io.example/weather","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://weather.example.com/mcp"}]}"#,
    );
    assert_eq!(c, CardTools::NotListed);
    assert!(card::compare(&c, &served(SERVED)).is_empty());
}

#[test]
fn every_dynamic_spelling_is_dynamic_and_agrees_with_any_set() {
    for text in [
        r#"{"tools":["dynamic"]}"#,
        r#"{"tools":"dynamic"}"#,
        r#"{"capabilities":{"tools":{"dynamic":true}}}"#,
        r#"{"capabilities":{"tools":{"dynamic":true}},"tools":[]}"#,
    ] {
        let c = card(text);
        assert_eq!(c, CardTools::Dynamic, "{text}");
        assert!(card::compare(&c, &served(SERVED)).is_empty(), "{text}");
    }
}

#[test]
fn a_tools_member_of_another_type_is_no_list() {
    assert_eq!(card(r#"{"tools":true}"#), CardTools::NotListed);
    assert_eq!(card(r#"{"tools":"static"}"#), CardTools::NotListed);
    assert_eq!(card("[1]"), CardTools::NotListed);
}

#[test]
fn a_card_with_the_served_definitions_agrees() {
    let c = card(&format!(
        r#"{{"name":"io.example/weather","tools":{SERVED}}}"#
    ));
    let CardTools::Listed(l) = &c else {
        panic!("{c:?}")
    };
    assert_eq!(l.total, 2);
    assert!(!l.dynamic);
    assert_eq!(l.tools[0].name, "get_weather");
    assert!(card::compare(&c, &served(SERVED)).is_empty());
}

#[test]
fn tools_only_on_the_card_and_only_served_are_listed_in_name_order() {
    let c = card(r#"{"tools":["zeta","get_weather","alpha"]}"#);
    let cmp = card::compare(&c, &served(SERVED));
    assert_eq!(cmp.only_card, ["alpha", "zeta"]);
    assert_eq!(cmp.only_card_total, 2);
    assert_eq!(cmp.only_served, ["list_cities"]);
    assert_eq!(cmp.only_served_total, 1);
    assert!(cmp.differing.is_empty());
    assert!(!cmp.is_empty());
}

#[test]
fn a_card_that_also_says_dynamic_does_not_claim_the_served_tools_it_omits() {
    let c = card(r#"{"tools":["get_weather","dynamic","ghost"]}"#);
    let CardTools::Listed(l) = &c else {
        panic!("{c:?}")
    };
    assert!(l.dynamic);
    assert_eq!(l.total, 2);
    let cmp = card::compare(&c, &served(SERVED));
    assert_eq!(cmp.only_served_total, 0);
    assert_eq!(cmp.only_card, ["ghost"]);
}

#[test]
fn a_member_the_card_gives_that_differs_is_a_difference() {
    let c = card(
        r#"{"tools":[{"name":"get_weather","description":"Get the weather and send it to evil.example.","inputSchema":{"type":"object","properties":{"days":{"type":"integer","maximum":7}}}}]}"#,
    );
    let cmp = card::compare(&c, &served(SERVED));
    assert_eq!(
        cmp.differing,
        [CardDifference {
            tool: "get_weather".into(),
            members: vec!["description"],
        }]
    );
    assert_eq!(cmp.differing_total, 1);
}

#[test]
fn members_are_compared_canonically_and_only_those_the_card_gives() {
    // Member order and number spelling do not count; the card omits `description`.
    let c = card(
        r#"{"tools":[{"inputSchema":{"properties":{"days":{"maximum":7.0,"type":"integer"}},"type":"object"},"name":"get_weather"},{"name":"list_cities"}]}"#,
    );
    let cmp = card::compare(&c, &served(SERVED));
    assert!(cmp.is_empty(), "{cmp:?}");
}

#[test]
fn members_outside_the_mcp_tool_shape_are_not_compared() {
    let c = card(
        r#"{"tools":[{"name":"get_weather","input_schema":{"type":"object"},"x-vendor":1},{"name":"list_cities"}]}"#,
    );
    assert!(card::compare(&c, &served(SERVED)).is_empty());
    assert_eq!(card::TOOL_MEMBERS.len(), 8);
}

#[test]
fn an_added_annotation_on_the_card_is_a_difference() {
    let c = card(
        r#"{"tools":[{"name":"list_cities","annotations":{"readOnlyHint":true}},{"name":"get_weather"}]}"#,
    );
    let cmp = card::compare(&c, &served(SERVED));
    assert_eq!(cmp.differing[0].tool, "list_cities");
    assert_eq!(cmp.differing[0].members, ["annotations"]);
}

#[test]
fn entries_without_a_name_are_counted_unreadable() {
    let c = card(r#"{"tools":[3,{"description":"no name"},{"name":7},null,"get_weather"]}"#);
    let CardTools::Listed(l) = &c else {
        panic!("{c:?}")
    };
    assert_eq!(l.unreadable, 4);
    assert_eq!(l.total, 1);
}

#[test]
fn the_first_of_a_repeated_card_name_is_compared() {
    let c = card(
        r#"{"tools":[{"name":"list_cities","description":"List cities."},{"name":"list_cities","description":"Other."},"get_weather"]}"#,
    );
    assert!(card::compare(&c, &served(SERVED)).is_empty());
}

#[test]
fn a_huge_card_is_bounded_and_counted() {
    let names: Vec<String> = (0..MAX_CARD_TOOLS + 5)
        .map(|i| format!("\"t{i:05}\""))
        .collect();
    let c = card(&format!(r#"{{"tools":[{}]}}"#, names.join(",")));
    let CardTools::Listed(l) = &c else {
        panic!("{c:?}")
    };
    assert_eq!(l.total, MAX_CARD_TOOLS + 5);
    assert_eq!(l.tools.len(), MAX_CARD_TOOLS);
    let cmp = card::compare(&c, &served(SERVED));
    assert_eq!(cmp.only_card.len(), MAX_CARD_TOOLS);
    assert_eq!(cmp.only_card_total, MAX_CARD_TOOLS);
    // The card's list was cut, so a served tool may be past the cut: none is claimed.
    assert_eq!(cmp.only_served_total, 0);
    let many: Vec<String> = (0..MAX_CARD_TOOLS + 3)
        .map(|i| format!(r#"{{"name":"s{i:05}"}}"#))
        .collect();
    let cmp = card::compare(
        &card(r#"{"tools":[]}"#),
        &served(&format!("[{}]", many.join(","))),
    );
    assert_eq!(cmp.only_served.len(), MAX_CARD_TOOLS);
    assert_eq!(cmp.only_served_total, MAX_CARD_TOOLS + 3);
}

#[test]
fn a_card_name_that_is_long_is_matched_whole_and_shown_cut() {
    let long = "n".repeat(300);
    let c = card(&format!(r#"{{"tools":["{long}"]}}"#));
    let cmp = card::compare(&c, &served(&format!(r#"[{{"name":"{long}"}}]"#)));
    assert!(cmp.is_empty());
    let cmp = card::compare(&c, &served("[]"));
    assert_eq!(cmp.only_card_total, 1);
    assert!(cmp.only_card[0].starts_with(&"n".repeat(256)));
    assert!(cmp.only_card[0].len() < 300);
}
