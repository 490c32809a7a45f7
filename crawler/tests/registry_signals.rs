//! Registry signals read from recorded registry metadata (`tests/fixtures/registry/`, see its
//! SOURCES.md), and every flag raised between two recorded versions; an unknown field never
//! raises one.
//!
//! The npm fixtures are version entries as the public registry serves them (with
//! `_npmUser`, `maintainers`, `dist.signatures`, `dist.attestations`) and as the mirror
//! reachable here serves them (without); each is wrapped into a packument (`{"versions": {v:
//! entry}}`) as `npm_entry` reads one. Comparisons across two packages stand for two
//! versions of one package: the flags look only at the fields.

use serde_json::{Value, json};
use toolmark_crawler::packages::facts::{
    ProvenanceListing, pypi_facts, pypi_provenance, pypi_provenance_listing, pypi_provenance_url,
};
use toolmark_crawler::packages::{RegistryFacts, npm_entry};
use toolmark_observation::registry_facts::{
    DEPENDENCY_SPECS_CHANGED, INSTALL_SCRIPTS, INSTALL_SCRIPTS_ADDED, MAINTAINERS_CHANGED,
    MAX_DEPENDENCIES, NEW_BIN, NEW_DEPENDENCIES, PROVENANCE_LOST, PUBLISHER_CHANGED,
    REPOSITORY_CHANGED, compare,
};

const PLAYWRIGHT: &str = include_str!("fixtures/registry/npm-playwright-test-1.58.2.json");
const TYPES_NODE: &str = include_str!("fixtures/registry/npm-types-node-25.3.3.json");
const UMADEV: &str = include_str!("fixtures/registry/npm-umatech-umadev-1.1.1.json");
const ESBUILD_MIRROR: &str = include_str!("fixtures/registry/npm-esbuild-0.25.0.mirror.json");
const MEMORY_MIRROR: &[u8] = include_bytes!("fixtures/packages/server-memory.packument.json");
const GCB_PROVENANCE: &[u8] =
    include_bytes!("fixtures/registry/pypi-gcb_attestation_test-0.0.0.provenance.json");
const TIME_PROJECT: &[u8] = include_bytes!("fixtures/packages/mcp-server-time.project.json");
const TIME_SIMPLE_JSON: &[u8] =
    include_bytes!("fixtures/registry/pypi-mcp-server-time.simple.json");

/// The facts of a recorded version entry, read as `npm_entry` reads a packument holding it.
fn npm(entry: &str) -> RegistryFacts {
    let entry: Value = serde_json::from_str(entry).unwrap();
    let version = entry["version"].as_str().unwrap().to_owned();
    let packument = json!({"name": entry["name"], "versions": {version.clone(): entry}});
    npm_entry(&serde_json::to_vec(&packument).unwrap(), &version)
        .unwrap()
        .1
}

/// `entry` with `edit` applied (for the fields no recorded pair differs in).
fn edited(entry: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(entry).unwrap();
    edit(&mut v);
    v.to_string()
}

#[test]
fn a_trusted_publishers_entry_has_provenance_publisher_and_maintainers() {
    let f = npm(PLAYWRIGHT);
    let p = f.provenance.as_ref().unwrap();
    assert!(p.present);
    assert_eq!(p.kind.as_deref(), Some("https://slsa.dev/provenance/v1"));
    assert_eq!(
        f.publisher_label().as_deref(),
        Some("trusted publisher: github")
    );
    assert_eq!(
        f.maintainers.as_deref().unwrap(),
        ["dgozman-ms", "pavelfeldman", "playwright-bot", "yurys"]
    );
    assert_eq!(
        f.repository,
        Some(Some(
            "git+https://github.com/microsoft/playwright.git".into()
        ))
    );
    assert_eq!(f.bins.as_ref().unwrap()["playwright"], "cli.js");
    assert_eq!(f.dependencies.as_ref().unwrap()["playwright"], "1.58.2");
    assert_eq!(f.install_scripts.as_ref().map(|s| s.len()), Some(0));
    assert_eq!(
        f.deprecated,
        Some(None),
        "a signed entry without it is not deprecated"
    );
}

#[test]
fn a_signed_entry_without_attestations_has_no_provenance() {
    let f = npm(TYPES_NODE);
    assert_eq!(f.provenance_present(), Some(false));
    assert_eq!(f.publisher_label().as_deref(), Some("types"));
}

#[test]
fn a_mirror_entry_without_signatures_leaves_provenance_publisher_and_maintainers_unknown() {
    let f = npm(ESBUILD_MIRROR);
    assert_eq!(f.provenance, None);
    assert_eq!(f.publisher, None);
    assert_eq!(f.maintainers, None);
    assert_eq!(f.deprecated, None);
    // What every registry serves is known.
    assert_eq!(
        f.install_scripts.as_ref().unwrap()["postinstall"],
        "node install.js"
    );
    assert_eq!(f.bins.as_ref().unwrap()["esbuild"], "bin/esbuild");
    assert_eq!(
        f.repository,
        Some(Some("git+https://github.com/evanw/esbuild.git".into()))
    );
    // The whole mirror packument of server-memory: the same.
    let m = npm_entry(MEMORY_MIRROR, "2026.8.31").unwrap().1;
    assert_eq!(
        (m.provenance, m.publisher, m.maintainers),
        (None, None, None)
    );
}

#[test]
fn provenance_lost_is_raised_between_an_attested_and_a_signed_unattested_version() {
    let c = compare(Some(&npm(PLAYWRIGHT)), &npm(TYPES_NODE));
    assert!(
        c.flags.contains(&PROVENANCE_LOST.to_owned()),
        "{:?}",
        c.flags
    );
    assert_eq!(c.class(), Some("dangerous"));
}

#[test]
fn a_mirror_version_after_an_attested_one_never_loses_provenance_or_publisher() {
    let c = compare(Some(&npm(PLAYWRIGHT)), &npm(ESBUILD_MIRROR));
    for never in [PROVENANCE_LOST, PUBLISHER_CHANGED, MAINTAINERS_CHANGED] {
        assert!(
            !c.flags.contains(&never.to_owned()),
            "{never} in {:?}",
            c.flags
        );
    }
    // And the other way round.
    let back = compare(Some(&npm(ESBUILD_MIRROR)), &npm(PLAYWRIGHT));
    assert!(!back.flags.contains(&PROVENANCE_LOST.to_owned()));
}

#[test]
fn publisher_changed_is_raised_from_a_trusted_publisher_to_an_account() {
    // The shape of the axios 1.14.1 incident: a trusted publisher before, an account after.
    let c = compare(Some(&npm(PLAYWRIGHT)), &npm(UMADEV));
    assert!(
        c.flags.contains(&PUBLISHER_CHANGED.to_owned()),
        "{:?}",
        c.flags
    );
    assert_eq!(
        c.previous_publisher.as_deref(),
        Some("trusted publisher: github")
    );
    assert!(
        !c.flags.contains(&PROVENANCE_LOST.to_owned()),
        "both attested"
    );
    assert_eq!(c.class(), Some("dangerous"));
}

#[test]
fn install_scripts_added_is_raised_for_a_new_postinstall() {
    let c = compare(Some(&npm(PLAYWRIGHT)), &npm(ESBUILD_MIRROR));
    assert!(
        c.flags.contains(&INSTALL_SCRIPTS_ADDED.to_owned()),
        "{:?}",
        c.flags
    );
    assert_eq!(c.install_scripts_added, ["postinstall"]);
    // HISTOR's informational flag comes with it, and alone makes no change.
    assert!(c.flags.contains(&INSTALL_SCRIPTS.to_owned()));
    let same = compare(Some(&npm(ESBUILD_MIRROR)), &npm(ESBUILD_MIRROR));
    assert_eq!(same.flags, [INSTALL_SCRIPTS]);
    assert_eq!(same.class(), None);
}

#[test]
fn new_dependencies_are_raised_and_listed() {
    let c = compare(Some(&npm(PLAYWRIGHT)), &npm(TYPES_NODE));
    assert!(
        c.flags.contains(&NEW_DEPENDENCIES.to_owned()),
        "{:?}",
        c.flags
    );
    assert_eq!(c.new_dependencies, ["undici-types"]);
    assert_eq!(c.new_dependencies_total, 1);
}

#[test]
fn a_changed_dependency_spec_is_raised() {
    let next = edited(PLAYWRIGHT, |v| {
        v["version"] = json!("1.58.3");
        v["dependencies"]["playwright"] = json!("1.58.3");
    });
    let c = compare(Some(&npm(PLAYWRIGHT)), &npm(&next));
    assert_eq!(c.flags, [DEPENDENCY_SPECS_CHANGED]);
    assert_eq!(c.dependency_specs_changed, ["playwright: 1.58.2 → 1.58.3"]);
    assert_eq!(c.class(), Some("unsure"));
}

#[test]
fn repository_maintainers_and_bin_changes_are_raised() {
    let c = compare(Some(&npm(PLAYWRIGHT)), &npm(UMADEV));
    for flag in [REPOSITORY_CHANGED, MAINTAINERS_CHANGED, NEW_BIN] {
        assert!(
            c.flags.contains(&flag.to_owned()),
            "{flag} not in {:?}",
            c.flags
        );
    }
    assert_eq!(c.new_bins, ["umadev"]);
}

#[test]
fn one_version_against_itself_raises_nothing() {
    for entry in [PLAYWRIGHT, TYPES_NODE, UMADEV] {
        let f = npm(entry);
        assert!(compare(Some(&f), &f).flags.is_empty(), "{entry:.40}");
    }
}

#[test]
fn a_dependency_list_over_its_cap_is_unknown_and_never_compared() {
    let many = edited(PLAYWRIGHT, |v| {
        let deps: serde_json::Map<String, Value> = (0..=MAX_DEPENDENCIES)
            .map(|i| (format!("dep-{i}"), json!("1.0.0")))
            .collect();
        v["dependencies"] = Value::Object(deps);
    });
    let f = npm(&many);
    assert_eq!(f.dependencies, None);
    assert_eq!(f.capped, ["dependencies"]);
    assert!(compare(Some(&npm(PLAYWRIGHT)), &f).flags.is_empty());
}

#[test]
fn a_pypi_integrity_provenance_names_its_publisher() {
    let (p, publisher) = pypi_provenance(GCB_PROVENANCE).unwrap();
    assert!(p.present);
    assert_eq!(p.kind.as_deref(), Some("Google"));
    let publisher = publisher.unwrap();
    assert!(publisher.trusted);
    assert_eq!(
        publisher.name.as_deref(),
        Some("919436158236-compute@developer.gserviceaccount.com")
    );
    assert_eq!(publisher.label(), "trusted publisher: Google");
    assert_eq!(
        pypi_provenance_url(
            "https://pypi.org/",
            "GCB_Attestation_Test",
            "0.0.0",
            "f.whl"
        ),
        "https://pypi.org/integrity/gcb-attestation-test/0.0.0/f.whl/provenance"
    );
}

#[test]
fn a_pypi_release_without_provenance_after_one_with_loses_it() {
    let (p, publisher) = pypi_provenance(GCB_PROVENANCE).unwrap();
    let mut before = pypi_facts(TIME_PROJECT, "2026.10.19").unwrap();
    before.provenance = Some(p);
    before.publisher = Some(publisher);
    let mut after = before.clone();
    // The integrity API's 404 on an index that lists the file's provenance as `null`.
    after.provenance = Some(toolmark_observation::registry_facts::Provenance {
        present: false,
        kind: None,
    });
    after.publisher = Some(None);
    assert_eq!(compare(Some(&before), &after).flags, [PROVENANCE_LOST]);
}

#[test]
fn the_mirrors_simple_json_serves_no_provenance_so_it_is_unknown() {
    let file = "mcp_server_time-2026.10.19-py3-none-any.whl";
    assert_eq!(
        pypi_provenance_listing(TIME_SIMPLE_JSON, file),
        ProvenanceListing::NotServed
    );
    let with = br#"{"files":[{"filename":"a.whl","provenance":null},{"filename":"b.whl","provenance":"https://x/integrity/b"}]}"#;
    assert_eq!(
        pypi_provenance_listing(with, "a.whl"),
        ProvenanceListing::None
    );
    assert_eq!(
        pypi_provenance_listing(with, "b.whl"),
        ProvenanceListing::Listed
    );
    assert_eq!(
        pypi_provenance_listing(b"<html>", "a.whl"),
        ProvenanceListing::NotServed
    );
}

#[test]
fn a_pypi_project_json_gives_requires_dist_ownership_and_yanked() {
    let f = pypi_facts(TIME_PROJECT, "2026.10.19").unwrap();
    let deps = f.dependencies.as_ref().unwrap();
    assert_eq!(deps["mcp"], "<3,>=2.3");
    assert_eq!(deps["tzdata"], ">=2024.2");
    assert_eq!(
        f.maintainers.as_deref().unwrap(),
        ["cliffhall", "dsp", "jspahrsummers", "olaservo"]
    );
    assert_eq!(f.yanked, Some(false));
    assert_eq!(
        f.provenance, None,
        "the project JSON says nothing of provenance"
    );
    // An older release: `info` is the latest's, so its requirements are unknown.
    let old = pypi_facts(TIME_PROJECT, "2026.8.18").unwrap();
    assert_eq!(old.dependencies, None);
    assert!(compare(Some(&old), &f).flags.is_empty());
}

#[test]
fn a_new_pypi_requirement_is_a_new_dependency() {
    let before = pypi_facts(TIME_PROJECT, "2026.10.19").unwrap();
    let mut project: Value = serde_json::from_slice(TIME_PROJECT).unwrap();
    project["info"]["requires_dist"]
        .as_array_mut()
        .unwrap()
        .push(json!("Requests[socks]>=2.0; python_version >= \"3.10\""));
    let after = pypi_facts(&serde_json::to_vec(&project).unwrap(), "2026.10.19").unwrap();
    let c = compare(Some(&before), &after);
    assert_eq!(c.flags, [NEW_DEPENDENCIES]);
    assert_eq!(c.new_dependencies, ["requests"]);
}

#[test]
fn a_null_requires_dist_and_a_file_without_yanked_are_unknown_and_flag_nothing() {
    let before = pypi_facts(TIME_PROJECT, "2026.10.19").unwrap();
    let mut project: Value = serde_json::from_slice(TIME_PROJECT).unwrap();
    // PyPI serves `null` when it did not read the metadata: not "no dependencies".
    project["info"]["requires_dist"] = Value::Null;
    for file in project["releases"]["2026.10.19"].as_array_mut().unwrap() {
        file.as_object_mut().unwrap().remove("yanked");
    }
    let after = pypi_facts(&serde_json::to_vec(&project).unwrap(), "2026.10.19").unwrap();
    assert_eq!(after.dependencies, None);
    assert_eq!(after.yanked, None);
    // Nor, the other way round, do the requirements of a version after it look new.
    assert!(compare(Some(&after), &before).flags.is_empty());
    assert!(compare(Some(&before), &after).flags.is_empty());
}
