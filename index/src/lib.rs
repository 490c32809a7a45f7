//! The queryable index (SQLite) and the content-addressed blob store. Not built yet.
