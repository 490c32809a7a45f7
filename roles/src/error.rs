//! The one error type of the roles: what failed, and the part's own error as its source.

use std::error::Error as StdError;

/// A role could not start or stopped on an error.
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    /// A part failed: what was being done, and the part's error (its source: shown by whoever
    /// prints the chain, as `anyhow`'s `{:#}` and [`chain`] do).
    #[error("{what}")]
    Failed {
        /// What the role was doing.
        what: String,
        /// The part's error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// The configuration or the state of the data directory does not allow it.
    #[error("{0}")]
    Refused(String),
}

impl RoleError {
    /// A closure for `map_err` that wraps a part's error with what was being done.
    pub fn doing<E>(what: impl Into<String>) -> impl FnOnce(E) -> RoleError
    where
        E: Into<Box<dyn StdError + Send + Sync>>,
    {
        let what = what.into();
        move |e| RoleError::Failed {
            what,
            source: e.into(),
        }
    }
}

/// `e` and its sources, `: `-separated: the whole chain in one line (a job's message).
pub fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_says_what_was_done_and_its_chain_says_why() {
        let e = RoleError::doing("opening the index")(std::io::Error::other("disk on fire"));
        assert_eq!(e.to_string(), "opening the index");
        assert_eq!(chain(&e), "opening the index: disk on fire");
    }
}
