//! What makes two MCP tool sets "the same", and how a change between two is described.
//!
//! This crate is pure: no I/O, no async, no clock. It holds
//!
//! * [`json`]: a strict JSON reader that keeps number tokens and unpaired surrogates, which both
//!   digests depend on, and the exact source text of every tool;
//! * [`model`]: the accepted document shapes ([`ToolSet::parse`]);
//! * [`canon`]: RFC 8785 canonical JSON under two number profiles;
//! * [`mtl1`]: the MTL/1 tool-set digest, subject descriptor and subject digest, byte-exact with
//!   HISTOR 0.4.2;
//! * [`full`]: the `toolmark/1` full digest over every member of every tool;
//! * [`diff`]: what changed between two sets, tool by tool and field by field, bounded;
//! * [`classify`]: deterministic seed rules that call a change benign, unsure or dangerous and
//!   list every signal that fired;
//! * [`render`]: a change (diff and classification) as text for a terminal;
//! * [`text`]: the text helpers both use (word diff, outside addresses, Unicode format
//!   characters, model-addressing patterns, description-edit judgement);
//! * [`sensitive`]: WARDEN-style sensitive-tool name globs, with the `server/tool` and
//!   `mcp://<server>/<tool>` forms and the names a server answers to;
//! * [`policy`]: the starter policy (`starter/1`): categories of sensitive tool names as data;
//! * [`hex`]: the workspace's lowercase hex encoder and strict decoder;
//! * [`surface`]: a server's surface beyond `tools/list` (prompts, resources, templates, MCP
//!   Apps pages, the Server Card): as observed, digested and compared.
//!
//! It does not fetch tool sets (the `crawler` crate does), store or sign anything (the `log`
//! crate does) or decide what to tell a client (the `api` crate does).

#![deny(missing_docs)]

pub mod canon;
pub mod classify;
pub mod diff;
pub mod full;
pub mod hex;
pub mod instructions;
pub mod json;
pub mod legs;
pub mod model;
pub mod mtl1;
pub mod policy;
pub mod render;
pub mod rules;
pub mod sensitive;
pub mod sri;
pub mod surface;
pub mod text;

pub use model::{ParseError, Shape, Tool, ToolSet};
pub use mtl1::{MtlCode, MtlError};
pub use sri::Sri;
