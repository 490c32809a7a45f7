//! The one error type of the roles: what failed, and the part's own error as its source.

use std::error::Error as StdError;

/// A role could not start or stopped on an error.
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    /// A part failed: what was being done, and the part's error.
    #[error("{what}: {source}")]
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

/// `e` and its sources, `: `-separated (a job's message keeps the whole chain).
pub(crate) fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        // thiserror's `{what}: {source}` already says its source: do not say it twice.
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}
