//! The benchmark's client side: REST calls, session sockets (tokio-tungstenite), a cheap
//! frame parser and the check every figure applies to what it receives — seqs
//! contiguous, nothing lost, nothing duplicated.

use std::borrow::Cow;
use std::time::Duration;

use anyhow::{anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A session socket.
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What a server frame says, borrowed from its text.
#[derive(Debug, Deserialize)]
pub struct Frame<'a> {
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default)]
    pub seq: Option<u64>,
    #[serde(default, borrow)]
    pub event: Option<FrameEvent<'a>>,
}

/// The parts of an event the benchmark reads.
#[derive(Debug, Deserialize)]
pub struct FrameEvent<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default, borrow)]
    pub delta: Option<Cow<'a, str>>,
}

impl Frame<'_> {
    /// Parses a server frame.
    pub fn parse(text: &str) -> anyhow::Result<Frame<'_>> {
        serde_json::from_str(text).map_err(|e| anyhow!("unreadable frame {text:.120}: {e}"))
    }

    /// The `bench` engine's timestamps of the tokens in a delta (`t<ns> ` each): one, or
    /// several when deltas that reached the writer together were joined into one event.
    pub fn tokens_ns(&self) -> Vec<u128> {
        let Some(event) = self
            .event
            .as_ref()
            .filter(|e| e.kind == "TEXT_MESSAGE_CONTENT")
        else {
            return Vec::new();
        };
        let delta = event.delta.as_deref().unwrap_or_default();
        delta
            .split_whitespace()
            .filter_map(|token| token.strip_prefix('t')?.parse().ok())
            .collect()
    }

    /// Whether this is an event that ends a run.
    pub fn ends_run(&self) -> bool {
        self.event
            .as_ref()
            .is_some_and(|e| e.kind == "RUN_FINISHED" || e.kind == "RUN_ERROR")
    }
}

/// Checks that event seqs arrive as `after + 1, after + 2, …` with no gap or repeat.
#[derive(Debug, Clone)]
pub struct SeqCheck {
    /// The last seq received.
    pub last: u64,
}

impl SeqCheck {
    /// Expects the first event to have seq `after + 1`.
    pub fn after(after: u64) -> Self {
        Self { last: after }
    }

    /// Takes the next event's seq; an error names the gap or the duplicate.
    pub fn take(&mut self, seq: u64) -> anyhow::Result<()> {
        if seq == self.last + 1 {
            self.last = seq;
            return Ok(());
        }
        if seq <= self.last {
            bail!(
                "duplicate or out-of-order frame: seq {seq} after {}",
                self.last
            )
        }
        bail!("lost frames: seq {seq} after {}", self.last)
    }
}

/// Nanoseconds since the Unix epoch, the clock the `bench` engine stamps tokens with.
pub fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos())
}

/// The seq of an event frame, read without parsing the rest (the server writes
/// `{"kind":"event","seq":N,…` in that order); `None` for any other frame.
pub fn event_seq(text: &str) -> Option<u64> {
    let rest = text.strip_prefix(r#"{"kind":"event","seq":"#)?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[..end].parse().ok()
}

/// How much a client socket reads at once. tungstenite zeroes this much of its buffer
/// before every read, and its default (128 KiB) made the benchmark's own clients spend
/// ~40 % of their thread in `memset` with 1,000 sockets each reading one small frame at a
/// time, on the same two cores as the server.
const READ_BUFFER: usize = 16 * 1024;

/// The client sockets' settings.
fn config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(READ_BUFFER)
}

/// Opens a session socket with `after`.
pub async fn connect(address: &str, session: &str, after: u64) -> anyhow::Result<Socket> {
    let url = format!("ws://{address}/api/sessions/{session}/ws?after={after}");
    let (socket, _) =
        tokio_tungstenite::connect_async_with_config(url, Some(config()), false).await?;
    Ok(socket)
}

/// Opens a session socket with `after` whose receive buffer holds only `buffer` bytes, so
/// that a client that stops reading pushes back on the server at once (a slow viewer).
pub async fn connect_slow(
    address: &str,
    session: &str,
    after: u64,
    buffer: u32,
) -> anyhow::Result<Socket> {
    let url = format!("ws://{address}/api/sessions/{session}/ws?after={after}");
    let tcp = tokio::net::TcpSocket::new_v4()?;
    tcp.set_recv_buffer_size(buffer)?;
    let stream = tcp.connect(address.parse()?).await?;
    let stream = MaybeTlsStream::Plain(stream);
    let (socket, _) =
        tokio_tungstenite::client_async_with_config(url, stream, Some(config())).await?;
    Ok(socket)
}

/// The next text frame, or an error if the socket closed or `limit` passed first.
pub async fn next_text(socket: &mut Socket, limit: Duration) -> anyhow::Result<String> {
    loop {
        let message = tokio::time::timeout(limit, socket.next())
            .await
            .map_err(|_| anyhow!("no frame within {limit:?}"))?;
        match message {
            Some(Ok(Message::Text(text))) => return Ok(text.to_string()),
            Some(Ok(Message::Close(reason))) => bail!("the server closed the socket: {reason:?}"),
            Some(Ok(_)) => continue,
            Some(Err(error)) => bail!("socket error: {error}"),
            None => bail!("the socket ended"),
        }
    }
}

/// Sends a user message over the socket (starts a run).
pub async fn say(socket: &mut Socket, text: &str) -> anyhow::Result<()> {
    let frame = json!({"kind": "user_message", "text": text}).to_string();
    socket.send(Message::text(frame)).await?;
    Ok(())
}

/// Reads frames until `caught_up`, checking seqs; returns the seq it names.
pub async fn until_caught_up(socket: &mut Socket, check: &mut SeqCheck) -> anyhow::Result<u64> {
    loop {
        let text = next_text(socket, Duration::from_secs(60)).await?;
        let frame = Frame::parse(&text)?;
        match (frame.kind.as_ref(), frame.seq) {
            ("event", Some(seq)) => check.take(seq)?,
            ("caught_up", Some(seq)) if seq == check.last => return Ok(seq),
            ("caught_up", seq) => bail!("caught_up at {seq:?} after seq {}", check.last),
            _ => bail!("unexpected frame {text:.120}"),
        }
    }
}

/// REST calls to an app at `address`.
#[derive(Clone)]
pub struct Rest {
    pub address: String,
    pub http: reqwest::Client,
}

impl Rest {
    pub fn new(address: &str) -> Self {
        Self {
            address: address.to_string(),
            http: reqwest::Client::new(),
        }
    }

    /// Creates a session; returns its id.
    pub async fn create_session(&self) -> anyhow::Result<String> {
        let body = self.post("/api/sessions", json!({})).await?;
        body["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("no id in {body}"))
    }

    /// POSTs JSON; an error unless the status is 2xx.
    pub async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        let url = format!("http://{}{path}", self.address);
        let response = self.http.post(url).json(&body).send().await?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("POST {path}: {status} {body}");
        }
        Ok(body)
    }

    /// GETs JSON; an error unless the status is 2xx.
    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        let url = format!("http://{}{path}", self.address);
        let response = self.http.get(url).send().await?;
        let status = response.status();
        if !status.is_success() {
            bail!("GET {path}: {status}");
        }
        Ok(response.json().await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_tokens_parse() {
        let text = r#"{"kind":"event","seq":7,"event":{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"t1700000000000000001 ","timestamp":1}}"#;
        let frame = Frame::parse(text).unwrap();
        assert_eq!(frame.seq, Some(7));
        assert_eq!(frame.tokens_ns(), [1_700_000_000_000_000_001]);
        let joined = text.replace(
            "t1700000000000000001 ",
            "t1700000000000000001 t1700000000000000002 ",
        );
        let frame = Frame::parse(&joined).unwrap();
        assert_eq!(
            frame.tokens_ns(),
            [1_700_000_000_000_000_001, 1_700_000_000_000_000_002]
        );
        assert_eq!(event_seq(text), Some(7));
        assert_eq!(event_seq(r#"{"kind":"caught_up","seq":7}"#), None);
        let done = Frame::parse(r#"{"kind":"caught_up","seq":7}"#).unwrap();
        assert_eq!(done.kind, "caught_up");
    }

    #[test]
    fn the_seq_check_names_gaps_and_duplicates() {
        let mut check = SeqCheck::after(3);
        check.take(4).unwrap();
        assert!(check.take(4).unwrap_err().to_string().contains("duplicate"));
        assert!(check.take(6).unwrap_err().to_string().contains("lost"));
    }
}
