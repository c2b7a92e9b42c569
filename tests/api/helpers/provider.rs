//! A local model provider for tests: a raw HTTP/1.1 server that replays fixture files
//! from `tests/fixtures/` byte for byte, one scripted [`Reply`] per request, and records
//! every request so tests can check what the engine sent.
//!
//! Raw TCP rather than a web framework, so a test controls the exact bytes: SSE bodies
//! go out with chunked transfer encoding, one chunk per SSE event (or per `split_every`
//! bytes), and a reply can stop mid-stream without the closing chunk, as a cut
//! connection looks to a client.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The text of a fixture file, e.g. `fixture("openai/text.sse")`.
pub fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {path:?}: {e}"))
}

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `200 text/event-stream` with `body` (an SSE fixture).
    Sse {
        body: String,
        /// Send a chunk every this many bytes instead of one per SSE event.
        split_every: Option<usize>,
        /// Pause before each chunk (server-side pacing of a slow stream).
        pace: Duration,
        /// Stop after this many chunks, without finishing the response.
        cut_after: Option<usize>,
    },
    /// Any status with headers and a body (an error reply).
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// No answer: the connection stays open this long, then closes.
    Silent(Duration),
}

impl Reply {
    /// A plain SSE reply of a fixture file.
    pub fn sse(fixture_name: &str) -> Self {
        Reply::Sse {
            body: fixture(fixture_name),
            split_every: None,
            pace: Duration::ZERO,
            cut_after: None,
        }
    }

    /// An error reply whose JSON body is a fixture file.
    pub fn status(status: u16, headers: &[(&str, &str)], fixture_name: &str) -> Self {
        Reply::Status {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: fixture(fixture_name),
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`null` if it is not).
    pub body: Value,
    /// The body's bytes as they arrived (what a signature covers).
    pub raw: Vec<u8>,
    /// When the request's head arrived.
    pub at: std::time::Instant,
}

impl Recorded {
    /// A header's value by (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running fixture server.
pub struct ProviderServer {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    hangups: mpsc::UnboundedReceiver<usize>,
    arrivals: tokio::sync::watch::Receiver<usize>,
}

impl ProviderServer {
    /// Starts a server that answers requests with `replies`, in order. A request beyond
    /// the list gets a 500 that says so.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (hangup_tx, hangups) = mpsc::unbounded_channel();
        let (arrived, arrivals) = tokio::sync::watch::channel(0);
        let arrived = Arc::new(arrived);
        let recorded = requests.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (recorded, replies, hangup_tx, arrived) = (
                    recorded.clone(),
                    replies.clone(),
                    hangup_tx.clone(),
                    arrived.clone(),
                );
                tokio::spawn(async move {
                    serve(socket, recorded, replies, hangup_tx, arrived).await;
                });
            }
        });
        Self {
            url,
            requests,
            hangups,
            arrivals,
        }
    }

    /// Waits until the server has received `count` requests in all.
    pub async fn received(&mut self, count: usize) {
        let wait = self.arrivals.wait_for(|seen| *seen >= count);
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .expect("the requests did not arrive within 10 s")
            .expect("the server stopped");
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits until a client hangs up in the middle of a paced stream; returns how many
    /// chunks it had been sent.
    pub async fn client_hung_up(&mut self) -> usize {
        tokio::time::timeout(Duration::from_secs(10), self.hangups.recv())
            .await
            .expect("the client did not hang up within 10 s")
            .expect("the server stopped")
    }
}

async fn serve(
    mut socket: TcpStream,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    hangups: mpsc::UnboundedSender<usize>,
    arrived: Arc<tokio::sync::watch::Sender<usize>>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let count = {
        let mut all = recorded.lock().unwrap();
        all.push(request);
        all.len()
    };
    arrived.send_replace(count);
    let reply = replies.lock().unwrap().pop_front();
    let result = match reply {
        None => {
            write_status(
                &mut socket,
                500,
                &[],
                r#"{"error":{"message":"no reply scripted"}}"#,
            )
            .await
        }
        Some(Reply::Status {
            status,
            headers,
            body,
        }) => write_status(&mut socket, status, &headers, &body).await,
        Some(Reply::Silent(wait)) => {
            tokio::time::sleep(wait).await;
            Ok(())
        }
        Some(Reply::Sse {
            body,
            split_every,
            pace,
            cut_after,
        }) => {
            let chunks = chunks_of(&body, split_every);
            write_sse(&mut socket, &chunks, pace, cut_after, &hangups).await
        }
    };
    let _ = result;
    let _ = socket.shutdown().await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut piece = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&piece[..n]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let arrived = std::time::Instant::now();
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let n = socket.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&piece[..n]);
    }
    let raw = buffer[head_end..head_end + length].to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Some(Recorded {
        method,
        path,
        headers,
        body,
        raw,
        at: arrived,
    })
}

async fn write_status(
    socket: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} Fixture\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await
}

/// One chunk per SSE event (events end with a blank line), or fixed-size pieces.
fn chunks_of(body: &str, split_every: Option<usize>) -> Vec<Vec<u8>> {
    match split_every {
        Some(size) => body
            .as_bytes()
            .chunks(size.max(1))
            .map(<[u8]>::to_vec)
            .collect(),
        None => body
            .split_inclusive("\n\n")
            .map(|event| event.as_bytes().to_vec())
            .collect(),
    }
}

async fn write_sse(
    socket: &mut TcpStream,
    chunks: &[Vec<u8>],
    pace: Duration,
    cut_after: Option<usize>,
    hangups: &mpsc::UnboundedSender<usize>,
) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    socket.write_all(head.as_bytes()).await?;
    for (sent, chunk) in chunks.iter().enumerate() {
        if cut_after == Some(sent) {
            return Ok(());
        }
        if !pace.is_zero() {
            // Pacing is the server's own behaviour (a slow model), not test
            // synchronisation; a read of 0 bytes meanwhile means the client hung up.
            let mut probe = [0u8; 64];
            tokio::select! {
                _ = tokio::time::sleep(pace) => {}
                read = socket.read(&mut probe) => {
                    if matches!(read, Ok(0) | Err(_)) {
                        let _ = hangups.send(sent);
                        return Ok(());
                    }
                }
            }
        }
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
        if let Err(error) = socket.write_all(&framed).await {
            let _ = hangups.send(sent);
            return Err(error);
        }
    }
    socket.write_all(b"0\r\n\r\n").await
}

/// The app on the `openai` engine pointed at a stand-in answering `replies` (with an API
/// key file; `extra` flags after), and the stand-in.
pub async fn openai_app(replies: Vec<Reply>, extra: &[&str]) -> (super::TestApp, ProviderServer) {
    let server = ProviderServer::start(replies).await;
    let base = format!("{}/v1", server.url);
    let key = super::key_file("sk-test-123");
    let mut flags = vec![
        "--engine",
        "openai",
        "--openai-base-url",
        &base,
        "--openai-api-key-file",
        &key,
    ];
    flags.extend_from_slice(extra);
    let app = super::spawn_app_with(serde_json::json!([]), &flags).await;
    (app, server)
}
