//! Reading an untrusted HTTP response body with every cap applied while it streams.
//!
//! Every client built here ([`crate::client`]) asks for `gzip` and `deflate` only and this module
//! decompresses itself (reqwest's automatic decompression would hide the compressed size), so
//! three things are bounded chunk by chunk:
//! the decompressed size (a writer that refuses the byte past the cap, so even one chunk of a
//! gzip bomb never expands beyond it), the compression ratio once past [`RATIO_FLOOR`], and the
//! silence between chunks ([`READ_IDLE_TIMEOUT`], against slowloris drips). A caller that
//! accounts memory (the crawler's budget) passes a [`BodyMeter`] that is charged every
//! decompressed byte as it arrives.
//!
//! [`RATIO_FLOOR`]: crate::limits::RATIO_FLOOR
//! [`READ_IDLE_TIMEOUT`]: crate::limits::READ_IDLE_TIMEOUT

use std::io::Write;
use std::sync::Arc;

use crate::limits::{MAX_COMPRESSION_RATIO, RATIO_FLOOR, READ_IDLE_TIMEOUT};

/// Why a body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// The body decompresses to more than the cap.
    #[error("response is larger than {0} bytes")]
    TooLarge(usize),
    /// The body decompresses far more than real JSON does: a compression bomb.
    #[error("response decompresses more than {MAX_COMPRESSION_RATIO}× ({0} bytes from {1})")]
    Ratio(u64, u64),
    /// An encoding we did not ask for, several stacked encodings, or corrupt compressed data.
    #[error("content encoding: {0}")]
    Encoding(String),
    /// No byte arrived for [`READ_IDLE_TIMEOUT`], or the request's own timeout passed.
    #[error("body read timed out")]
    Timeout,
    /// The connection failed mid-body.
    #[error("body read failed: {0}")]
    Network(String),
    /// The caller's [`BodyMeter`] could not cover the next bytes without waiting (the crawler's
    /// memory budget): the observation stops and runs again once the budget has room.
    #[error("waiting for the memory budget")]
    Budget,
}

/// The caller's memory accounting, charged each body's decompressed bytes as they arrive.
pub trait BodyMeter: Send + Sync {
    /// Charge `bytes` just decompressed (the meter decides what they cost: how many copies of
    /// them the caller keeps); [`OverBudget`] stops the read with [`BodyError::Budget`].
    fn charge_body(&self, bytes: usize) -> Result<(), OverBudget>;
}

/// A [`BodyMeter`] that could not cover the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("over the memory budget")]
pub struct OverBudget;

/// The error [`Capped`] returns at its cap (told apart from corrupt data by type, not text).
#[derive(Debug)]
struct CapHit;

impl std::fmt::Display for CapHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("decompressed size cap reached")
    }
}

impl std::error::Error for CapHit {}

/// A writer that keeps at most `room` bytes and refuses the rest.
struct Capped {
    buf: Vec<u8>,
    room: usize,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if data.len() > self.room {
            return Err(std::io::Error::other(CapHit));
        }
        self.room -= data.len();
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

enum Decoder {
    Identity,
    Gzip(Box<flate2::write::MultiGzDecoder<Capped>>),
    Zlib(Box<flate2::write::ZlibDecoder<Capped>>),
    /// `deflate` whose first bytes were not a zlib header: raw deflate, as some servers send.
    Raw(Box<flate2::write::DeflateDecoder<Capped>>),
    /// `deflate` before the first byte told us which of the two it is.
    DeflatePending,
}

/// A response body being read under the caps.
pub struct Body {
    response: reqwest::Response,
    decoder: Decoder,
    max: usize,
    compressed: u64,
    decompressed: u64,
    done: bool,
    meter: Option<Arc<dyn BodyMeter>>,
}

impl Body {
    /// Start reading `response`, whose body may decompress to at most `max` bytes.
    pub fn new(response: reqwest::Response, max: usize) -> Result<Body, BodyError> {
        let encodings: Vec<String> = response
            .headers()
            .get_all(reqwest::header::CONTENT_ENCODING)
            .iter()
            .flat_map(|v| {
                String::from_utf8_lossy(v.as_bytes())
                    .split(',')
                    .map(|s| s.trim().to_ascii_lowercase())
                    .filter(|s| !s.is_empty() && s != "identity")
                    .collect::<Vec<_>>()
            })
            .collect();
        let decoder = match encodings.as_slice() {
            [] => Decoder::Identity,
            [one] if one == "gzip" || one == "x-gzip" => {
                Decoder::Gzip(Box::new(flate2::write::MultiGzDecoder::new(capped(max))))
            }
            [one] if one == "deflate" => Decoder::DeflatePending,
            [one] => return Err(BodyError::Encoding(format!("{one:?} was not asked for"))),
            _ => {
                return Err(BodyError::Encoding(format!(
                    "stacked encodings {encodings:?} are refused"
                )));
            }
        };
        Ok(Body {
            response,
            decoder,
            max,
            compressed: 0,
            decompressed: 0,
            done: false,
            meter: None,
        })
    }

    /// Charge every decompressed byte to `meter` as it arrives.
    pub fn metered(mut self, meter: Arc<dyn BodyMeter>) -> Body {
        self.meter = Some(meter);
        self
    }

    fn charge(&self, bytes: usize) -> Result<(), BodyError> {
        match &self.meter {
            Some(m) => m.charge_body(bytes).map_err(|OverBudget| BodyError::Budget),
            None => Ok(()),
        }
    }

    /// The next decompressed bytes; `None` at the end of the body. May return an empty vector
    /// when a chunk only fed the decompressor.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, BodyError> {
        if self.done {
            return Ok(None);
        }
        let chunk = match tokio::time::timeout(READ_IDLE_TIMEOUT, self.response.chunk()).await {
            Err(_) => return Err(BodyError::Timeout),
            Ok(Err(e)) if e.is_timeout() => return Err(BodyError::Timeout),
            Ok(Err(e)) => return Err(BodyError::Network(crate::error_chain(&e))),
            Ok(Ok(c)) => c,
        };
        let Some(chunk) = chunk else {
            self.done = true;
            let out = self.finish()?;
            self.charge(out.len())?;
            return Ok(Some(out));
        };
        self.compressed += chunk.len() as u64;
        let out = self.feed(&chunk)?;
        self.charge(out.len())?;
        self.decompressed += out.len() as u64;
        if self.decompressed > RATIO_FLOOR
            && self.decompressed > self.compressed.saturating_mul(MAX_COMPRESSION_RATIO)
        {
            return Err(BodyError::Ratio(self.decompressed, self.compressed));
        }
        Ok(Some(out))
    }

    /// Read the whole body.
    pub async fn read_all(mut self) -> Result<Vec<u8>, BodyError> {
        let mut all = Vec::new();
        while let Some(part) = self.next().await? {
            all.extend_from_slice(&part);
        }
        Ok(all)
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<u8>, BodyError> {
        let max = self.max;
        if let Decoder::DeflatePending = self.decoder {
            // RFC 9110 `deflate` is zlib; a zlib header's first byte has method 8 in its low
            // nibble and the two header bytes are a multiple of 31.
            let zlib = chunk.len() >= 2
                && chunk[0] & 0x0f == 8
                && (u16::from(chunk[0]) << 8 | u16::from(chunk[1])) % 31 == 0;
            self.decoder = if zlib {
                Decoder::Zlib(Box::new(flate2::write::ZlibDecoder::new(capped(max))))
            } else {
                Decoder::Raw(Box::new(flate2::write::DeflateDecoder::new(capped(max))))
            };
        }
        let written = match &mut self.decoder {
            Decoder::Identity => {
                if self.decompressed as usize + chunk.len() > max {
                    return Err(BodyError::TooLarge(max));
                }
                return Ok(chunk.to_vec());
            }
            Decoder::Gzip(d) => d.write_all(chunk).map(|_| take(d.get_mut())),
            Decoder::Zlib(d) => d.write_all(chunk).map(|_| take(d.get_mut())),
            Decoder::Raw(d) => d.write_all(chunk).map(|_| take(d.get_mut())),
            Decoder::DeflatePending => unreachable!("resolved above"),
        };
        written.map_err(|e| decode_error(e, max))
    }

    fn finish(&mut self) -> Result<Vec<u8>, BodyError> {
        let max = self.max;
        let done = match &mut self.decoder {
            Decoder::Identity | Decoder::DeflatePending => return Ok(Vec::new()),
            Decoder::Gzip(d) => d.try_finish().map(|_| take(d.get_mut())),
            Decoder::Zlib(d) => d.try_finish().map(|_| take(d.get_mut())),
            Decoder::Raw(d) => d.try_finish().map(|_| take(d.get_mut())),
        };
        let out = done.map_err(|e| decode_error(e, max))?;
        self.decompressed += out.len() as u64;
        Ok(out)
    }
}

fn capped(max: usize) -> Capped {
    Capped {
        buf: Vec::new(),
        room: max,
    }
}

fn take(c: &mut Capped) -> Vec<u8> {
    std::mem::take(&mut c.buf)
}

fn decode_error(e: std::io::Error, max: usize) -> BodyError {
    if e.get_ref().is_some_and(|inner| inner.is::<CapHit>()) {
        BodyError::TooLarge(max)
    } else {
        BodyError::Encoding(format!("corrupt compressed body: {e}"))
    }
}

/// Read a whole response body decompressing to at most `max` bytes.
pub async fn read_capped(response: reqwest::Response, max: usize) -> Result<Vec<u8>, BodyError> {
    Body::new(response, max)?.read_all().await
}
