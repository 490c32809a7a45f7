//! When an HTTP/1.1 request the trap reads has ended: its head, then `Content-Length` bytes,
//! or chunks walked one by one to the last (`0`) and its trailer.

/// Whether the request whose bytes so far are `all` has ended: `Some(true)` yes, `Some(false)`
/// not yet, `None` when it is not a request the trap can read to its end (a `Content-Length`
/// that is not a number, a chunk size that is not hex): the trap then reads on without
/// answering, to its limits.
pub fn request_ended(all: &[u8]) -> Option<bool> {
    let Some(end) = all.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Some(false);
    };
    let head = String::from_utf8_lossy(&all[..end]).to_ascii_lowercase();
    let header = |name: &str| {
        head.lines()
            .skip(1)
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
    };
    let body = &all[end + 4..];
    if header("transfer-encoding:").is_some_and(|v| v.contains("chunked")) {
        return chunks_ended(body);
    }
    let length = match header("content-length:") {
        None => 0,
        Some(v) => v.parse::<usize>().ok()?,
    };
    Some(body.len() >= length)
}

/// Whether a chunked body has ended (its last chunk and the empty line after any trailer).
fn chunks_ended(mut body: &[u8]) -> Option<bool> {
    loop {
        let Some(eol) = body.windows(2).position(|w| w == b"\r\n") else {
            return Some(false);
        };
        let line = std::str::from_utf8(&body[..eol]).ok()?;
        let size = line.split(';').next()?.trim();
        let size = usize::from_str_radix(size, 16).ok()?;
        body = &body[eol + 2..];
        if size == 0 {
            // Trailer lines, then an empty line.
            let mut rest = body;
            loop {
                let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
                    return Some(false);
                };
                if eol == 0 {
                    return Some(true);
                }
                rest = &rest[eol + 2..];
            }
        }
        if body.len() < size + 2 {
            return Some(false);
        }
        body = &body[size + 2..];
    }
}

/// Whether `all` starts as an HTTP/1 request does: a method (upper-case letters), a space, a
/// target and `HTTP/1.` on its first line.
pub fn is_request(all: &[u8]) -> bool {
    let line = all.split(|b| *b == b'\n').next().unwrap_or_default();
    let Some(space) = line.iter().position(|b| *b == b' ') else {
        return false;
    };
    let method = &line[..space];
    !method.is_empty()
        && method.iter().all(u8::is_ascii_uppercase)
        && line.windows(b" HTTP/1.".len()).any(|w| w == b" HTTP/1.")
}

/// The body of a request (after its head), de-chunked when it is chunked; the bytes as they
/// are otherwise (what a canary search reads).
pub fn body(all: &[u8]) -> Vec<u8> {
    let Some(end) = all.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Vec::new();
    };
    let head = String::from_utf8_lossy(&all[..end]).to_ascii_lowercase();
    let body = &all[end + 4..];
    if !head
        .lines()
        .any(|l| l.starts_with("transfer-encoding:") && l.contains("chunked"))
    {
        return body.to_vec();
    }
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let Some(size) = std::str::from_utf8(&rest[..eol])
            .ok()
            .and_then(|l| usize::from_str_radix(l.split(';').next().unwrap_or("").trim(), 16).ok())
        else {
            break;
        };
        rest = &rest[eol + 2..];
        if size == 0 || rest.len() < size {
            out.extend_from_slice(&rest[..size.min(rest.len())]);
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or(&[]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_ends_after_its_length_or_its_last_chunk() {
        let head = "POST /k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(request_ended(head.as_bytes()), Some(false));
        assert_eq!(request_ended(format!("{head}hello").as_bytes()), Some(true));
        assert_eq!(
            request_ended(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some(true)
        );
        let chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX-A: 0\r\n\r\n";
        assert_eq!(
            request_ended(chunked.as_bytes()),
            Some(false),
            "a header ending in 0 is not the last chunk"
        );
        let partial = format!("{chunked}5\r\nhe0\r\n");
        assert_eq!(request_ended(partial.as_bytes()), Some(false));
        let whole = format!("{chunked}5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n");
        assert_eq!(request_ended(whole.as_bytes()), Some(true));
        assert_eq!(body(whole.as_bytes()), b"helloabc", "de-chunked");
    }

    #[test]
    fn an_http_request_is_told_from_other_bytes() {
        assert!(is_request(b"POST /k HTTP/1.1\r\nHost: x\r\n"));
        assert!(is_request(b"GET / HTTP/1.0"));
        assert!(!is_request(b"SSH-2.0-OpenSSH_9.2\r\n"));
        assert!(!is_request(b"toolmark-canary-0123 HTTP/1.1"));
        assert!(!is_request(b""));
    }

    #[test]
    fn a_request_the_trap_cannot_read_to_its_end_is_said_so() {
        assert_eq!(
            request_ended(b"POST / HTTP/1.1\r\nContent-Length: lots\r\n\r\n"),
            None
        );
        assert_eq!(
            request_ended(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            None
        );
    }
}
