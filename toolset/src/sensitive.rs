//! Sensitive-tool globs: which tools of a set a policy names as sensitive.
//!
//! The semantics are WARDEN's `classify_sensitive_tools`: a pattern matches a tool's *whole*
//! name, case-insensitively, and `*` (any run of characters, possibly empty) is the only
//! wildcard, so `delete` matches only `delete` while `*delete*` matches `create_delete_repo`. An
//! empty pattern list marks every tool safe. Descriptions and schemas are never looked at.
//!
//! A pattern that contains `/` is *qualified*: it is matched against `<server>/<tool>` and so
//! only applies when the caller names the server (`io.github.acme/files/delete_*`). Matching is
//! linear in the name and pattern lengths (no regex, no backtracking blow-up).

use crate::model::ToolSet;

/// The result: tool names in the order the server sent them, each once.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Split {
    /// Names matched by a sensitive glob.
    pub sensitive: Vec<String>,
    /// Every other name.
    pub safe: Vec<String>,
}

/// Split the named tools of `set` by `patterns`. Entries without a string name are in neither
/// list (they cannot be called by name). `server` enables qualified `server/tool` patterns.
pub fn classify_sensitive<P: AsRef<str>>(
    set: &ToolSet,
    patterns: &[P],
    server: Option<&str>,
) -> Split {
    let patterns: Vec<(bool, Vec<char>)> = patterns
        .iter()
        .map(|p| {
            let p = p.as_ref();
            (p.contains('/'), fold(p))
        })
        .collect();
    let mut split = Split::default();
    let mut seen = std::collections::HashSet::new();
    for name in set.tools.iter().filter_map(|t| t.name()) {
        if !seen.insert(name) {
            continue;
        }
        let bare = fold(name);
        let qualified = server.map(|s| fold(&format!("{s}/{name}")));
        let hit = patterns
            .iter()
            .any(|(is_qualified, p)| match (is_qualified, &qualified) {
                (false, _) => glob_match(p, &bare),
                (true, Some(q)) => glob_match(p, q),
                (true, None) => false,
            });
        if hit {
            split.sensitive.push(name.to_owned());
        } else {
            split.safe.push(name.to_owned());
        }
    }
    split
}

/// Case folding for matching: Unicode lowercase, as a character sequence.
fn fold(s: &str) -> Vec<char> {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// Whole-string match of `pattern` (where `*` is any run) against `text`, in O(|p|·|t|) worst
/// case with no recursion: on a mismatch, retry from the last `*` one character further on.
fn glob_match(pattern: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> ToolSet {
        let text = format!(
            "[{}]",
            names
                .iter()
                .map(|n| format!("{{\"name\":{n:?},\"description\":\"delete everything\"}}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        ToolSet::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn whole_name_case_insensitive_star_only() {
        let s = set(&[
            "delete",
            "create_delete_repo",
            "Delete_File",
            "list",
            "del?te",
            "a.b",
        ]);
        let r = classify_sensitive(&s, &["delete"], None);
        assert_eq!(r.sensitive, ["delete"]);
        let r = classify_sensitive(&s, &["*delete*"], None);
        assert_eq!(r.sensitive, ["delete", "create_delete_repo", "Delete_File"]);
        assert_eq!(r.safe, ["list", "del?te", "a.b"]);
        // `?`, `.` and `[` are literal characters, not wildcards.
        let r = classify_sensitive(&s, &["del?te", "a*b", "[a]"], None);
        assert_eq!(r.sensitive, ["del?te", "a.b"]);
        let r = classify_sensitive(&s, &["DELETE_*"], None);
        assert_eq!(r.sensitive, ["Delete_File"]);
    }

    #[test]
    fn empty_patterns_mark_everything_safe_and_descriptions_are_ignored() {
        let s = set(&["a", "b"]);
        let r = classify_sensitive::<&str>(&s, &[], None);
        assert!(r.sensitive.is_empty());
        assert_eq!(r.safe, ["a", "b"]);
        let r = classify_sensitive(&s, &["*everything*"], None);
        assert!(r.sensitive.is_empty());
    }

    #[test]
    fn qualified_patterns_need_the_server() {
        let s = set(&["delete_file", "read_file"]);
        let p = ["io.github.acme/files/delete_*"];
        assert!(classify_sensitive(&s, &p, None).sensitive.is_empty());
        let r = classify_sensitive(&s, &p, Some("io.github.acme/files"));
        assert_eq!(r.sensitive, ["delete_file"]);
        let r = classify_sensitive(&s, &p, Some("io.github.other/files"));
        assert!(r.sensitive.is_empty());
        let r = classify_sensitive(&s, &["*/read_file"], Some("x"));
        assert_eq!(r.sensitive, ["read_file"]);
    }

    #[test]
    fn glob_edge_cases() {
        let m = |p: &str, t: &str| glob_match(&fold(p), &fold(t));
        assert!(m("*", ""));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("a*b*c", "aXbYc"));
        assert!(!m("a*b*c", "aXbY"));
        assert!(m("**a**", "a"));
        assert!(m("*aab", "aaab"));
        // Pathological pattern against a long name stays fast (no exponential backtracking).
        let long = "a".repeat(10_000);
        assert!(m(&"*a".repeat(50), &long));
        assert!(!m("*a*a*a*a*a*a*b", &long));
    }

    #[test]
    fn repeated_and_unnamed_entries() {
        let s = ToolSet::parse(br#"[{"name":"x"},{"name":"x"},{"nameless":1},3]"#).unwrap();
        let r = classify_sensitive(&s, &["x"], None);
        assert_eq!(r.sensitive, ["x"]);
        assert!(r.safe.is_empty());
    }
}
