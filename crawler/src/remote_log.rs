//! The files of a remote log, fetched for `toolmark log verify URL`: a
//! [`toolmark_log::verify::Source`] over HTTP(S) that never follows a redirect and reads at most
//! [`MAX_FETCH_BYTES`] per file within [`FETCH_TIMEOUT`].
//!
//! The remote log is untrusted like every other host: `verify` re-derives everything it reads
//! and checks it against the signed checkpoint.

use std::time::Duration;

use toolmark_log::verify::Source;

/// Largest response `verify` reads from a remote log: an entry bundle of 256 entries of at most
/// 65,535 bytes each (plus length prefixes) is the largest public file a log serves.
pub const MAX_FETCH_BYTES: usize = 256 * 65_537;

/// How long `verify` waits for one remote file.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// A remote log's public files under `base` (the directory holding `checkpoint`).
pub struct HttpLog {
    base: String,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl HttpLog {
    /// The log served at `base`; no request is sent yet.
    pub fn new(base: &str) -> Result<HttpLog, String> {
        // The operator named the log (it may be their own, on a private address): unguarded,
        // but no redirect followed and every request within the timeout.
        let client = toolmark_outbound::client::unguarded(Some(FETCH_TIMEOUT))
            .map_err(|e| format!("building the HTTP client: {e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("starting the HTTP runtime: {e}"))?;
        Ok(HttpLog {
            base: base.trim_end_matches('/').to_owned(),
            client,
            runtime,
        })
    }
}

impl Source for HttpLog {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        let url = format!("{}/{path}", self.base);
        self.runtime.block_on(async {
            let response = self
                .client
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("{url}: {}", crate::error_chain(&e)))?;
            match response.status().as_u16() {
                404 => Ok(None),
                200 => crate::body::read_capped(response, MAX_FETCH_BYTES)
                    .await
                    .map(Some)
                    .map_err(|e| format!("{url}: {e}")),
                status => Err(format!("{url}: HTTP {status}")),
            }
        })
    }
}
