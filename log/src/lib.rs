//! The verifiable log: what toolmark saw, in a form nobody can silently rewrite and anyone can
//! check with tools we did not write.
//!
//! * [`entry`]: the canonical entry of one observation (RFC 8785 JSON, ≤ 64 KiB, `prev` link);
//! * [`merkle`]: RFC 6962 hashing, stored-hash indexing, inclusion and consistency proofs;
//! * [`tiles`]: C2SP `tlog-tiles` paths, tile contents and entry bundles;
//! * [`note`]: C2SP `signed-note` and `tlog-checkpoint` with Ed25519 keys;
//! * [`cosignature`]: C2SP `tlog-cosignature` (Ed25519 `cosignature/v1`): witness keys, signing
//!   and verifying cosignatures;
//! * [`policy`]: witness policies (C2SP `tlog-policy`, or k of n witnesses), checked with a
//!   maximum age;
//! * [`witness`]: the C2SP `tlog-witness` `add-checkpoint` wire format;
//! * [`witnessing`]: the cosigner's status file (`DATA/witnessing.json`), one type for the
//!   cosigner that writes it and the API that reads it;
//! * [`proof`]: the `c2sp.org/tlog-proof@v1` offline bundle;
//! * `store`: the storage contract between the two stores below, and publication;
//! * `head`: the head store (the checkpoint compare-and-swap): SQLite on one box, PostgreSQL for
//!   several writers;
//! * `objects`: the object store (tiles, bundles, checkpoint, staging, documents): a directory
//!   or any S3-compatible bucket, through `object_store`;
//! * `migrate`: copying a single-box log into PostgreSQL and a bucket, verified before its head
//!   is committed;
//! * `place`: which log a command names (a directory, stores, a key file), opened or created;
//! * `sequencer`: the writer (`Log`), safe beside other writers, with crash recovery on open;
//! * [`verify`]: `fsck` and audit from the public files alone;
//! * `reader`: proofs and entries from the public files, without the writer's lock.
//!
//! It does not dial the network (the crawler does; the binary fetches a remote log for
//! `verify`), serve HTTP (the api does) or decide what a tool set is (the `toolset` crate
//! does). The Merkle, tile, note, cosignature, policy, witness and witnessing modules are pure: no I/O, no SQLite, no async (but `witnessing::read`, behind `store`).
//!
//! `store`, `head`, `objects`, `sequencer` and `reader` are behind the default `store` feature,
//! the only part that needs SQLite, PostgreSQL, `object_store` and a runtime; without it
//! (`default-features = false`) the crate is what an offline verifier needs: entries, proofs,
//! notes, tiles, and `verify`.

pub mod cosignature;
pub mod entry;
#[cfg(feature = "store")]
pub mod head;
pub mod merkle;
#[cfg(feature = "store")]
pub mod migrate;
pub mod note;
#[cfg(feature = "store")]
pub mod objects;
#[cfg(feature = "store")]
pub mod place;
pub mod policy;
pub mod proof;
#[cfg(feature = "store")]
pub mod reader;
#[cfg(feature = "store")]
pub mod sequencer;
#[cfg(feature = "store")]
pub mod store;
pub mod tiles;
pub mod verify;
pub mod witness;
pub mod witnessing;

pub use merkle::{FormatError, Hash, ProofError};
#[cfg(feature = "store")]
pub use sequencer::{Appended, KEY_FILE, Log, LogError};
