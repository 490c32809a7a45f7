//! One test per look-alike rule, on a fixture of names and counts
//! (`tests/fixtures/popularity.txt`, made up for these tests), including the names that must
//! not match.

use toolmark_names::packages::{LookalikeIndex, PackageKey};
use toolmark_names::servers::ServerNames;
use toolmark_names::snapshot::Snapshot;
use toolmark_names::{
    BUNDLED_SNAPSHOT, HOW_CONFUSABLE, HOW_ONE_EDIT, HOW_OTHER_SCOPE, HOW_SEPARATORS, Lookalike,
};

fn index() -> LookalikeIndex {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/popularity.txt"
    ))
    .unwrap();
    LookalikeIndex::new(&Snapshot::parse(&text).unwrap())
}

fn check(index: &LookalikeIndex, key: &str) -> Option<Lookalike> {
    index.check(&PackageKey::parse(key).unwrap())
}

fn assert_like(found: Option<Lookalike>, of: &str, how: &str) -> Lookalike {
    let found = found.unwrap_or_else(|| panic!("expected a look-alike of {of}"));
    assert_eq!((found.of.as_str(), found.how), (of, how));
    found
}

#[test]
fn the_same_name_under_another_scope_is_a_lookalike() {
    let found = assert_like(
        check(&index(), "npm:@evil/server-github"),
        "npm:@modelcontextprotocol/server-github",
        HOW_OTHER_SCOPE,
    );
    let weekly = found.weekly.unwrap();
    assert_eq!(
        (weekly.count, weekly.as_of.as_str()),
        (111195, "2026-10-10")
    );
    assert_eq!(found.own_weekly, Some(0));
}

#[test]
fn an_unscoped_copy_of_a_scoped_name_is_under_another_scope() {
    // `npm:server-github` is listed with 3 a week: 111195 ≥ 100 × 3.
    let found = assert_like(
        check(&index(), "npm:server-github"),
        "npm:@modelcontextprotocol/server-github",
        HOW_OTHER_SCOPE,
    );
    assert_eq!(found.own_weekly, Some(3));
}

#[test]
fn other_separators_are_a_lookalike() {
    assert_like(
        check(&index(), "npm:mcp_handler"),
        "npm:mcp-handler",
        HOW_SEPARATORS,
    );
    assert_like(
        check(&index(), "npm:@evil/server.git-hub"),
        "npm:@modelcontextprotocol/server-github",
        HOW_SEPARATORS,
    );
}

#[test]
fn digits_for_letters_are_a_lookalike() {
    // 0 → o, 1 → l.
    assert_like(
        check(&index(), "npm:chr0me-devtoo1s-mcp"),
        "npm:chrome-devtools-mcp",
        HOW_SEPARATORS,
    );
}

#[test]
fn one_edit_is_a_lookalike_for_long_skeletons() {
    for asked in [
        "npm:@evil/server-githb",   // deletion
        "npm:@evil/server-githubb", // insertion
        "npm:@evil/server-gihtub",  // adjacent swap
        "npm:@evil/server-githib",  // substitution
    ] {
        assert_like(
            check(&index(), asked),
            "npm:@modelcontextprotocol/server-github",
            HOW_ONE_EDIT,
        );
    }
}

#[test]
fn the_most_downloaded_hit_wins() {
    // `mcp-handlor` is one edit from `mcp-handler` (1 277 007 a week) and from `mcp-handlr`
    // (20 000, itself popular): the larger wins.
    assert_like(
        check(&index(), "npm:mcp-handlor"),
        "npm:mcp-handler",
        HOW_ONE_EDIT,
    );
}

#[test]
fn skeleton_matches_come_before_one_edit() {
    // `mcp.proxy` has the skeleton of `mcp-proxy`; `mcp-proxi` (one edit) is never considered.
    assert_like(
        check(&index(), "npm:mcp.proxy"),
        "npm:mcp-proxy",
        HOW_SEPARATORS,
    );
}

#[test]
fn a_lookalike_needs_a_hundred_times_the_downloads() {
    // mcp-proxi has 7 801 a week; mcp-proxy 780 192 = 100.01 × 7 801: reported.
    assert_like(
        check(&index(), "npm:mcp-proxi"),
        "npm:mcp-proxy",
        HOW_ONE_EDIT,
    );
    // mcp-proxy2 has 7 802 a week: 780 192 < 100 × 7 802, so two popular siblings do not
    // accuse each other.
    assert_eq!(check(&index(), "npm:mcp-proxy2"), None);
    // mcp-handlr (20 000) is one edit from mcp-handler (1 277 007 < 2 000 000).
    assert_eq!(check(&index(), "npm:mcp-handlr"), None);
}

#[test]
fn short_skeletons_get_no_one_edit_rule() {
    // `tiny` (5 000 a week) is 4 characters: `tinny` is one edit away but too short a name.
    assert_eq!(check(&index(), "npm:tinny"), None);
    assert_eq!(check(&index(), "npm:tin"), None);
    // The skeleton rule still holds for short names.
    assert_like(check(&index(), "npm:@x/tiny"), "npm:tiny", HOW_OTHER_SCOPE);
}

#[test]
fn generic_names_are_nobodys_brand() {
    // `cli`, `mcp` and `mcp-server` are each used under three scopes or more: generic, even
    // where one of them is popular (`@playwright/mcp`, 6 562 334 a week).
    assert_eq!(check(&index(), "npm:@evil/cli"), None);
    assert_eq!(check(&index(), "npm:@evil/mcp"), None);
    assert_eq!(check(&index(), "npm:mcp"), None);
    assert_eq!(check(&index(), "npm:@evil/mcp-server"), None);
    assert_eq!(check(&index(), "npm:mcp_server"), None);
    // One edit from a generic name is not an imitation either.
    assert_eq!(check(&index(), "npm:mcp-serverz"), None);
    assert_eq!(check(&index(), "npm:mcp-servers"), None);
}

#[test]
fn a_package_is_never_its_own_lookalike() {
    for popular in [
        "npm:@modelcontextprotocol/server-github",
        "npm:mcp-handler",
        "npm:@playwright/mcp",
        "pypi:fastmcp",
    ] {
        assert_eq!(check(&index(), popular), None, "{popular}");
    }
    // An npm version suffix names the same package.
    assert_eq!(check(&index(), "npm:mcp-handler@1.0.0"), None);
    // An unlisted name that resembles nothing.
    assert_eq!(check(&index(), "npm:@someone/weather-report"), None);
}

#[test]
fn a_popular_package_asking_about_itself_is_not_a_lookalike_of_a_sibling() {
    // @modelcontextprotocol/server-slack (400 a week) is one edit from nothing popular, and
    // server-github (111 195) asking about itself finds only itself.
    assert_eq!(
        check(&index(), "npm:@modelcontextprotocol/server-slack"),
        None
    );
    assert_eq!(
        check(&index(), "npm:@modelcontextprotocol/server-github"),
        None
    );
}

#[test]
fn pypi_separator_and_case_variants_are_the_same_project() {
    // PEP 503: Mcp_Server.Fetch is mcp-server-fetch itself, not a look-alike of it.
    assert_eq!(check(&index(), "pypi:Mcp_Server.Fetch"), None);
    assert_eq!(check(&index(), "pypi:FastMCP"), None);
    // Dropping a separator makes another project, which is a look-alike.
    assert_like(
        check(&index(), "pypi:mcpserver-fetch"),
        "pypi:mcp-server-fetch",
        HOW_SEPARATORS,
    );
    let found = assert_like(
        check(&index(), "pypi:fastmcpp"),
        "pypi:fastmcp",
        HOW_ONE_EDIT,
    );
    assert_eq!(found.weekly.unwrap().as_of, "2026-10-01");
}

#[test]
fn registries_do_not_mix() {
    // npm's mcp-handler is no model for a PyPI name, nor PyPI's fastmcp for an npm one.
    assert_eq!(check(&index(), "pypi:mcp-handler"), None);
    assert_eq!(check(&index(), "npm:fastmcpp"), None);
}

#[test]
fn cyrillic_letters_are_confusables() {
    // Cyrillic letters that look Latin, in names that exist in no registry (npm and PyPI
    // take ASCII names only), but that a configuration or a prompt can carry.
    assert_like(
        check(&index(), "npm:@evil/chrоme-devtools-mcp"), // U+043E
        "npm:chrome-devtools-mcp",
        HOW_CONFUSABLE,
    );
    assert_like(
        check(&index(), "npm:@modelcontextprotocol/server-gіthub"), // U+0456
        "npm:@modelcontextprotocol/server-github",
        HOW_CONFUSABLE,
    );
    assert_like(
        check(&index(), "npm:mсp-hаndler"), // U+0441, U+0430
        "npm:mcp-handler",
        HOW_CONFUSABLE,
    );
}

#[test]
fn package_keys_are_refused_when_malformed() {
    for bad in [
        "mcp",
        "cargo:serde",
        "npm:",
        "npm:@scope",
        "npm:a b",
        "pypi:",
        "npm:@/x",
    ] {
        assert!(PackageKey::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(
        PackageKey::parse("pypi:Mcp__Server").unwrap().key(),
        "pypi:mcp-server"
    );
}

fn servers() -> ServerNames {
    ServerNames::new([
        "io.github.modelcontextprotocol/server-github",
        "io.github.modelcontextprotocol/server-slack",
        "com.example/weather",
        "io.github.alice/mcp",
    ])
}

#[test]
fn a_listed_server_name_is_never_a_lookalike() {
    assert_eq!(
        servers().check("io.github.modelcontextprotocol/server-github"),
        None
    );
    assert_eq!(servers().check("com.example/weather"), None);
}

#[test]
fn server_names_with_other_separators_or_digits_are_lookalikes() {
    for asked in [
        "io.github.modelcontextprotoco1/server-github",
        "io.github.model-context-protocol/server_github",
        "IO.GitHub.ModelContextProtocol/Server-GitHub",
    ] {
        let found = servers().check(asked).unwrap();
        assert_eq!(
            found.of, "io.github.modelcontextprotocol/server-github",
            "{asked}"
        );
        assert_eq!(found.how, HOW_SEPARATORS);
        assert_eq!((found.weekly, found.own_weekly), (None, None));
    }
}

#[test]
fn server_names_with_confusables_are_lookalikes() {
    let found = servers()
        .check("io.github.modelcontextprotocol/server-gіthub") // U+0456
        .unwrap();
    assert_eq!(
        (found.of.as_str(), found.how),
        (
            "io.github.modelcontextprotocol/server-github",
            HOW_CONFUSABLE
        )
    );
}

#[test]
fn server_names_one_edit_away_are_lookalikes() {
    for asked in [
        "io.github.modelcontextprotocl/server-github",
        "io.github.modelcontextprotocol/server-githb",
        "com.exmaple/weather",
    ] {
        let found = servers().check(asked).unwrap();
        assert_eq!(found.how, HOW_ONE_EDIT, "{asked}");
    }
}

#[test]
fn the_same_server_name_under_another_namespace_is_not_a_lookalike() {
    // Forks and re-publications are honestly named so.
    assert_eq!(servers().check("io.github.bob/server-github"), None);
    assert_eq!(servers().check("io.github.someone/weather-report"), None);
}

#[test]
fn the_bundled_snapshot_reads_and_finds_the_wardens_example() {
    let snapshot = Snapshot::parse(BUNDLED_SNAPSHOT).unwrap();
    assert_eq!(snapshot.date, "2026-10-10");
    assert!(snapshot.counts.len() > 19_000);
    let index = LookalikeIndex::new(&snapshot);
    // WARDEN's test: a name one character from server-github (111 195 a week).
    let found = assert_like(
        check(&index, "npm:@modelcontextprotocol/server-githb"),
        "npm:@modelcontextprotocol/server-github",
        HOW_ONE_EDIT,
    );
    assert_eq!(found.weekly.unwrap().count, 111_195);
    // The real generic names of the snapshot.
    assert_eq!(check(&index, "npm:@evil/mcp-server"), None);
    assert_eq!(
        check(&index, "npm:@modelcontextprotocol/server-github"),
        None
    );
}

#[test]
fn the_bundled_snapshot_is_the_one_sources_describes() {
    use sha2::Digest;
    let sources = include_str!("../data/SOURCES");
    let digest: String = sha2::Sha256::digest(BUNDLED_SNAPSHOT.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        sources.contains(&digest),
        "SOURCES does not name sha256 {digest}"
    );
}
