//! Any bytes as a JSON-RPC message body: parsing never panics, every response's result is the
//! exact text of a part of the input, and error excerpts stay within their cap.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_mcp::jsonrpc::{self, Message};
use toolmark_mcp::limits::MAX_DETAIL_EXCERPT;

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

fuzz_target!(|data: &[u8]| {
    let Ok(messages) = jsonrpc::parse(data) else {
        return;
    };
    assert!(!messages.is_empty());
    for m in &messages {
        match m {
            Message::Response { result, .. } => {
                assert!(!result.is_empty());
                assert!(
                    contains(data, result.as_bytes()),
                    "result is not a slice of the input"
                );
            }
            Message::ErrorResponse {
                message, data: d, ..
            } => {
                assert!(message.chars().count() <= MAX_DETAIL_EXCERPT);
                assert!(
                    d.as_ref()
                        .is_none_or(|d| d.chars().count() <= MAX_DETAIL_EXCERPT)
                );
            }
            Message::Request { id, method } => {
                let _ = jsonrpc::reply_to(id, method);
            }
            Message::Notification { .. } => {}
        }
    }
    let _ = jsonrpc::find_answer(&messages, 1);
});
