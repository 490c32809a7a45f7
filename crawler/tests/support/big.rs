//! A session-era MCP stand-in on a chosen loopback address that serves a large tool set slowly:
//! `pages` pages of about `page_bytes` each, written in chunks with a pause between them and
//! generated while written (the test process hosts the servers, so they must not hold pages).
//! It counts requests in flight and the most seen at once, to check the crawler's politeness.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::hostile::{head, init_result, json_response, read_request};

/// What a big server serves.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Bytes of each `tools/list` response (about; whole tools).
    pub page_bytes: usize,
    /// Pages of the set (each but the last hands out a cursor).
    pub pages: usize,
    /// Bytes written at a time.
    pub chunk: usize,
    /// Pause after each chunk.
    pub pause: Duration,
    /// Pause before answering any request (to make overlapping requests visible).
    pub delay: Duration,
}

/// Counters of one server.
#[derive(Debug, Default)]
pub struct Stats {
    pub requests: AtomicUsize,
    pub tools_list: AtomicUsize,
    /// MCP requests (POSTs, GETs) in flight.
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    /// `DELETE`s (sessions being ended) in flight, counted apart: the crawler sends them after
    /// giving back the observation's place.
    pub closing_in_flight: AtomicUsize,
    pub max_closing_in_flight: AtomicUsize,
}

/// A running big server.
pub struct Big {
    pub addr: SocketAddr,
    pub stats: Arc<Stats>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Big {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Bytes of one generated tool (its description pads it to this).
pub const TOOL_BYTES: usize = 3_960;

/// Tools in one page of `page_bytes`.
pub fn tools_per_page(page_bytes: usize) -> usize {
    page_bytes / TOOL_BYTES
}

fn tool(page: usize, k: usize) -> String {
    let head =
        format!(r#"{{"name":"p{page}t{k}","inputSchema":{{"type":"object"}},"description":""#);
    let pad = TOOL_BYTES - head.len() - 2;
    let mut t = head;
    for i in 0..pad {
        t.push((b'a' + ((k + i) % 26) as u8) as char);
    }
    t.push_str("\"}");
    t
}

impl Big {
    pub async fn start(ip: IpAddr, spec: Spec) -> Big {
        let listener = TcpListener::bind((ip, 0)).await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let stats = Arc::new(Stats::default());
        let counters = stats.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let stats = counters.clone();
                tokio::spawn(async move {
                    let _ = serve(socket, spec, stats).await;
                });
            }
        });
        Big { addr, stats, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

async fn serve(mut socket: TcpStream, spec: Spec, stats: Arc<Stats>) -> std::io::Result<()> {
    while let Some(req) = read_request(&mut socket).await? {
        stats.requests.fetch_add(1, Ordering::SeqCst);
        let (gauge, max) = if req.method == "DELETE" {
            (&stats.closing_in_flight, &stats.max_closing_in_flight)
        } else {
            (&stats.in_flight, &stats.max_in_flight)
        };
        let now = gauge.fetch_add(1, Ordering::SeqCst) + 1;
        max.fetch_max(now, Ordering::SeqCst);
        if !spec.delay.is_zero() {
            tokio::time::sleep(spec.delay).await;
        }
        let done = answer(&mut socket, &req, spec, (&stats, gauge)).await;
        done?;
    }
    Ok(())
}

/// Answers `req`. A request stops counting as in flight before the last bytes of its answer
/// are written, so a client that starts its next request as soon as it has read an answer is
/// never seen as one request over its limit.
async fn answer(
    socket: &mut TcpStream,
    req: &super::hostile::Request,
    spec: Spec,
    (stats, gauge): (&Stats, &AtomicUsize),
) -> std::io::Result<()> {
    let id = &req.rpc_id;
    let whole = if req.method == "GET" {
        head("405 Method Not Allowed", &[("Content-Length", "0".into())])
    } else if req.method == "DELETE" {
        // The session ends.
        head("200 OK", &[("Content-Length", "0".into())])
    } else {
        match req.rpc_method.as_str() {
            "initialize" => json_response(
                "200 OK",
                &[("Mcp-Session-Id", "big-1".into())],
                &init_result(id),
            ),
            "tools/list" => {
                stats.tools_list.fetch_add(1, Ordering::SeqCst);
                let page: usize = req
                    .cursor
                    .as_deref()
                    .and_then(|c| c.strip_prefix('p'))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                return page_response(socket, id, page, spec, stats).await;
            }
            "server/discover" => {
                let body = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}"#;
                json_response("400 Bad Request", &[], body)
            }
            _ => head("202 Accepted", &[("Content-Length", "0".into())]),
        }
    };
    gauge.fetch_sub(1, Ordering::SeqCst);
    socket.write_all(&whole).await
}

/// One page, as a chunked body generated while written.
async fn page_response(
    socket: &mut TcpStream,
    id: &serde_json::Value,
    page: usize,
    spec: Spec,
    stats: &Stats,
) -> std::io::Result<()> {
    // Everything but the last chunk; the request stops counting before that is written, or
    // when writing fails.
    let streamed = async {
        socket
            .write_all(&head(
                "200 OK",
                &[
                    ("Content-Type", "application/json".to_owned()),
                    ("Transfer-Encoding", "chunked".to_owned()),
                ],
            ))
            .await?;
        let n = tools_per_page(spec.page_bytes);
        let mut buf = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[");
        for k in 0..n {
            if k > 0 {
                buf.push(',');
            }
            buf.push_str(&tool(page, k));
            if buf.len() >= spec.chunk || k + 1 == n {
                if k + 1 == n {
                    if page + 1 < spec.pages {
                        buf.push_str(&format!("],\"nextCursor\":\"p{}\"}}}}", page + 1));
                    } else {
                        buf.push_str("]}}");
                    }
                }
                socket
                    .write_all(format!("{:x}\r\n", buf.len()).as_bytes())
                    .await?;
                socket.write_all(buf.as_bytes()).await?;
                socket.write_all(b"\r\n").await?;
                buf.clear();
                if !spec.pause.is_zero() {
                    tokio::time::sleep(spec.pause).await;
                }
            }
        }
        Ok::<(), std::io::Error>(())
    }
    .await;
    stats.in_flight.fetch_sub(1, Ordering::SeqCst);
    streamed?;
    socket.write_all(b"0\r\n\r\n").await
}
