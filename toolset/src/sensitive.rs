//! Sensitive-tool globs: which tools of a set a policy names as sensitive.
//!
//! The semantics are WARDEN's `classify_sensitive_tools`: a pattern matches a tool's *whole*
//! name, case-insensitively, and `*` (any run of characters, possibly empty) is the only
//! wildcard, so `delete` matches only `delete` while `*delete*` matches `create_delete_repo`. An
//! empty pattern list marks every tool safe. Descriptions and schemas are never looked at.
//!
//! # Pattern forms ([`Pattern::parse`])
//!
//! * **bare** `tool`: a glob over the tool name alone (`*delete*`).
//! * **qualified** `server/tool` (any pattern holding `/` that is not `mcp://`): one glob over
//!   `<server>/<tool>` for each name the server answers to, so the server part may itself hold
//!   `/` (`io.github.acme/files/delete_*`) and a `*` may span it (`*/read_file`).
//! * **canonical** `mcp://<server>/<tool>` (NullRun's form; `mcp` in any case): parsed into a
//!   server glob (up to the first `/` after `mcp://`) and a tool glob (the rest, which may hold
//!   `/`). It matches a tool when the tool glob matches the tool's name and the server glob
//!   matches one of the names the server answers to: `mcp://payments/refund*`,
//!   `mcp://*/delete`, `mcp://file*/write_*`. Since its server part ends at the first `/`, it
//!   names a server by a name without `/` (a registry name's last segment, a title, an alias);
//!   the full registry name is written in the qualified form. A malformed one is an error
//!   ([`PatternError`]), never a pattern that silently matches nothing: no `/` after the server
//!   part, an empty server or tool part, a server part holding `:`, `@`, `?` or `#` (no port,
//!   user, query or fragment), or a pattern starting `mcp:` without `//`.
//!
//! # The names a server answers to ([`ServerNames`])
//!
//! The names the caller gives, each also by its last `/`-separated segment
//! (`io.github.acme/files` answers to `io.github.acme/files` and `files`), compared
//! case-insensitively. For an observed registry target ([`ServerNames::of_target`]) they are its
//! registry name (so also its last segment), its title when the registry gives one, and any
//! aliases the caller passes. With no name at all, the server part of a qualified or canonical
//! pattern is matched against the empty name: only a server part made of `*` matches
//! (`mcp://*/delete` applies everywhere, `mcp://payments/refund` only to a named server).
//!
//! # Cost
//!
//! Matching is linear in the name and pattern lengths per (name, pattern) pair (no regex, no
//! backtracking blow-up); [`match_work`] is its worst case, which callers bound before matching.
//! Runs of `*` in a pattern are collapsed to one `*` when it is read (they match the same
//! names), so they are counted once: a pattern of 200 stars costs what `*` costs.
//!
//! A [`Compiled`] policy ([`crate::policy`], e.g. the starter policy) can be applied alongside
//! the patterns; the answer then says which of its categories each sensitive tool fell in.

use std::collections::{BTreeMap, HashSet};

use crate::model::{Tool, ToolSet};
use crate::policy::{Compiled, Policy};

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pattern {pattern:?}: {reason}")]
pub struct PatternError {
    /// The pattern as given (cut to 80 characters).
    pub pattern: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// One pattern, parsed and case-folded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A glob over the tool name.
    Bare(Vec<char>),
    /// A glob over `<server>/<tool>`.
    Qualified(Vec<char>),
    /// `mcp://<server glob>/<tool glob>`.
    Mcp { server: Vec<char>, tool: Vec<char> },
}

impl Pattern {
    /// Read one pattern (see the module documentation for the forms).
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let err = |reason| PatternError {
            pattern: text.chars().take(80).collect(),
            reason,
        };
        let starts = |prefix: &str| {
            text.get(..prefix.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(prefix))
        };
        let kind = if starts("mcp://") {
            let rest = &text[6..];
            let Some((server, tool)) = rest.split_once('/') else {
                return Err(err(
                    "an mcp:// pattern is mcp://<server>/<tool>: the /<tool> part is missing",
                ));
            };
            if server.is_empty() {
                return Err(err(
                    "the server part of mcp://<server>/<tool> is empty (write * for any server)",
                ));
            }
            if tool.is_empty() {
                return Err(err(
                    "the tool part of mcp://<server>/<tool> is empty (write * for every tool)",
                ));
            }
            if server.contains([':', '@', '?', '#']) {
                return Err(err(
                    "the server part of mcp://<server>/<tool> holds ':', '@', '?' or '#' \
                     (a server name, not a URL: no port, user, query or fragment)",
                ));
            }
            Kind::Mcp {
                server: fold_glob(server),
                tool: fold_glob(tool),
            }
        } else if starts("mcp:") {
            return Err(err(
                "starts with mcp: but not mcp://; the canonical form is mcp://<server>/<tool>",
            ));
        } else if text.contains('/') {
            Kind::Qualified(fold_glob(text))
        } else {
            Kind::Bare(fold_glob(text))
        };
        Ok(Pattern {
            text: text.to_owned(),
            kind,
        })
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether it names a server (the qualified or canonical form).
    pub fn names_a_server(&self) -> bool {
        !matches!(self.kind, Kind::Bare(_))
    }
}

/// Read every pattern; the first malformed one is the error.
pub fn parse_patterns<P: AsRef<str>>(patterns: &[P]) -> Result<Vec<Pattern>, PatternError> {
    patterns
        .iter()
        .map(|p| Pattern::parse(p.as_ref()))
        .collect()
}

/// The names a server answers to (see the module documentation), deduplicated after case
/// folding, in the order given (each name followed by its last segment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerNames {
    names: Vec<String>,
    folded: Vec<Vec<char>>,
}

impl ServerNames {
    /// No name: only server parts made of `*` match.
    pub fn none() -> ServerNames {
        ServerNames::default()
    }

    /// The given names, each also by its last `/`-separated segment; empty names are dropped.
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(names: I) -> ServerNames {
        let mut out = ServerNames::default();
        for name in names {
            let name = name.as_ref();
            out.push(name);
            if let Some((_, last)) = name.rsplit_once('/') {
                out.push(last);
            }
        }
        out
    }

    /// The names an observed registry target answers to: its registry name (and so its last
    /// segment), its title when it has one, and the caller's aliases.
    pub fn of_target<S: AsRef<str>>(
        registry_name: &str,
        title: Option<&str>,
        aliases: &[S],
    ) -> ServerNames {
        let mut names: Vec<&str> = vec![registry_name];
        names.extend(title);
        names.extend(aliases.iter().map(AsRef::as_ref));
        ServerNames::new(names)
    }

    fn push(&mut self, name: &str) {
        let f = fold(name);
        if !f.is_empty() && !self.folded.contains(&f) {
            self.names.push(name.to_owned());
            self.folded.push(f);
        }
    }

    /// The names, as given.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// The result: tool names in the order the server sent them, each once.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Split {
    /// Names matched by a sensitive glob.
    pub sensitive: Vec<String>,
    /// Every other name.
    pub safe: Vec<String>,
    /// When a policy was applied: its versioned name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<&'static str>,
    /// When a policy was applied: for each sensitive tool the policy put in a category, those
    /// categories in the policy's order (a tool only the patterns matched is not listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<BTreeMap<String, Vec<&'static str>>>,
}

/// Split the named tools of `set` by `patterns` and, when given, `policy`. Entries without a
/// string name are in neither list (they cannot be called by name). `servers` are the names
/// the server answers to, for qualified and canonical patterns.
pub fn classify_sensitive(
    set: &ToolSet,
    patterns: &[Pattern],
    policy: Option<&Compiled>,
    servers: &ServerNames,
) -> Split {
    // A canonical pattern's server part does not depend on the tool: decide it once.
    let empty: Vec<char> = Vec::new();
    let server_hits: Vec<bool> = patterns
        .iter()
        .map(|p| match &p.kind {
            Kind::Mcp { server, .. } if servers.folded.is_empty() => glob_match(server, &empty),
            Kind::Mcp { server, .. } => servers.folded.iter().any(|s| glob_match(server, s)),
            _ => false,
        })
        .collect();
    let mut split = Split {
        policy: policy.map(|p| p.policy().name),
        categories: policy.map(|_| BTreeMap::new()),
        ..Split::default()
    };
    let mut seen = HashSet::new();
    for name in set.tools.iter().filter_map(Tool::name) {
        if !seen.insert(name) {
            continue;
        }
        let bare = fold(name);
        let qualified = |p: &[char]| {
            if servers.folded.is_empty() {
                let mut q = vec!['/'];
                q.extend_from_slice(&bare);
                return glob_match(p, &q);
            }
            servers.folded.iter().any(|s| {
                let mut q = s.clone();
                q.push('/');
                q.extend_from_slice(&bare);
                glob_match(p, &q)
            })
        };
        let by_pattern = patterns
            .iter()
            .zip(&server_hits)
            .any(|(p, &server_hit)| match &p.kind {
                Kind::Bare(g) => glob_match(g, &bare),
                Kind::Qualified(g) => qualified(g),
                Kind::Mcp { tool, .. } => server_hit && glob_match(tool, &bare),
            });
        let cats = policy
            .map(|p| p.categories_of_folded(&bare))
            .unwrap_or_default();
        if by_pattern || !cats.is_empty() {
            split.sensitive.push(name.to_owned());
            if let (Some(map), false) = (split.categories.as_mut(), cats.is_empty()) {
                map.insert(name.to_owned(), cats);
            }
        } else {
            split.safe.push(name.to_owned());
        }
    }
    split
}

/// Characters of `s` after the matcher's case folding (Unicode lowercase).
fn folded_chars(s: &str) -> u64 {
    s.chars().map(|c| c.to_lowercase().count() as u64).sum()
}

/// The worst-case glob steps of [`classify_sensitive`]: a step per pair of (folded) characters
/// compared, plus one per pattern and name. Bare patterns and the policy's globs against each
/// distinct name; qualified patterns against `<server>/<name>` for each server name (or
/// `/<name>` with none); canonical patterns' tool globs against each name and their server
/// globs once against each server name.
pub fn match_work(
    set: &ToolSet,
    patterns: &[Pattern],
    policy: Option<&Policy>,
    servers: &ServerNames,
) -> u64 {
    let (mut bare, mut qualified, mut tool_globs, mut server_globs) = (0u64, 0u64, 0u64, 0u64);
    for p in patterns {
        match &p.kind {
            Kind::Bare(g) => bare += g.len() as u64 + 1,
            Kind::Qualified(g) => qualified += g.len() as u64 + 1,
            Kind::Mcp { server, tool } => {
                tool_globs += tool.len() as u64 + 1;
                server_globs += server.len() as u64 + 1;
            }
        }
    }
    bare = bare
        .saturating_add(tool_globs)
        .saturating_add(policy.map_or(0, Policy::glob_chars));
    let server_chars: Vec<u64> = if servers.folded.is_empty() {
        vec![1]
    } else {
        servers.folded.iter().map(|s| s.len() as u64 + 1).collect()
    };
    let mut seen = HashSet::new();
    let (mut names, mut qualified_names) = (0u64, 0u64);
    for n in set.tools.iter().filter_map(Tool::name) {
        if seen.insert(n) {
            let chars = folded_chars(n) + 1;
            names += chars;
            for s in &server_chars {
                qualified_names = qualified_names.saturating_add(chars + s);
            }
        }
    }
    names
        .saturating_mul(bare)
        .saturating_add(qualified_names.saturating_mul(qualified))
        .saturating_add(
            server_chars
                .iter()
                .sum::<u64>()
                .saturating_mul(server_globs),
        )
}

/// Case folding for matching: Unicode lowercase, as a character sequence.
pub(crate) fn fold(s: &str) -> Vec<char> {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// A pattern's glob as the matcher reads it and [`match_work`] counts it: case-folded, and each
/// run of `*` collapsed to one. `**` matches exactly what `*` matches, so a run of stars costs
/// nothing more than one star (a 200-star pattern is `*`), while a pattern that is really
/// expensive (many stars with literals between them) keeps its whole length.
fn fold_glob(s: &str) -> Vec<char> {
    let mut out: Vec<char> = Vec::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        if !(c == '*' && out.last() == Some(&'*')) {
            out.push(c);
        }
    }
    out
}

/// Whole-string match of `pattern` (where `*` is any run) against `text`, in O(|p|·|t|) worst
/// case with no recursion: on a mismatch, retry from the last `*` one character further on.
pub(crate) fn glob_match(pattern: &[char], text: &[char]) -> bool {
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
    use crate::policy::STARTER;

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

    fn run(s: &ToolSet, patterns: &[&str], servers: &ServerNames) -> Split {
        classify_sensitive(s, &parse_patterns(patterns).unwrap(), None, servers)
    }

    fn on(name: &str) -> ServerNames {
        ServerNames::new([name])
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
        let none = ServerNames::none();
        let r = run(&s, &["delete"], &none);
        assert_eq!(r.sensitive, ["delete"]);
        let r = run(&s, &["*delete*"], &none);
        assert_eq!(r.sensitive, ["delete", "create_delete_repo", "Delete_File"]);
        assert_eq!(r.safe, ["list", "del?te", "a.b"]);
        // `?`, `.` and `[` are literal characters, not wildcards.
        let r = run(&s, &["del?te", "a*b", "[a]"], &none);
        assert_eq!(r.sensitive, ["del?te", "a.b"]);
        let r = run(&s, &["DELETE_*"], &none);
        assert_eq!(r.sensitive, ["Delete_File"]);
    }

    #[test]
    fn empty_patterns_mark_everything_safe_and_descriptions_are_ignored() {
        let s = set(&["a", "b"]);
        let r = run(&s, &[], &ServerNames::none());
        assert!(r.sensitive.is_empty());
        assert_eq!(r.safe, ["a", "b"]);
        assert_eq!((r.policy, r.categories), (None, None));
        let r = run(&s, &["*everything*"], &ServerNames::none());
        assert!(r.sensitive.is_empty());
    }

    #[test]
    fn qualified_patterns_need_the_server() {
        let s = set(&["delete_file", "read_file"]);
        let p = ["io.github.acme/files/delete_*"];
        assert!(run(&s, &p, &ServerNames::none()).sensitive.is_empty());
        let r = run(&s, &p, &on("io.github.acme/files"));
        assert_eq!(r.sensitive, ["delete_file"]);
        let r = run(&s, &p, &on("io.github.other/files"));
        assert!(r.sensitive.is_empty());
        let r = run(&s, &["*/read_file"], &on("x"));
        assert_eq!(r.sensitive, ["read_file"]);
        // With no server named, the server part meets the empty name.
        let r = run(&s, &["*/read_file"], &ServerNames::none());
        assert_eq!(r.sensitive, ["read_file"]);
        // The last segment is a name the server answers to.
        let r = run(&s, &["files/delete_*"], &on("io.github.acme/files"));
        assert_eq!(r.sensitive, ["delete_file"]);
    }

    #[test]
    fn mcp_payments_refund_glob() {
        let s = set(&["refund_order", "Refund", "list_refunds", "charge"]);
        let p = ["mcp://payments/refund*"];
        let r = run(&s, &p, &on("payments"));
        assert_eq!(r.sensitive, ["refund_order", "Refund"]);
        assert_eq!(r.safe, ["list_refunds", "charge"]);
        // Another server, or none, is not `payments`.
        assert!(run(&s, &p, &on("billing")).sensitive.is_empty());
        assert!(run(&s, &p, &ServerNames::none()).sensitive.is_empty());
        // The server glob is matched against each name, case-insensitively.
        let r = run(&s, &p, &on("com.example/PAYMENTS"));
        assert_eq!(r.sensitive, ["refund_order", "Refund"]);
        let r = run(&s, &["MCP://pay*/REFUND_*"], &on("payments-eu"));
        assert_eq!(r.sensitive, ["refund_order"]);
    }

    #[test]
    fn mcp_any_server_delete() {
        let s = set(&["delete", "delete_all", "undelete"]);
        for servers in [on("anything"), ServerNames::none(), on("io.x/y")] {
            let r = run(&s, &["mcp://*/delete"], &servers);
            assert_eq!(r.sensitive, ["delete"], "{servers:?}");
        }
    }

    #[test]
    fn mcp_filesystem_write_matches_a_filesystem_servers_write_file() {
        let s = set(&["read_file", "write_file", "edit_file"]);
        let names = ServerNames::of_target(
            "io.github.modelcontextprotocol/filesystem",
            Some("Filesystem"),
            &[] as &[&str],
        );
        let r = run(&s, &["mcp://filesystem/write*"], &names);
        assert_eq!(r.sensitive, ["write_file"]);
        // The tool part may hold `/` (tool names may) and is matched whole.
        let s2 = set(&["fs/write", "write"]);
        let r = run(&s2, &["mcp://filesystem/fs/*"], &names);
        assert_eq!(r.sensitive, ["fs/write"]);
    }

    #[test]
    fn malformed_mcp_patterns_are_errors() {
        for (p, why) in [
            ("mcp://payments", "missing"),
            ("mcp://", "missing"),
            ("mcp:///delete", "server part"),
            ("mcp://payments/", "tool part"),
            ("mcp://host:8080/delete", "port"),
            ("mcp://user@host/delete", "port"),
            ("mcp://h/x?y", "ok"),
            ("mcp:payments/refund", "mcp://"),
            ("MCP:/payments/refund", "mcp://"),
        ] {
            let r = Pattern::parse(p);
            if why == "ok" {
                assert!(r.is_ok(), "{p}");
                continue;
            }
            let e = r.expect_err(p);
            assert_eq!(e.pattern, p);
            assert!(e.reason.contains(why), "{p}: {}", e.reason);
            assert!(parse_patterns(&["ok", p]).is_err());
        }
        // Not the scheme: ordinary patterns.
        for p in ["mcp", "mcpx://a/b", "my_mcp://a/b", "*mcp:*"] {
            assert!(Pattern::parse(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn server_names_last_segment_title_alias() {
        let n = ServerNames::of_target("io.github.acme/files", Some("Acme Files"), &["fs"]);
        assert_eq!(
            n.names(),
            ["io.github.acme/files", "files", "Acme Files", "fs"]
        );
        let s = set(&["delete_file"]);
        for p in [
            "mcp://files/delete_*",
            "mcp://acme files/delete_*",
            "mcp://FS/delete_*",
            "io.github.acme/files/delete_file",
            "fs/delete_file",
        ] {
            assert_eq!(run(&s, &[p], &n).sensitive, ["delete_file"], "{p}");
        }
        assert!(run(&s, &["mcp://acme/delete_*"], &n).sensitive.is_empty());
        // Duplicates (after folding) and empty names are dropped.
        let n = ServerNames::new(["Files", "x/files", "", "FILES"]);
        assert_eq!(n.names(), ["Files", "x/files"]);
    }

    #[test]
    fn starter_policy_says_which_category() {
        let s = set(&[
            "read_file",
            "write_file",
            "send_email",
            "delete_policy",
            "zip",
        ]);
        let c = STARTER.compile();
        let r = classify_sensitive(&s, &[], Some(&c), &ServerNames::none());
        assert_eq!(r.sensitive, ["write_file", "send_email", "delete_policy"]);
        assert_eq!(r.safe, ["read_file", "zip"]);
        assert_eq!(r.policy, Some("starter/1"));
        let cats = r.categories.unwrap();
        assert_eq!(cats["write_file"], ["files-and-storage"]);
        assert_eq!(cats["send_email"], ["email-and-messaging"]);
        assert_eq!(cats["delete_policy"], ["destructive-database", "admin"]);
        // Patterns add to the policy; a tool only they match has no category.
        let r = classify_sensitive(
            &s,
            &parse_patterns(&["zip"]).unwrap(),
            Some(&c),
            &ServerNames::none(),
        );
        assert!(r.sensitive.contains(&"zip".to_owned()));
        assert!(!r.categories.unwrap().contains_key("zip"));
    }

    #[test]
    fn work_counts_every_form() {
        let s = set(&["ab", "ab", "c"]);
        let none = ServerNames::none();
        // Names "ab" and "c": (2+1)+(1+1) = 5 characters; a bare "x*" costs 3 per character.
        let w = |p: &[&str], n: &ServerNames| match_work(&s, &parse_patterns(p).unwrap(), None, n);
        assert_eq!(w(&["x*"], &none), 15);
        // Qualified with no server: "/ab", "/c" = (3+1)+(2+1) = 7 × (3+1).
        assert_eq!(w(&["a/b"], &none), 28);
        // Two server names "s" and "tt" (+1 each): (3+2)+(2+2) + (3+3)+(2+3) = 20 × 4.
        let two = ServerNames::new(["s", "tt"]);
        assert_eq!(w(&["a/b"], &two), 80);
        // Canonical: tool glob "b" (2) × 5, server glob "*" (2) × (2+3).
        assert_eq!(w(&["mcp://*/b"], &two), 10 + 10);
        let c = match_work(&s, &[], Some(&STARTER), &none);
        assert_eq!(c, 5 * STARTER.glob_chars());
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
    fn a_run_of_stars_is_read_as_one_star_and_costs_what_one_costs() {
        let s = set(&["delete_repo", "read_file"]);
        let none = ServerNames::none();
        let stars = "*".repeat(200);
        let many = parse_patterns(&[stars.as_str()]).unwrap();
        let one = parse_patterns(&["*"]).unwrap();
        // It matches like `*`: every named tool.
        let split = run(&s, &[stars.as_str()], &none);
        assert_eq!(split, run(&s, &["*"], &none));
        assert_eq!(split.sensitive, ["delete_repo", "read_file"]);
        let (many_work, one_work) = (
            match_work(&s, &many, None, &none),
            match_work(&s, &one, None, &none),
        );
        println!("200 stars: work {many_work}; `*`: work {one_work}");
        assert_eq!(many_work, one_work);
        // Every form collapses its runs, and the pattern keeps its text as given.
        for (pattern, like) in [
            ("de**te***", "de*te*"),
            ("io.example/**/read_file", "io.example/*/read_file"),
            ("mcp://***/delete**", "mcp://*/delete*"),
        ] {
            let p = Pattern::parse(pattern).unwrap();
            assert_eq!(p.as_str(), pattern);
            assert_eq!(p.kind, Pattern::parse(like).unwrap().kind, "{pattern}");
        }
    }

    #[test]
    fn separate_star_groups_keep_their_whole_cost() {
        // 100 star groups with a literal between each: nothing to collapse, the pattern costs
        // its 200 characters (+1) per name character, as before.
        let long = "a".repeat(300);
        let s = set(&[long.as_str()]);
        let expensive = "*a".repeat(100);
        let p = parse_patterns(&[expensive.as_str()]).unwrap();
        let work = match_work(&s, &p, None, &ServerNames::none());
        println!("pattern of 100 `*a` groups against a 300-character name: work {work}");
        assert_eq!(work, 301 * 201);
        // Doubling each star changes nothing: the runs collapse to the same pattern.
        let doubled = "**a".repeat(100);
        let q = parse_patterns(&[doubled.as_str()]).unwrap();
        assert_eq!(match_work(&s, &q, None, &ServerNames::none()), work);
    }

    #[test]
    fn repeated_and_unnamed_entries() {
        let s = ToolSet::parse(br#"[{"name":"x"},{"name":"x"},{"nameless":1},3]"#).unwrap();
        let r = run(&s, &["x"], &ServerNames::none());
        assert_eq!(r.sensitive, ["x"]);
        assert!(r.safe.is_empty());
    }
}
