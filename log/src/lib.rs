//! The verifiable log (not built yet: issue #3).
//!
//! This crate will hold everything that makes toolmark's record append-only and checkable by tools
//! we did not write: the canonical log entry encoding, RFC 6962 Merkle hashing, C2SP
//! `tlog-checkpoint` notes signed with Ed25519 (`signed-note`), `tlog-tiles` tiles and entry
//! bundles, the single-writer sequencer over a storage contract, inclusion and consistency
//! proofs, and `fsck`/audit.
//!
//! It will not dial the network (the crawler does), serve HTTP (the api does) or decide what a
//! tool set is (the `toolset` crate does). Today it contains no code: nothing here may be mistaken
//! for a working log.
