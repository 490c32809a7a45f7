//! Subscriptions as the configuration file writes them, and their validation.
//!
//! ```toml
//! [[webhooks]]
//! id = "soc"                       # 1–64 of [a-z0-9_-], unique
//! url = "https://hooks.example.com/toolmark"   # https only
//! secret_env = "TOOLMARK_WEBHOOK_SOC"          # or: secret = "…" (≥ 32 bytes)
//! watch = ["0123456789abcdef"]     # optional: only these targets' events
//! ```
//!
//! `secret_env` names an environment variable that holds the secret, so the secret stays out of
//! the file; `secret` writes it in the file. Exactly one of them is given.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Fewest bytes a secret may have (HMAC-SHA256's output size; HISTOR's minimum too).
pub const MIN_SECRET_BYTES: usize = 32;

/// Most bytes a secret may have.
pub const MAX_SECRET_BYTES: usize = 1_024;

/// Most subscriptions a configuration may hold.
pub const MAX_SUBSCRIPTIONS: usize = 100;

/// Most target ids in one subscription's `watch` (the feeds' limit).
pub const MAX_WATCH: usize = 100;

/// Longest subscription id.
pub const MAX_ID_CHARS: usize = 64;

/// Longest URL.
pub const MAX_URL_CHARS: usize = 2_048;

/// One `[[webhooks]]` entry of the configuration file, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// The subscription's name (its cursor is kept under it).
    pub id: String,
    /// Where events are posted (`https` only).
    pub url: String,
    /// The HMAC secret, written in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The environment variable that holds the HMAC secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_env: Option<String>,
    /// Only events about these target ids (16 lowercase hex digits each); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<Vec<String>>,
}

/// A subscription, validated.
#[derive(Clone, PartialEq, Eq)]
pub struct Subscription {
    /// Its name.
    pub id: String,
    /// Its URL (`https`).
    pub url: String,
    /// The HMAC secret's bytes.
    pub secret: Vec<u8>,
    /// Only these targets' events (sorted, unique); all when `None`.
    pub watch: Option<Vec<String>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("watch", &self.watch)
            .finish_non_exhaustive()
    }
}

/// A subscription that is not valid; the message names the key (`webhooks[2].url`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct ConfigError {
    /// The key at fault, `webhooks[i].<member>`.
    pub key: String,
    /// What is wrong with it.
    pub reason: String,
}

fn err(i: usize, member: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        key: format!("webhooks[{i}].{member}"),
        reason: reason.into(),
    }
}

/// Validate the configured subscriptions, reading secrets named by `secret_env` through `env`
/// (`std::env::var` in the binary).
///
/// # Errors
///
/// The first subscription that is not valid ([`ConfigError`], naming its key).
pub fn validate(
    configs: &[WebhookConfig],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<Subscription>, ConfigError> {
    if configs.len() > MAX_SUBSCRIPTIONS {
        return Err(ConfigError {
            key: "webhooks".into(),
            reason: format!("more than {MAX_SUBSCRIPTIONS} subscriptions"),
        });
    }
    let mut ids = BTreeSet::new();
    configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id_ok = !c.id.is_empty()
                && c.id.len() <= MAX_ID_CHARS
                && c.id.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                });
            if !id_ok {
                return Err(err(
                    i,
                    "id",
                    format!("1–{MAX_ID_CHARS} characters of a-z, 0-9, - and _"),
                ));
            }
            if !ids.insert(c.id.clone()) {
                return Err(err(i, "id", format!("{:?} is used twice", c.id)));
            }
            if c.url.len() > MAX_URL_CHARS {
                return Err(err(
                    i,
                    "url",
                    format!("longer than {MAX_URL_CHARS} characters"),
                ));
            }
            let url = url::Url::parse(&c.url)
                .map_err(|e| err(i, "url", format!("{:?} is not a URL: {e}", c.url)))?;
            if url.scheme() != "https" {
                return Err(err(
                    i,
                    "url",
                    format!(
                        "{:?} is not https (webhooks are delivered over https only)",
                        c.url
                    ),
                ));
            }
            if url.host_str().is_none_or(str::is_empty) {
                return Err(err(i, "url", "has no host"));
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Err(err(i, "url", "carries a user name or password"));
            }
            let secret = match (&c.secret, &c.secret_env) {
                (Some(s), None) => s.clone(),
                (None, Some(var)) => env(var).ok_or_else(|| {
                    err(
                        i,
                        "secret_env",
                        format!("the environment variable {var} is not set"),
                    )
                })?,
                _ => {
                    return Err(err(
                        i,
                        "secret",
                        "give exactly one of secret and secret_env",
                    ));
                }
            };
            let member = if c.secret.is_some() {
                "secret"
            } else {
                "secret_env"
            };
            if secret.len() < MIN_SECRET_BYTES {
                return Err(err(
                    i,
                    member,
                    format!("the secret is shorter than {MIN_SECRET_BYTES} bytes"),
                ));
            }
            if secret.len() > MAX_SECRET_BYTES {
                return Err(err(
                    i,
                    member,
                    format!("the secret is longer than {MAX_SECRET_BYTES} bytes"),
                ));
            }
            let watch = match &c.watch {
                None => None,
                Some(w) => {
                    if w.is_empty() || w.len() > MAX_WATCH {
                        return Err(err(i, "watch", format!("1–{MAX_WATCH} target ids")));
                    }
                    if let Some(bad) = w.iter().find(|t| {
                        t.len() != 16 || !t.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                    }) {
                        return Err(err(
                            i,
                            "watch",
                            format!("{bad:?} is not a target id (16 lowercase hex digits)"),
                        ));
                    }
                    let set: BTreeSet<String> = w.iter().cloned().collect();
                    Some(set.into_iter().collect())
                }
            };
            Ok(Subscription {
                id: c.id.clone(),
                url: c.url.clone(),
                secret: secret.into_bytes(),
                watch,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(c: WebhookConfig) -> Result<Vec<Subscription>, ConfigError> {
        validate(&[c], |v| (v == "HOOK_SECRET").then(|| "s".repeat(40)))
    }

    fn good() -> WebhookConfig {
        WebhookConfig {
            id: "soc".into(),
            url: "https://hooks.example.com/toolmark".into(),
            secret: Some("k".repeat(32)),
            ..WebhookConfig::default()
        }
    }

    #[test]
    fn a_subscription_with_an_https_url_and_a_long_secret_is_valid() {
        let s = one(good()).unwrap();
        assert_eq!(s[0].secret, b"k".repeat(32));
        assert!(
            !format!("{s:?}").contains("kkkk"),
            "Debug never shows the secret"
        );
    }

    #[test]
    fn an_http_url_is_refused_naming_the_key() {
        let e = one(WebhookConfig {
            url: "http://hooks.example.com/toolmark".into(),
            ..good()
        })
        .unwrap_err();
        assert_eq!(e.key, "webhooks[0].url");
        assert!(e.reason.contains("https"), "{e}");
    }

    #[test]
    fn a_short_secret_is_refused_naming_the_key() {
        let e = one(WebhookConfig {
            secret: Some("k".repeat(31)),
            ..good()
        })
        .unwrap_err();
        assert_eq!(e.key, "webhooks[0].secret");
    }

    #[test]
    fn a_secret_comes_from_the_environment_variable_named() {
        let s = one(WebhookConfig {
            secret: None,
            secret_env: Some("HOOK_SECRET".into()),
            ..good()
        })
        .unwrap();
        assert_eq!(s[0].secret, b"s".repeat(40));
        let e = one(WebhookConfig {
            secret: None,
            secret_env: Some("UNSET".into()),
            ..good()
        })
        .unwrap_err();
        assert_eq!(e.key, "webhooks[0].secret_env");
        let e = one(WebhookConfig {
            secret_env: Some("HOOK_SECRET".into()),
            ..good()
        })
        .unwrap_err();
        assert_eq!(e.key, "webhooks[0].secret");
    }

    #[test]
    fn ids_are_unique_and_plain_and_watch_holds_target_ids() {
        let e = validate(&[good(), good()], |_| None).unwrap_err();
        assert_eq!(e.key, "webhooks[1].id");
        let e = one(WebhookConfig {
            id: "Bad Id".into(),
            ..good()
        })
        .unwrap_err();
        assert_eq!(e.key, "webhooks[0].id");
        let e = one(WebhookConfig {
            watch: Some(vec!["xyz".into()]),
            ..good()
        })
        .unwrap_err();
        assert_eq!(e.key, "webhooks[0].watch");
        let s = one(WebhookConfig {
            watch: Some(vec![
                "00000000000000bb".into(),
                "00000000000000aa".into(),
                "00000000000000bb".into(),
            ]),
            ..good()
        })
        .unwrap();
        assert_eq!(
            s[0].watch.as_deref(),
            Some(&["00000000000000aa".to_owned(), "00000000000000bb".to_owned()][..])
        );
    }

    #[test]
    fn a_url_with_credentials_is_refused() {
        let e = one(WebhookConfig {
            url: "https://user:pw@hooks.example.com/".into(),
            ..good()
        })
        .unwrap_err();
        assert_eq!(e.key, "webhooks[0].url");
    }
}
