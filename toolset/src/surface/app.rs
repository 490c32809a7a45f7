//! MCP Apps (SEP-1865): the `ui://` pages a tool set names. (The page analysis lands with the
//! rest of this module.)

use std::collections::HashSet;

use crate::json::Json;
use crate::model::ToolSet;

/// The scheme every MCP App page's URI starts with.
pub const UI_SCHEME: &str = "ui://";

/// At most this many `ui://` URIs are taken from one tool set; the session reads each with one
/// `resources/read`. The official examples name one page per server and a tool names at most
/// one, so 32 covers a page for every tool of a 30-tool app server, while a hostile set naming
/// thousands costs at most 32 more requests.
pub const MAX_UI_URIS: usize = 32;

/// A named URI longer than this many bytes is not taken (it would be sent back whole in the
/// request): 2,048 is the length browsers and proxies have long been safe with, and a
/// `ui://server/view` URI is a few dozen bytes.
pub const UI_URI_MAX_BYTES: usize = 2_048;

/// The `ui://` URIs the tools of `set` name (`_meta.ui.resourceUri`, then the legacy
/// `_meta["ui/resourceUri"]`, tool by tool), in the order first named, each once, exactly as
/// named: at most [`MAX_UI_URIS`], each a string starting with [`UI_SCHEME`] of at most
/// [`UI_URI_MAX_BYTES`] bytes (others are not pages and are never read).
pub fn ui_uris(set: &ToolSet) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for tool in &set.tools {
        let Some(meta) = tool.get("_meta") else {
            continue;
        };
        let named = [
            meta.get("ui").and_then(|ui| ui.get("resourceUri")),
            meta.get("ui/resourceUri"),
        ];
        for uri in named.into_iter().flatten().filter_map(Json::as_str) {
            if uri.starts_with(UI_SCHEME) && uri.len() <= UI_URI_MAX_BYTES && seen.insert(uri) {
                if out.len() == MAX_UI_URIS {
                    return out;
                }
                out.push(uri.to_owned());
            }
        }
    }
    out
}
