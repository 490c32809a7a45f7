//! One test per fact of the legs judge (`toolset::legs`): what gives a leg, how sure, what
//! takes it away, and the bounds.

use serde_json::{Value, json};
use toolmark_toolset::ToolSet;
use toolmark_toolset::legs::{
    Certainty, Leg, MAX_EVIDENCE, ToolLeg, set_legs, tool_legs, toxic_flow,
};

fn set(tools: Value) -> ToolSet {
    ToolSet::parse(tools.to_string().as_bytes()).unwrap()
}

fn legs(tool: Value) -> Vec<ToolLeg> {
    tool_legs(&set(json!([tool])).tools[0])
}

/// The certainty of each leg, in `Leg` order (`None`: no leg).
fn judged(tool: Value) -> [Option<Certainty>; 3] {
    let l = legs(tool);
    Leg::ALL.map(|leg| l.iter().find(|x| x.leg == leg).map(|x| x.certainty))
}

const C: Option<Certainty> = Some(Certainty::Confirmed);
const P: Option<Certainty> = Some(Certainty::Possible);

#[test]
fn a_read_verb_with_a_private_noun_confirms_private_data() {
    let t = json!({"name": "read_file", "description": "Read the complete contents of a file.",
                   "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}});
    let l = legs(t.clone());
    assert_eq!(judged(t)[0], C);
    let private = l.iter().find(|x| x.leg == Leg::PrivateData).unwrap();
    assert!(
        private.evidence.iter().any(|e| e.kind == "name"
            && e.detail.contains("`read`")
            && e.detail.contains("`file`")),
        "{private:?}"
    );
}

#[test]
fn names_split_in_every_style() {
    for name in ["readFile", "read-file", "read.file", "ReadFiles"] {
        assert_eq!(judged(json!({"name": name}))[0], C, "{name}");
    }
}

#[test]
fn a_file_read_may_hold_untrusted_text() {
    assert_eq!(
        judged(json!({"name": "get_file_contents"})),
        [C, P, None],
        "a file's content may be written by others"
    );
}

#[test]
fn a_fetch_verb_with_a_url_property_confirms_untrusted_input_and_outbound() {
    let t = json!({"name": "fetch", "description": "Fetches a URL from the internet.",
                   "inputSchema": {"type": "object",
                                   "properties": {"url": {"type": "string", "format": "uri"}}}});
    assert_eq!(judged(t), [None, C, C]);
}

#[test]
fn a_url_property_alone_is_possible_untrusted_input_and_outbound() {
    let t = json!({"name": "unfurl",
                   "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}});
    assert_eq!(judged(t), [None, P, P]);
}

#[test]
fn a_web_search_is_confirmed_untrusted_input() {
    assert_eq!(judged(json!({"name": "brave_web_search"})), [None, C, None]);
    assert_eq!(
        judged(json!({"name": "lookup", "description": "Search the web for pages."}))[1],
        C
    );
}

#[test]
fn reading_issues_comments_or_mail_is_confirmed_untrusted_input() {
    for name in [
        "get_issue_comments",
        "list-mail-messages",
        "slack_get_thread_replies",
    ] {
        assert_eq!(judged(json!({"name": name}))[1], C, "{name}");
    }
}

#[test]
fn a_send_verb_alone_confirms_outbound() {
    for name in [
        "send_email",
        "upload_file",
        "slack_post_message",
        "forward-mail-message",
    ] {
        assert_eq!(judged(json!({"name": name}))[2], C, "{name}");
    }
}

#[test]
fn a_write_verb_with_a_shared_noun_confirms_outbound() {
    for name in [
        "create_issue",
        "add_issue_comment",
        "create_pull_request",
        "API-patch-page",
    ] {
        assert_eq!(judged(json!({"name": name}))[2], C, "{name}");
    }
}

#[test]
fn a_send_word_that_is_a_noun_sends_nothing() {
    // `post`, `comment`, `email` after a read verb, or after another verb, are nouns.
    for name in [
        "get_post",
        "list_comments",
        "delete_email_domain",
        "stop_port_forward",
    ] {
        assert_eq!(judged(json!({"name": name}))[2], None, "{name}");
    }
}

#[test]
fn a_settings_noun_last_means_no_third_party_text_and_nothing_sent() {
    assert_eq!(judged(json!({"name": "list_email_templates"}))[1], None);
    assert_eq!(judged(json!({"name": "update_issue_label"}))[2], None);
}

#[test]
fn a_tool_that_only_changes_reads_nothing_by_its_description() {
    let t = json!({"name": "create_entities",
                   "description": "Create multiple new entities in the knowledge graph"});
    assert_eq!(judged(t), [None, None, None]);
}

#[test]
fn a_draft_is_not_sent() {
    let t = json!({"name": "create-draft-email", "description": "Draft a message to send.",
                   "inputSchema": {"type": "object",
                                   "properties": {"to": {"type": "string"}, "body": {"type": "string"}}}});
    assert_eq!(judged(t)[2], None);
    assert_eq!(judged(json!({"name": "send-draft-message"}))[2], C);
}

#[test]
fn recipient_and_body_properties_confirm_outbound() {
    let t = json!({"name": "notify_team",
                   "inputSchema": {"type": "object",
                                   "properties": {"recipient": {"type": "string"},
                                                  "message": {"type": "string"}}}});
    assert_eq!(judged(t)[2], C);
    let t = json!({"name": "contact",
                   "inputSchema": {"type": "object",
                                   "properties": {"address": {"type": "string", "format": "email"}}}});
    assert_eq!(judged(t)[2], P);
}

#[test]
fn an_http_method_with_a_url_confirms_outbound() {
    let t = json!({"name": "api_call",
                   "inputSchema": {"type": "object",
                                   "properties": {"method": {"type": "string"}, "url": {"type": "string"}}}});
    assert_eq!(judged(t)[2], C);
}

#[test]
fn running_commands_gives_every_leg_as_possible() {
    assert_eq!(judged(json!({"name": "exec_in_pod"})), [P, P, P]);
    // A run verb without code or a command to run is nothing of the kind.
    assert_eq!(
        judged(json!({"name": "run_migration_report"})),
        [None, None, None]
    );
}

#[test]
fn a_browser_capture_is_untrusted_input_and_an_interaction_may_send() {
    assert_eq!(judged(json!({"name": "browser_snapshot"})), [P, C, None]);
    assert_eq!(judged(json!({"name": "browser_type"})), [None, None, P]);
    assert_eq!(judged(json!({"name": "browser_click"})), [None, P, P]);
}

#[test]
fn a_public_tool_has_no_legs() {
    for name in [
        "get_weather",
        "get_current_time",
        "sequentialthinking",
        "search_documentation",
    ] {
        assert_eq!(
            judged(json!({"name": name}))[0..3],
            [None, None, None],
            "{name}"
        );
    }
}

#[test]
fn open_world_hint_alone_gives_no_leg() {
    // An explicit `openWorldHint: true` says what the default says: a tool with nothing else
    // gains no leg, so making the default explicit changes no leg.
    let t = json!({"name": "get_weather", "annotations": {"openWorldHint": true}});
    assert_eq!(judged(t), [None, None, None]);
    let t = json!({"name": "get_weather", "annotations": {"openWorldHint": true, "readOnlyHint": false}});
    assert_eq!(judged(t), [None, None, None]);
}

#[test]
fn open_world_hint_gives_possible_outbound_to_a_tool_that_makes_something() {
    let hinted = json!({"name": "create_refund",
                        "annotations": {"openWorldHint": true, "readOnlyHint": false}});
    assert_eq!(judged(hinted)[2], P);
    // The default says nothing: the same tool without annotations has no outbound leg.
    assert_eq!(judged(json!({"name": "create_refund"}))[2], None);
    // Read-only, it sends nothing.
    let ro = json!({"name": "create_refund",
                    "annotations": {"openWorldHint": true, "readOnlyHint": true}});
    assert_eq!(judged(ro)[2], None);
}

#[test]
fn open_world_hint_backs_other_evidence() {
    let t = |a: Value| {
        json!({"name": "unfurl", "annotations": a,
               "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}})
    };
    let hinted = legs(t(json!({"openWorldHint": true})));
    let untrusted = hinted
        .iter()
        .find(|l| l.leg == Leg::UntrustedInput)
        .unwrap();
    assert!(
        untrusted
            .evidence
            .iter()
            .any(|e| e.kind == "annotation" && e.detail == "openWorldHint: true"),
        "{untrusted:?}"
    );
}

#[test]
fn read_only_hint_drops_outbound_from_the_name_but_not_from_a_url() {
    let ro = json!({"readOnlyHint": true});
    assert_eq!(
        judged(json!({"name": "send_email", "annotations": ro}))[2],
        None
    );
    let t = json!({"name": "fetch", "annotations": ro,
                   "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}});
    assert_eq!(judged(t)[2], C);
}

#[test]
fn closed_world_hint_drops_weak_schema_evidence() {
    let t = json!({"name": "unfurl", "annotations": {"openWorldHint": false},
                   "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}});
    assert_eq!(judged(t), [None, None, None]);
}

#[test]
fn destructive_hint_is_not_read() {
    let a = judged(json!({"name": "delete_file", "annotations": {"destructiveHint": true}}));
    let b = judged(json!({"name": "delete_file", "annotations": {"destructiveHint": false}}));
    assert_eq!(a, b);
}

#[test]
fn weak_evidence_of_three_kinds_confirms() {
    // name (a read verb alone), description (read … document), schema (a path): three kinds.
    let t = json!({"name": "get", "description": "Get a document by its path.",
                   "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}});
    assert_eq!(judged(t)[0], C);
    let t = json!({"name": "get", "description": "Get a document by its path."});
    assert_eq!(judged(t)[0], P);
}

#[test]
fn the_judge_is_bounded_and_deterministic() {
    let props: serde_json::Map<String, Value> = (0..5_000)
        .map(|i| {
            (
                format!("url{i}"),
                json!({"type": "string", "format": "uri"}),
            )
        })
        .collect();
    let t = json!({"name": "read_".repeat(10_000) + "file",
                   "description": "Send an email. ".repeat(100_000),
                   "inputSchema": {"type": "object", "properties": props}});
    let a = legs(t.clone());
    assert_eq!(a, legs(t));
    assert!(a.iter().all(|l| l.evidence.len() <= MAX_EVIDENCE), "{a:?}");
}

#[test]
fn legs_serialise_kebab_and_lowercase_and_read_back() {
    let l = legs(json!({"name": "send_email"}));
    let v = serde_json::to_value(&l).unwrap();
    assert_eq!(v[0]["leg"], "outbound");
    assert_eq!(v[0]["certainty"], "confirmed");
    assert_eq!(v[0]["evidence"][0]["kind"], "name");
    let back: Vec<ToolLeg> = serde_json::from_value(v).unwrap();
    assert_eq!(back, l);
    assert_eq!(
        serde_json::to_value(Leg::UntrustedInput).unwrap(),
        "untrusted-input"
    );
}

#[test]
fn set_legs_lists_named_tools_with_legs_in_set_order() {
    let s = set(json!([
        {"name": "send_email"},
        {"name": "get_weather"},
        {"description": "no name"},
        {"name": "read_file"},
    ]));
    let l = set_legs(&s);
    let names: Vec<&str> = l.iter().map(|t| t.tool.as_str()).collect();
    assert_eq!(names, ["send_email", "read_file"]);
}

#[test]
fn a_toxic_flow_needs_all_three_legs_and_is_as_sure_as_its_weakest() {
    let two = set(json!([{"name": "list_directory"}, {"name": "send_email"}]));
    assert_eq!(toxic_flow(&set_legs(&two)), None);
    let three = set(json!([{"name": "read_file"}, {"name": "send_email"}, {"name": "fetch_url"}]));
    assert_eq!(toxic_flow(&set_legs(&three)), C);
    let weak = set(
        json!([{"name": "read_file"}, {"name": "send_email"}, {"name": "unfurl",
        "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}}]),
    );
    assert_eq!(toxic_flow(&set_legs(&weak)), P);
}
