//! MCP's stdio transport over any byte pipes: newline-delimited JSON-RPC written to the
//! server's stdin, read from its stdout, for `toolmark_mcp`'s session core.
//!
//! The server is hostile: every line it writes is read under [`MAX_STDIO_LINE`], everything it
//! writes under [`MAX_STDOUT_BYTES`], and at most [`MAX_NOISE_LINES`] lines that are not
//! JSON-RPC (log lines some servers print to stdout) are skipped before the session gives up.
//! Time is the caller's: it runs the session under its own deadline. A server→client request
//! arrives on the stream the server reads from, so it is answered ([`Delivery::Stream`]).

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use toolmark_mcp::jsonrpc;
use toolmark_mcp::transport::{Delivery, Incoming, Transport};

/// Longest line read from a server's stdout: one JSON-RPC message, so the largest tool-set
/// page the session accepts.
pub const MAX_STDIO_LINE: usize = toolmark_mcp::limits::MAX_TOOLSET_BYTES;

/// Most bytes read from a server's stdout over one session (HISTOR: 16 MiB).
pub const MAX_STDOUT_BYTES: usize = 16 * 1024 * 1024;

/// Most stdout lines that are not JSON-RPC messages skipped in one session.
pub const MAX_NOISE_LINES: usize = 1_000;

/// How a stdio exchange ended when it was not the MCP exchange that ended it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StdioError {
    /// The server closed its stdout (it exited, or closed it) before answering.
    #[error("the server closed its stdout before answering {0}")]
    Closed(&'static str),
    /// A line was longer than [`MAX_STDIO_LINE`].
    #[error("a stdout line is longer than {MAX_STDIO_LINE} bytes")]
    LineTooLong,
    /// The server wrote more than [`MAX_STDOUT_BYTES`].
    #[error("the server wrote more than {MAX_STDOUT_BYTES} bytes to stdout")]
    TooMuchOutput,
    /// More than [`MAX_NOISE_LINES`] lines were not JSON-RPC.
    #[error("more than {MAX_NOISE_LINES} stdout lines were not JSON-RPC")]
    Noise,
    /// Writing to the server's stdin failed (it exited or closed it).
    #[error("writing {0} to the server's stdin: {1}")]
    Write(&'static str, String),
    /// Reading its stdout failed.
    #[error("reading the server's stdout: {0}")]
    Read(String),
}

/// A session's view of a server's stdin and stdout.
#[derive(Debug)]
pub struct Stdio<R, W> {
    stdout: R,
    stdin: W,
    awaited: &'static str,
    read: usize,
    noise: usize,
    /// The JSON-RPC id of the last request sent.
    last_request: Option<u64>,
    /// Every line the server wrote, as read (for the observation's record), in order.
    pub lines: Vec<String>,
}

impl<R: AsyncBufRead + Unpin + Send, W: AsyncWrite + Unpin + Send> Stdio<R, W> {
    /// A transport over a server's `stdout` (buffered) and `stdin`.
    pub fn new(stdout: R, stdin: W) -> Self {
        Stdio {
            stdout,
            stdin,
            awaited: "initialize",
            read: 0,
            noise: 0,
            last_request: None,
            lines: Vec::new(),
        }
    }

    /// The JSON-RPC id of the last request sent (the session's: what its answer is matched by,
    /// so what tells the answer apart from every other message the server writes).
    pub fn last_request_id(&self) -> Option<u64> {
        self.last_request
    }

    /// Bytes read from stdout so far.
    pub fn bytes_read(&self) -> usize {
        self.read
    }

    /// Lines skipped because they were not JSON-RPC.
    pub fn noise_lines(&self) -> usize {
        self.noise
    }

    async fn write_line(
        &mut self,
        what: &'static str,
        mut body: Vec<u8>,
    ) -> Result<(), StdioError> {
        body.push(b'\n');
        let failed = |e: std::io::Error| StdioError::Write(what, e.to_string());
        self.stdin.write_all(&body).await.map_err(failed)?;
        self.stdin.flush().await.map_err(failed)
    }

    /// The next line (without its newline), or `None` at the end of stdout.
    async fn next_line(&mut self) -> Result<Option<Vec<u8>>, StdioError> {
        let mut line = Vec::new();
        loop {
            let chunk = self
                .stdout
                .fill_buf()
                .await
                .map_err(|e| StdioError::Read(e.to_string()))?;
            if chunk.is_empty() {
                return Ok((!line.is_empty()).then_some(line));
            }
            let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if line.len() + take > MAX_STDIO_LINE + 1 {
                return Err(StdioError::LineTooLong);
            }
            if self.read + take > MAX_STDOUT_BYTES {
                return Err(StdioError::TooMuchOutput);
            }
            line.extend_from_slice(&chunk[..take]);
            self.stdout.consume(take);
            self.read += take;
            if done {
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
        }
    }
}

impl<R: AsyncBufRead + Unpin + Send, W: AsyncWrite + Unpin + Send> Transport for Stdio<R, W> {
    type Error = StdioError;
    type Charge = ();

    async fn send_request(
        &mut self,
        id: u64,
        method: &'static str,
        body: Vec<u8>,
    ) -> Result<(), StdioError> {
        self.awaited = method;
        self.last_request = Some(id);
        self.write_line(method, body).await
    }

    async fn receive(&mut self) -> Result<Incoming<()>, StdioError> {
        loop {
            let Some(line) = self.next_line().await? else {
                return Err(StdioError::Closed(self.awaited));
            };
            self.lines.push(String::from_utf8_lossy(&line).into_owned());
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match jsonrpc::parse(&line) {
                Ok(messages) => {
                    return Ok(Incoming {
                        messages,
                        delivery: Delivery::Stream,
                        charge: (),
                    });
                }
                Err(_) => {
                    self.noise += 1;
                    if self.noise > MAX_NOISE_LINES {
                        return Err(StdioError::Noise);
                    }
                }
            }
        }
    }

    async fn send_notification(
        &mut self,
        method: &'static str,
        body: Vec<u8>,
    ) -> Result<(), StdioError> {
        self.write_line(method, body).await
    }

    async fn send_reply(&mut self, body: Vec<u8>) {
        let _ = self.write_line("a reply", body).await;
    }

    fn charge(&mut self, _text: &[u8]) -> Result<(), StdioError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, BufReader};
    use toolmark_mcp::session::{Handshake, Identity, Limits, Listing, Session};

    fn identity() -> Identity {
        Identity {
            client_info: json!({"name": "toolmark-test", "version": "0"}),
            capabilities: json!({}),
        }
    }

    /// A scripted server on the far end of two pipes: for each request line it reads, it
    /// writes the lines `answer` gives (with the request's id).
    fn server(
        answer: impl Fn(&serde_json::Value) -> Vec<String> + Send + 'static,
    ) -> Stdio<BufReader<tokio::io::DuplexStream>, tokio::io::DuplexStream> {
        let (client_out, mut server_in) = tokio::io::duplex(1 << 20);
        let (mut server_out, client_in) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut byte = [0u8; 1];
            while server_in.read(&mut byte).await.unwrap_or(0) == 1 {
                if byte[0] != b'\n' {
                    buf.push(byte[0]);
                    continue;
                }
                let message: serde_json::Value = serde_json::from_slice(&buf).unwrap();
                buf.clear();
                for line in answer(&message) {
                    if server_out
                        .write_all(format!("{line}\n").as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            }
        });
        Stdio::new(BufReader::new(client_in), client_out)
    }

    fn result(id: &serde_json::Value, result: serde_json::Value) -> String {
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
    }

    fn mcp_server(message: &serde_json::Value) -> Vec<String> {
        let id = &message["id"];
        match message["method"].as_str().unwrap_or("") {
            "initialize" => vec![
                "server starting (a log line on stdout)".into(),
                result(
                    id,
                    json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"}}),
                ),
                // An unrequested notification right after, as server-everything sends.
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}).to_string(),
            ],
            "tools/list" => vec![result(
                id,
                json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
            )],
            _ => vec![],
        }
    }

    #[tokio::test]
    async fn a_session_lists_tools_over_stdio_past_log_lines_and_notifications() {
        let mut stdio = server(mcp_server);
        let mut listing = Listing::default();
        Session::new(Limits::default(), identity(), &mut listing)
            .list_tools(&mut stdio, Handshake::Initialize("2025-06-18"))
            .await
            .unwrap();
        assert_eq!(listing.pages.len(), 1);
        assert!(listing.pages[0].contains("\"name\":\"t\""));
        assert_eq!(stdio.noise_lines(), 1);
        assert_eq!(stdio.lines[0], "server starting (a log line on stdout)");
    }

    #[tokio::test]
    async fn a_server_that_closes_stdout_ends_the_session_as_closed() {
        let mut stdio = server(|_| vec![]);
        drop(std::mem::replace(
            &mut stdio.stdout,
            BufReader::new(tokio::io::duplex(1).1),
        ));
        let mut listing = Listing::default();
        let e = Session::new(Limits::default(), identity(), &mut listing)
            .list_tools(&mut stdio, Handshake::Initialize("2025-06-18"))
            .await
            .unwrap_err();
        assert!(format!("{e:?}").contains("Closed"), "{e:?}");
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_refused() {
        let mut stdio = server(|_| vec!["x".repeat(MAX_STDIO_LINE + 10)]);
        let mut listing = Listing::default();
        let e = Session::new(Limits::default(), identity(), &mut listing)
            .list_tools(&mut stdio, Handshake::Initialize("2025-06-18"))
            .await
            .unwrap_err();
        assert!(format!("{e:?}").contains("LineTooLong"), "{e:?}");
    }

    #[tokio::test]
    async fn endless_noise_is_cut_off() {
        let mut stdio = server(|_| (0..=MAX_NOISE_LINES).map(|i| format!("log {i}")).collect());
        let mut listing = Listing::default();
        let e = Session::new(Limits::default(), identity(), &mut listing)
            .list_tools(&mut stdio, Handshake::Initialize("2025-06-18"))
            .await
            .unwrap_err();
        assert!(format!("{e:?}").contains("Noise"), "{e:?}");
    }
}
