//! The public API, feeds and desk (not built yet: issue #5).
//!
//! An axum router built by a function: `/api/v1/check` with proofs, server and change lookups,
//! the log's tiles and proofs, Atom/RSS/JSON change feeds and the web desk. It will never dial out.
//!
//! Today it contains no code.
