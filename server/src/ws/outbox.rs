//! The socket's sending half: frames are encoded with actix-http's own WebSocket codec into
//! one buffer and handed to the response body as one chunk per batch. An event replayed
//! from the log is written behind a header of our own instead ([`Outbox::queue_event`]),
//! so that it is copied once; a test checks the bytes are actix-http's.
//!
//! actix-ws's `Session` sends each message through a channel on its own, so a replayed page
//! of 1,000 events was 1,000 channel sends and as many wake-ups of the connection; here it
//! is one per batch the socket's loop flushes. actix-ws still reads the client's frames ([`upgrade`] keeps its message stream).
//! Frames are sent in the order they were queued, and nothing queued is sent before
//! [`Outbox::flush`].

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_http::body::{BodyStream, MessageBody};
use actix_http::ws::{handshake, CloseReason, OpCode, Parser};
use actix_web::web::{Bytes, BytesMut};
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::store::event_frame_pieces;

/// Batches waiting for the connection (up to 256 live frames or one replayed page each,
/// see `socket`): with the batch being written, what a client who stopped reading holds
/// in memory.
const BATCHES_IN_FLIGHT: usize = 2;

/// The connection is gone: nothing more can be sent.
#[derive(Debug)]
pub struct Closed;

/// Frames on their way to one client.
pub struct Outbox {
    sender: mpsc::Sender<Bytes>,
    queued: BytesMut,
}

/// Accepts the WebSocket handshake: the response to return, the outbox that writes to
/// it, and actix-ws's stream of the client's frames.
pub fn upgrade(
    request: &HttpRequest,
    payload: web::Payload,
) -> Result<(HttpResponse, Outbox, actix_ws::MessageStream), actix_web::Error> {
    // actix-ws checks the handshake and reads the client's frames; its sending half is
    // replaced by the outbox's, and its response body rides along unused (see `Batches`).
    let (actix_ws_response, _, incoming) = actix_ws::handle(request, payload)?;
    let (sender, receiver) = mpsc::channel::<Bytes>(BATCHES_IN_FLIGHT);
    let body = Batches {
        receiver,
        _actix_ws_response: actix_ws_response,
    };
    let response = handshake(request.head())?
        .message_body(BodyStream::new(body).boxed())?
        .into();
    let outbox = Outbox {
        sender,
        queued: BytesMut::new(),
    };
    Ok((response, outbox, incoming))
}

/// The response body: the outbox's batches, in order, until the outbox is dropped.
///
/// It also holds the response actix-ws built, never polled: actix drops this body when
/// the connection ends, and dropping actix-ws's own body with it is how actix-ws's message
/// stream learns that the connection is gone (it ends instead of waiting forever).
struct Batches {
    receiver: mpsc::Receiver<Bytes>,
    _actix_ws_response: HttpResponse,
}

impl Stream for Batches {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut()
            .receiver
            .poll_recv(cx)
            .map(|batch| batch.map(Ok))
    }
}

impl Outbox {
    /// Queues a text frame; it goes out with the next [`flush`](Self::flush).
    pub fn queue_text(&mut self, text: &str) {
        Parser::write_message(&mut self.queued, text, OpCode::Text, true, false);
    }

    /// Queues an event's frame, `{"kind":"event","seq":N,"event":<json>}`, written piece
    /// by piece behind its header: the event is copied once, from wherever it was read
    /// into the batch (the frame [`FramePage::frame`] builds, byte for byte).
    ///
    /// [`FramePage::frame`]: crate::store::FramePage::frame
    pub fn queue_event(&mut self, seq: u64, event_json: &str) {
        let mut digits = itoa::Buffer::new();
        let pieces = event_frame_pieces(digits.format(seq), event_json);
        text_frame_header(
            &mut self.queued,
            pieces.iter().map(|piece| piece.len()).sum(),
        );
        for piece in pieces {
            self.queued.extend_from_slice(piece.as_bytes());
        }
    }

    /// Sends everything queued as one batch, waiting while the client is behind.
    pub async fn flush(&mut self) -> Result<(), Closed> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let batch = self.queued.split().freeze();
        self.sender.send(batch).await.map_err(|_| Closed)
    }

    /// Sends one text frame now (after anything queued).
    pub async fn text(&mut self, text: &str) -> Result<(), Closed> {
        self.queue_text(text);
        self.flush().await
    }

    /// Sends a ping.
    pub async fn ping(&mut self, payload: &[u8]) -> Result<(), Closed> {
        Parser::write_message(&mut self.queued, payload, OpCode::Ping, true, false);
        self.flush().await
    }

    /// Answers a ping.
    pub async fn pong(&mut self, payload: &[u8]) -> Result<(), Closed> {
        Parser::write_message(&mut self.queued, payload, OpCode::Pong, true, false);
        self.flush().await
    }

    /// Sends a close frame (after anything queued) and ends the connection's response.
    pub async fn close(mut self, reason: Option<CloseReason>) -> Result<(), Closed> {
        Parser::write_close(&mut self.queued, reason, false);
        self.flush().await
    }
}

/// The header of a whole, unmasked server text frame with a payload of `length` bytes
/// (RFC 6455 §5.2; what actix-http's `Parser::write_message` writes, a test checks).
fn text_frame_header(dst: &mut BytesMut, length: usize) {
    const FIN_TEXT: u8 = 0x81;
    dst.reserve(length + 10);
    dst.extend_from_slice(&[FIN_TEXT]);
    match length {
        0..=125 => dst.extend_from_slice(&[length as u8]),
        126..=0xFFFF => {
            dst.extend_from_slice(&[126]);
            dst.extend_from_slice(&(length as u16).to_be_bytes());
        }
        _ => {
            dst.extend_from_slice(&[127]);
            dst.extend_from_slice(&(length as u64).to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outbox() -> (Outbox, mpsc::Receiver<Bytes>) {
        let (sender, receiver) = mpsc::channel(BATCHES_IN_FLIGHT);
        let outbox = Outbox {
            sender,
            queued: BytesMut::new(),
        };
        (outbox, receiver)
    }

    /// Parses a batch as a client would (a server's frames are not masked): each frame's
    /// opcode and payload.
    fn frames(batch: Bytes) -> Vec<(OpCode, String)> {
        let mut bytes = BytesMut::from(&batch[..]);
        let mut frames = Vec::new();
        while let Some((fin, op, payload)) = Parser::parse(&mut bytes, false, usize::MAX).unwrap() {
            assert!(fin, "every frame is whole");
            let payload = payload.map(|p| String::from_utf8_lossy(&p).into_owned());
            frames.push((op, payload.unwrap_or_default()));
        }
        assert!(bytes.is_empty(), "the batch ends on a frame boundary");
        frames
    }

    #[tokio::test]
    async fn queued_frames_go_out_as_one_batch_in_order() {
        let (mut outbox, mut receiver) = outbox();
        outbox.queue_text("one");
        outbox.queue_text(&"two".repeat(100));
        assert!(
            receiver.try_recv().is_err(),
            "nothing is sent before a flush"
        );
        outbox.flush().await.unwrap();
        outbox.flush().await.unwrap();
        let batch = receiver.try_recv().unwrap();
        assert!(receiver.try_recv().is_err(), "an empty flush sends nothing");
        assert_eq!(
            frames(batch),
            [
                (OpCode::Text, "one".into()),
                (OpCode::Text, "two".repeat(100))
            ]
        );
    }

    #[tokio::test]
    async fn control_frames_follow_what_was_queued_and_a_gone_client_is_reported() {
        let (mut outbox, mut receiver) = outbox();
        outbox.queue_text("last words");
        outbox.ping(b"").await.unwrap();
        let sent = frames(receiver.try_recv().unwrap());
        assert_eq!(
            sent,
            [
                (OpCode::Text, "last words".into()),
                (OpCode::Ping, String::new())
            ]
        );
        drop(receiver);
        assert!(outbox.text("lost").await.is_err());
        assert!(outbox.close(None).await.is_err());
    }

    #[test]
    fn an_event_frame_is_the_bytes_actix_writes_for_its_text() {
        // Payload lengths around each of the header's three forms.
        for json_length in [0, 80, 90, 95, 100, 65_490, 65_500, 70_000] {
            let json = format!("\"{}\"", "x".repeat(json_length));
            let frame = crate::store::FramePage::frame(123_456, &json);
            let mut expected = BytesMut::new();
            Parser::write_message(&mut expected, &frame[..], OpCode::Text, true, false);
            let (mut outbox, _receiver) = outbox();
            outbox.queue_event(123_456, &json);
            assert_eq!(outbox.queued, expected, "a {}-byte frame", frame.len());
        }
    }
}
