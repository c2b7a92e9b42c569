//! A test WebSocket client that reads Tandem frames, with a generous safety timeout so
//! a broken server fails the test instead of hanging it. Waiting is on frames, never on
//! the clock.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use shared::{Event, EventBody, ServerFrame};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Longest wait for one frame before the test fails.
const FRAME_DEADLINE: Duration = Duration::from_secs(20);

/// A connected socket.
pub struct Socket {
    inner: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// What the socket received.
#[derive(Debug)]
pub enum Received {
    Frame(ServerFrame),
    Closed(Option<u16>),
}

impl Socket {
    /// Connects with extra handshake headers (credentials, `Origin`); a refused
    /// handshake gives its status and JSON body.
    pub async fn connect_with(url: &str, headers: &[(&str, &str)]) -> Result<Self, (u16, Value)> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut request = url.into_client_request().expect("a valid socket URL");
        for (name, value) in headers {
            let name =
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
                    .expect("a valid header name");
            request
                .headers_mut()
                .insert(name, value.parse().expect("a valid header value"));
        }
        match tokio_tungstenite::connect_async(request).await {
            Ok((inner, _)) => Ok(Self { inner }),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let body = response.body().as_deref().unwrap_or_default();
                Err((
                    response.status().as_u16(),
                    serde_json::from_slice(body).unwrap_or_default(),
                ))
            }
            Err(other) => panic!("socket failed: {other}"),
        }
    }

    /// Connects with a small TCP receive buffer (64 KiB, one loopback segment: smaller
    /// than that, loopback's 64 KiB MSS stalls the window updates of any sender that
    /// disables Nagle), to play a viewer that stops reading.
    pub async fn connect_slow(url: &str) -> Self {
        let address = url.trim_start_matches("ws://").split('/').next().unwrap();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(64 * 1024).unwrap();
        let stream = socket.connect(address.parse().unwrap()).await.unwrap();
        let (inner, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream))
            .await
            .expect("socket connects");
        Self { inner }
    }

    /// Closes the socket and waits for the server's close reply.
    pub async fn close(mut self) {
        let _ = self.inner.close(None).await;
        while let Ok(Some(Ok(_))) = tokio::time::timeout(FRAME_DEADLINE, self.inner.next()).await {}
    }

    /// Sends a text frame.
    pub async fn send_text(&mut self, text: &str) {
        self.inner.send(Message::text(text)).await.unwrap();
    }

    /// Sends a JSON frame.
    pub async fn send(&mut self, frame: Value) {
        self.send_text(&frame.to_string()).await;
    }

    /// Sends raw message.
    pub async fn send_message(&mut self, message: Message) {
        let _ = self.inner.send(message).await;
    }

    /// The next frame or the close.
    pub async fn receive(&mut self) -> Received {
        loop {
            let next = tokio::time::timeout(FRAME_DEADLINE, self.inner.next())
                .await
                .expect("a frame in time");
            match next {
                None | Some(Err(_)) => return Received::Closed(None),
                Some(Ok(Message::Text(text))) => {
                    return Received::Frame(
                        serde_json::from_str(&text).expect("a valid server frame"),
                    )
                }
                Some(Ok(Message::Close(frame))) => {
                    return Received::Closed(frame.map(|f| u16::from(f.code)))
                }
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next frame's text as the server sent it, with any field the typed frames do
    /// not know; `None` once the socket closes.
    pub async fn text(&mut self) -> Option<String> {
        loop {
            let next = tokio::time::timeout(FRAME_DEADLINE, self.inner.next())
                .await
                .expect("a frame in time");
            match next {
                Some(Ok(Message::Text(text))) => return Some(text.as_str().to_string()),
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return None,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next frame; panics on close.
    pub async fn frame(&mut self) -> ServerFrame {
        match self.receive().await {
            Received::Frame(frame) => frame,
            Received::Closed(code) => panic!("socket closed ({code:?}) while a frame was expected"),
        }
    }

    /// Events up to and including `caught_up`; returns them and the caught-up seq.
    pub async fn backlog(&mut self) -> (Vec<(u64, Event)>, u64) {
        let (events, seq, _) = self.backlog_and_queue().await;
        (events, seq)
    }

    /// The backlog, the `caught_up` seq and the queued messages it names.
    pub async fn backlog_and_queue(
        &mut self,
    ) -> (Vec<(u64, Event)>, u64, Vec<shared::queue::QueuedMessage>) {
        let mut events = Vec::new();
        loop {
            match self.frame().await {
                ServerFrame::Event { seq, event } => events.push((seq, event)),
                ServerFrame::CaughtUp { seq, queued } => return (events, seq, queued),
                ServerFrame::Queue { .. } => {}
                ServerFrame::Error { code, message } => panic!("error frame {code}: {message}"),
            }
        }
    }

    /// Events until one that ends a run; includes it.
    pub async fn until_run_end(&mut self) -> Vec<(u64, Event)> {
        self.until(|e| e.body.is_run_end()).await
    }

    /// Events until `done` holds for one; includes it. Skips `caught_up`.
    pub async fn until(&mut self, mut done: impl FnMut(&Event) -> bool) -> Vec<(u64, Event)> {
        let mut events = Vec::new();
        loop {
            match self.frame().await {
                ServerFrame::Event { seq, event } => {
                    let stop = done(&event);
                    events.push((seq, event));
                    if stop {
                        return events;
                    }
                }
                ServerFrame::CaughtUp { .. } | ServerFrame::Queue { .. } => {}
                ServerFrame::Error { code, message } => panic!("error frame {code}: {message}"),
            }
        }
    }

    /// The queued messages of the next `queue` frame whose list `done` accepts; skips
    /// events and every other frame.
    pub async fn until_queue(
        &mut self,
        mut done: impl FnMut(&[shared::queue::QueuedMessage]) -> bool,
    ) -> Vec<shared::queue::QueuedMessage> {
        loop {
            match self.frame().await {
                ServerFrame::Queue { queued } if done(&queued) => return queued,
                ServerFrame::Error { code, message } => panic!("error frame {code}: {message}"),
                _ => {}
            }
        }
    }

    /// Waits for the server to close the socket, skipping frames; gives the close code and
    /// reason.
    pub async fn closed(&mut self) -> (Option<u16>, String) {
        loop {
            let next = tokio::time::timeout(FRAME_DEADLINE, self.inner.next())
                .await
                .expect("the close in time");
            match next {
                None | Some(Err(_)) => return (None, String::new()),
                Some(Ok(Message::Close(frame))) => {
                    return frame.map_or((None, String::new()), |f| {
                        (Some(u16::from(f.code)), f.reason.to_string())
                    })
                }
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next error frame's code, skipping events.
    pub async fn error_code(&mut self) -> String {
        loop {
            if let ServerFrame::Error { code, .. } = self.frame().await {
                return code;
            }
        }
    }
}

/// The interrupt id a run ended with.
pub fn interrupt_id(events: &[(u64, Event)]) -> String {
    events
        .iter()
        .rev()
        .find_map(|(_, e)| match &e.body {
            EventBody::RunFinished {
                outcome: Some(shared::Outcome::Interrupt { interrupts }),
                ..
            } => Some(interrupts[0].id.clone()),
            _ => None,
        })
        .expect("the run ended with an interrupt")
}

/// The id of the person's first message in a history.
pub fn user_message(log: &[(u64, shared::Event)]) -> String {
    log.iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(shared::TextRole::User),
                ..
            } => Some(message_id.clone()),
            _ => None,
        })
        .expect("a message of the person's")
}

/// The run id of the `n`th `RUN_STARTED` in a history.
pub fn run_id(log: &[(u64, shared::Event)], n: usize) -> String {
    log.iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::RunStarted { run_id, .. } => Some(run_id.clone()),
            _ => None,
        })
        .nth(n)
        .expect("that many runs")
}
