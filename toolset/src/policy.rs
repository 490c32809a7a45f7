//! The starter policy: named categories of sensitive tool names, as data.
//!
//! NullRun recommends that a caller start from categories of tools that act for the user —
//! moving money, sending e-mail and messages, destroying data, writing to outside systems,
//! writing files and storage, administering accounts — and WARDEN matches tool names against
//! globs. [`STARTER`] is that starting point written as WARDEN globs (whole name,
//! case-insensitive, `*` the only wildcard, see [`crate::sensitive`]): one list of globs per
//! category, plus [`Policy::safe`], globs of read-only verbs (`get*`, `list*`, `read*`…) that
//! no category overrides, so `list_payments` and `get_secret_metadata` stay safe while
//! `create_refund` does not.
//!
//! It is never applied implicitly: a caller asks for it by name ([`policy`], `starter` or
//! `starter/1`); an empty pattern list without a policy still marks every tool safe. Its name
//! carries a version: a change to any glob is a new version (`starter/2`), so a stored census or
//! classification says which globs decided it. The globs read names only, never descriptions or
//! schemas, so they are a heuristic: a `delete_*` tool of a note-taking server is called
//! destructive, and a payment tool named `do_it` is not seen.
//!
//! The globs were checked against the real tool sets in `tests/fixtures/corpus/` (the reference
//! filesystem and memory servers, Okta, Alfresco, Cloudflare docs, fetch, Puppeteer) and the
//! demo's server-everything: every `read_*`, `list_*`, `get_*`, `search_*` tool stays safe, and
//! the tests in this module pin each category's hits and misses.

use crate::sensitive::{fold, glob_match};

/// One category of the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category {
    /// The stable kebab-case id (`money`, `email-and-messaging`, …).
    pub id: &'static str,
    /// One line on what it covers.
    pub summary: &'static str,
    /// The globs whose match puts a tool in this category.
    pub globs: &'static [&'static str],
}

/// A named, versioned set of categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// The versioned name (`starter/1`).
    pub name: &'static str,
    /// The categories, in a fixed order (the order answers list them in).
    pub categories: &'static [Category],
    /// Globs of read-only verbs: a name matching one is in no category.
    pub safe: &'static [&'static str],
}

/// The starter policy, version 1.
pub const STARTER: Policy = Policy {
    name: "starter/1",
    categories: &[
        Category {
            id: "money",
            summary: "Moves money: payments, refunds, payouts, transfers, charges, invoices, purchases.",
            globs: &[
                "*refund*",
                "*payment*",
                "*payout*",
                "pay",
                "pay_*",
                "*_pay",
                "*_pay_*",
                "*transfer_fund*",
                "*transfer_money*",
                "*bank_transfer*",
                "*wire_transfer*",
                "*create_transfer*",
                "*send_money*",
                "*withdraw*",
                "*charge*",
                "*invoice*",
                "*purchase*",
                "*buy_*",
                "*place_order*",
                "*billing*",
            ],
        },
        Category {
            id: "email-and-messaging",
            summary: "Speaks for the user: sends e-mail, messages, SMS, notifications, replies.",
            globs: &[
                "*send*mail*",
                "*send*message*",
                "*post*message*",
                "*send*sms*",
                "*send_text*",
                "*send*notification*",
                "*send_dm*",
                "*direct_message*",
                "*reply*",
                "*forward*mail*",
                "*forward*message*",
                "*notify*",
                "*broadcast*",
            ],
        },
        Category {
            id: "destructive-database",
            summary: "Destroys or rewrites data: deletes, drops, truncates, purges, raw SQL.",
            globs: &[
                "drop",
                "drop_*",
                "*_drop",
                "*_drop_*",
                "*truncate*",
                "*delete*",
                "*purge*",
                "*destroy*",
                "*wipe*",
                "*erase*",
                "*remove*",
                "*execute*sql*",
                "*exec*sql*",
                "*run*sql*",
                "*execute_query*",
                "*write_query*",
                "*alter_table*",
                "*flushall*",
                "*flushdb*",
            ],
        },
        Category {
            id: "external-writes",
            summary: "Writes to an outside system: issues, pull requests, pushes, publishing, \
                      deploys, comments, posts, webhooks.",
            globs: &[
                "*create_issue*",
                "*pull_request*",
                "*merge_request*",
                "*merge_branch*",
                "*push*",
                "*publish*",
                "*deploy*",
                "*commit*",
                "*create_release*",
                "*create_repo*",
                "*fork*",
                "*comment*",
                "*tweet*",
                "post",
                "post_*",
                "*create_post*",
                "*webhook*",
                "*http_post*",
                "*http_put*",
                "*http_patch*",
                "*http_delete*",
                "*trigger*",
                "*dispatch*",
            ],
        },
        Category {
            id: "files-and-storage",
            summary: "Writes files or storage: write, edit, create, move, upload, permissions.",
            globs: &[
                "write",
                "write_*",
                "*_write",
                "*writefile*",
                "*write_file*",
                "*edit_file*",
                "*editfile*",
                "*create_file*",
                "*createfile*",
                "*create_directory*",
                "*createdirectory*",
                "*mkdir*",
                "*move_file*",
                "*movefile*",
                "*rename_file*",
                "*copy_file*",
                "*upload*",
                "*put_object*",
                "*save_file*",
                "*append_file*",
                "*append_to_file*",
                "*chmod*",
                "*chown*",
                "*create_bucket*",
            ],
        },
        Category {
            id: "admin",
            summary: "Administers accounts and access: users, roles, grants, secrets, policies, \
                      shells.",
            globs: &[
                "*create_user*",
                "*createuser*",
                "*update_user*",
                "*add_user*",
                "*create_group*",
                "*invite*",
                "*grant*",
                "*revoke*",
                "*role*",
                "*permission*",
                "*password*",
                "*credential*",
                "*secret*",
                "*api_key*",
                "*apikey*",
                "*access_key*",
                "*create_token*",
                "*rotate*",
                "*sudo*",
                "*impersonat*",
                "*admin*",
                "*activate*",
                "*suspend*",
                "*mfa*",
                "*policy*",
                "*add_member*",
                "*run_command*",
                "*execute_command*",
                "*exec_command*",
                "*shell*",
            ],
        },
    ],
    safe: &[
        "get*",
        "list*",
        "read*",
        "search*",
        "find*",
        "describe*",
        "show*",
        "view*",
        "fetch*",
        "count*",
        "check_*",
        "lookup*",
        "inspect*",
        "browse*",
        "explain*",
        "preview*",
    ],
};

/// Every policy a caller may name, newest last.
pub const POLICIES: &[Policy] = &[STARTER];

/// The policy a caller names: its versioned name (`starter/1`), or its family name (`starter`)
/// for the newest version. Case-sensitive, as written here.
pub fn policy(name: &str) -> Option<&'static Policy> {
    POLICIES
        .iter()
        .rev()
        .find(|p| p.name == name || p.name.split('/').next() == Some(name))
}

/// A policy name that names no policy ([`named`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy {0:?}: the policies are starter, starter/1")]
pub struct UnknownPolicy(pub String);

/// [`policy`], or an error naming the policies there are.
///
/// # Errors
///
/// [`UnknownPolicy`] when `name` names none.
pub fn named(name: &str) -> Result<&'static Policy, UnknownPolicy> {
    policy(name).ok_or_else(|| UnknownPolicy(name.to_owned()))
}

/// A policy with its globs folded once, for matching many names.
#[derive(Debug, Clone)]
pub struct Compiled {
    policy: &'static Policy,
    safe: Vec<Vec<char>>,
    categories: Vec<(&'static str, Vec<Vec<char>>)>,
}

impl Policy {
    /// The policy ready to match.
    pub fn compile(&'static self) -> Compiled {
        Compiled {
            policy: self,
            safe: self.safe.iter().map(|g| fold(g)).collect(),
            categories: self
                .categories
                .iter()
                .map(|c| (c.id, c.globs.iter().map(|g| fold(g)).collect()))
                .collect(),
        }
    }

    /// The category with this id.
    pub fn category(&self, id: &str) -> Option<&'static Category> {
        self.categories.iter().find(|c| c.id == id)
    }

    /// Characters of every glob (safe and category ones) plus one per glob: what matching one
    /// name costs per name character at worst (see [`crate::sensitive::match_work`]).
    pub fn glob_chars(&self) -> u64 {
        self.safe
            .iter()
            .chain(self.categories.iter().flat_map(|c| c.globs.iter()))
            .map(|g| g.chars().count() as u64 + 1)
            .sum()
    }
}

impl Compiled {
    /// The policy compiled.
    pub fn policy(&self) -> &'static Policy {
        self.policy
    }

    /// The ids of the categories `name` falls in, in the policy's order (empty: safe).
    pub fn categories_of(&self, name: &str) -> Vec<&'static str> {
        let name = fold(name);
        self.categories_of_folded(&name)
    }

    /// [`Compiled::categories_of`] for a name already folded.
    pub(crate) fn categories_of_folded(&self, name: &[char]) -> Vec<&'static str> {
        if self.safe.iter().any(|g| glob_match(g, name)) {
            return Vec::new();
        }
        self.categories
            .iter()
            .filter(|(_, globs)| globs.iter().any(|g| glob_match(g, name)))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The first glob of `category` that matches `name` (after the safe verbs let it through),
    /// to say why a tool is in a category.
    pub fn why(&self, category: &str, name: &str) -> Option<&'static str> {
        let folded = fold(name);
        if self.safe.iter().any(|g| glob_match(g, &folded)) {
            return None;
        }
        let c = self.policy.category(category)?;
        let i = self.categories.iter().position(|(id, _)| *id == category)?;
        self.categories[i]
            .1
            .iter()
            .position(|g| glob_match(g, &folded))
            .map(|k| c.globs[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cats(name: &str) -> Vec<&'static str> {
        STARTER.compile().categories_of(name)
    }

    #[test]
    fn an_unknown_policy_name_is_an_error_naming_the_policies() {
        assert_eq!(named("starter").unwrap().name, "starter/1");
        assert_eq!(
            named("strict").unwrap_err().to_string(),
            "unknown policy \"strict\": the policies are starter, starter/1"
        );
    }

    #[test]
    fn named_by_family_or_version_only() {
        assert_eq!(policy("starter").map(|p| p.name), Some("starter/1"));
        assert_eq!(policy("starter/1").map(|p| p.name), Some("starter/1"));
        assert!(policy("Starter").is_none());
        assert!(policy("starter/2").is_none());
        assert!(policy("").is_none());
    }

    #[test]
    fn the_six_categories_in_order() {
        let ids: Vec<_> = STARTER.categories.iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                "money",
                "email-and-messaging",
                "destructive-database",
                "external-writes",
                "files-and-storage",
                "admin"
            ]
        );
    }

    #[test]
    fn globs_are_lowercase_star_only_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for g in STARTER
            .safe
            .iter()
            .chain(STARTER.categories.iter().flat_map(|c| c.globs.iter()))
        {
            assert_eq!(*g, g.to_lowercase(), "{g}");
            assert!(!g.contains('/'), "{g}: starter globs are bare");
            assert!(seen.insert(*g), "{g} twice");
        }
    }

    #[test]
    fn money() {
        for n in [
            "create_refund",
            "refund_payment",
            "createPayment",
            "pay",
            "pay_invoice",
            "transfer_funds",
            "send_money",
            "charge_card",
            "purchase_item",
            "withdraw",
        ] {
            assert!(cats(n).contains(&"money"), "{n}");
        }
        for n in [
            "display",
            "payload_size",
            "replay",
            "list_payments",
            "get_invoice",
        ] {
            assert!(!cats(n).contains(&"money"), "{n}");
        }
    }

    #[test]
    fn email_and_messaging() {
        for n in [
            "send_email",
            "send_test_email",
            "sendEmail",
            "gmail_send_mail",
            "slack_post_message",
            "send_message",
            "reply_to_thread",
            "send_sms",
        ] {
            assert!(cats(n).contains(&"email-and-messaging"), "{n}");
        }
        for n in [
            "list_email_templates",
            "get_email_settings",
            "read_messages",
            "search_emails",
            "create_email_draft",
        ] {
            assert!(!cats(n).contains(&"email-and-messaging"), "{n}");
        }
    }

    #[test]
    fn destructive_database() {
        for n in [
            "drop_table",
            "DROP",
            "delete_node",
            "truncate_table",
            "purge_queue",
            "execute_sql",
            "write_query",
            "remove_user_from_group",
        ] {
            assert!(cats(n).contains(&"destructive-database"), "{n}");
        }
        for n in [
            "dropdown_select",
            "read_query",
            "list_tables",
            "describe_table",
        ] {
            assert!(!cats(n).contains(&"destructive-database"), "{n}");
        }
    }

    #[test]
    fn external_writes() {
        for n in [
            "create_issue",
            "create_pull_request",
            "merge_pull_request",
            "push_files",
            "publish_post",
            "deploy_worker",
            "add_comment",
            "post",
            "trigger_workflow",
        ] {
            assert!(cats(n).contains(&"external-writes"), "{n}");
        }
        for n in [
            "list_issues",
            "get_pull_request",
            "search_repositories",
            "compost",
        ] {
            assert!(!cats(n).contains(&"external-writes"), "{n}");
        }
    }

    #[test]
    fn files_and_storage() {
        for n in [
            "write_file",
            "writeFile",
            "edit_file",
            "create_directory",
            "move_file",
            "upload_file",
            "put_object",
        ] {
            assert!(cats(n).contains(&"files-and-storage"), "{n}");
        }
        for n in [
            "read_file",
            "read_multiple_files",
            "list_directory",
            "directory_tree",
            "get_file_info",
            "create_profile",
            "rewrite_text",
        ] {
            assert!(!cats(n).contains(&"files-and-storage"), "{n}");
        }
    }

    #[test]
    fn admin() {
        for n in [
            "create_user",
            "grant_access",
            "assign_role",
            "reset_password",
            "create_api_key",
            "deactivate_user",
            "run_command",
            "execute_shell",
        ] {
            assert!(cats(n).contains(&"admin"), "{n}");
        }
        for n in [
            "list_users",
            "get_user",
            "get_policy",
            "list_roles",
            "controller_status",
        ] {
            assert!(!cats(n).contains(&"admin"), "{n}");
        }
    }

    #[test]
    fn read_verbs_are_never_sensitive() {
        for n in [
            "read_file",
            "list_deleted_items",
            "get_payment",
            "search_and_delete_preview",
            "fetch",
            "describe_secret",
            "Get_Refund",
        ] {
            assert!(cats(n).is_empty(), "{n}: {:?}", cats(n));
        }
    }

    #[test]
    fn a_name_may_fall_in_several_categories() {
        assert_eq!(cats("delete_policy"), ["destructive-database", "admin"]);
        assert_eq!(cats("echo"), Vec::<&str>::new());
    }

    #[test]
    fn why_names_the_first_matching_glob() {
        let c = STARTER.compile();
        assert_eq!(c.why("money", "create_refund"), Some("*refund*"));
        assert_eq!(c.why("money", "list_refunds"), None);
        assert_eq!(c.why("admin", "create_refund"), None);
        assert_eq!(c.why("nope", "create_refund"), None);
    }
}
