//! docs/digests.md names every classification rule and every model-addressing pattern the code
//! has, so the documentation cannot silently fall behind the rules.

use toolmark_toolset::classify::RULES;
use toolmark_toolset::text::MODEL_ADDRESSING_PATTERNS;

#[test]
fn every_rule_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/digests.md"))
        .expect("docs/digests.md is readable");
    for rule in RULES {
        assert!(
            doc.contains(&format!("`{}`", rule.id)),
            "docs/digests.md lacks rule `{}`",
            rule.id
        );
    }
    for p in MODEL_ADDRESSING_PATTERNS {
        assert!(
            doc.contains(&format!("`{}`", p.id)),
            "docs/digests.md lacks pattern `{}`",
            p.id
        );
    }
}
