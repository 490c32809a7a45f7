//! docs/rules.md holds the rule table and the digest generated from [`RULES`], between the
//! markers `<!-- rules:begin -->` and `<!-- rules:end -->`, so the documentation cannot fall
//! behind the rules. `TOOLMARK_WRITE_DOCS=1 cargo test -p toolmark-toolset --test rules_doc`
//! rewrites that section.

use toolmark_toolset::rules::{self, CharCheck, Check, RULES, RuleClass, Tier};

const BEGIN: &str = "<!-- rules:begin -->";
const END: &str = "<!-- rules:end -->";

fn cell(s: &str) -> String {
    s.escape_debug()
        .to_string()
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "\\`")
        .replace('*', "\\*")
        .replace('_', "\\_")
        .replace('[', "\\[")
}

fn section() -> String {
    let mut out = format!(
        "{BEGIN}\n\nRule set `{}`, digest `{}` ({} rules).\n\n",
        rules::RULES_ID,
        rules::digest(),
        RULES.len()
    );
    out.push_str("| class | block | advise |\n|---|---:|---:|\n");
    for class in RuleClass::ALL {
        let n = |t| {
            RULES
                .iter()
                .filter(|r| r.class == class && r.tier == t)
                .count()
        };
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            class.as_str(),
            n(Tier::Block),
            n(Tier::Advise)
        ));
    }
    out.push_str(
        "\n| code | class | tier | meaning | fires on | passes |\n|---|---|---|---|---|---|\n",
    );
    for r in RULES {
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} | {} |\n",
            r.code,
            r.class.as_str(),
            r.tier.as_str(),
            cell(r.meaning),
            cell(r.fires),
            cell(r.passes)
        ));
    }
    out.push_str("\nCharacter rules:\n\n");
    for r in RULES {
        if let Check::Chars(c) = r.check {
            let _: CharCheck = c;
            out.push_str(&format!("* `{}`: {}.\n", r.code, c.describe()));
        }
    }
    out.push('\n');
    out.push_str(END);
    out
}

#[test]
fn docs_rules_md_holds_the_generated_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md");
    let doc = std::fs::read_to_string(path).expect("docs/rules.md is readable");
    let (Some(a), Some(b)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/rules.md lacks the {BEGIN} … {END} markers");
    };
    let current = &doc[a..b + END.len()];
    let want = section();
    if current != want {
        if std::env::var_os("TOOLMARK_WRITE_DOCS").is_some() {
            let new = format!("{}{}{}", &doc[..a], want, &doc[b + END.len()..]);
            std::fs::write(path, new).unwrap();
        } else {
            panic!(
                "docs/rules.md is stale: run TOOLMARK_WRITE_DOCS=1 cargo test -p toolmark-toolset --test rules_doc"
            );
        }
    }
}
