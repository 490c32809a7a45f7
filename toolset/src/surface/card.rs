//! The Server Card (SEP-2127, draft): its digest.

use crate::full;
use crate::json;
use crate::model::{self, ParseError};
use crate::sri::Sri;

/// The card's digest: the SRI of the SHA-256 of the RFC 8785 bytes (ECMAScript numbers:
/// [`full::entry_bytes`], as every entry of the full digest) of the card document, whatever JSON
/// value it is. A byte order mark is skipped; the text must be strict JSON nested at most
/// [`json::MAX_DEPTH`] levels.
pub fn digest(body: &str) -> Result<Sri, ParseError> {
    let doc = json::parse(model::text_of(body.as_bytes())?)?;
    Ok(Sri::of(&full::entry_bytes(&doc)))
}
