//! Schedules (not built yet: issue #6).
//!
//! Cron-driven jobs (daily crawl, checkpoint heartbeat, later the package sweep and witness
//! rounds) with a single-run lock, catch-up after downtime and graceful shutdown.
//!
//! Today it contains no code.
