//! Request bodies that stop arriving. actix-http bounds the time a request's head may take
//! (`http_server`), not its body: a client that declares 100 bytes and sends 5 would hold
//! its connection, and a descriptor, for as long as it likes. Here every request body
//! (not a WebSocket's frames) is read through [`Paced`]: it must bring at least
//! [`MIN_BYTES`] (or the rest of itself) in every window of `--body-timeout-ms`, else the
//! handler's read fails and the edge answers 408 `request_timeout`, whatever the handler
//! made of the failure, and ends the connection ([`EndReads`]). A minimum, not only an
//! idle timeout per read, so a byte every few seconds does not keep a body alive either.
//! A body the handler answered without reading to its end ends the connection too
//! (actix-http would otherwise read the rest of a chunked one, at whatever pace it came).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use actix_web::dev::{Payload, ServiceRequest};
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::HttpMessage;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

/// What a body must bring in each window of the timeout (or the rest of itself).
pub const MIN_BYTES: usize = 1024;

/// How far a request's body was read; the edge reads it after the handler answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BodyRead {
    /// Not to its end (not at all, or the handler answered before).
    #[default]
    Unfinished,
    /// To its end (or to a failure of the client's that actix-http reported).
    Ended,
    /// It stopped keeping its pace.
    Stalled,
}

/// Where one request's body stands, shared by its [`Paced`] reader and the edge.
#[derive(Debug, Clone, Default)]
pub struct BodyWatch(Rc<Cell<BodyRead>>);

impl BodyWatch {
    /// How far the body was read.
    pub fn read(&self) -> BodyRead {
        self.0.get()
    }
}

/// How long a connection whose reads end still reads (and actix-http drops) what the
/// client sends: closing a socket that holds unread bytes resets it, and the client may
/// then lose the answer before reading it. actix-http lingers as long after a body it
/// leaves unread (`client_disconnect_timeout`).
pub const LINGER: Duration = Duration::from_secs(1);

/// Tells a connection to read nothing more after [`LINGER`]: its reads then end as if
/// the client had closed, so actix-http closes it once the response is written (shared by
/// the connection and its requests, on one worker thread).
#[derive(Debug, Clone, Default)]
pub struct EndReads(Rc<RefCell<Reads>>);

/// When a connection's reads end, and who waits on its next read.
#[derive(Debug, Default)]
struct Reads {
    at: Option<Instant>,
    waiting: Option<Waker>,
}

impl EndReads {
    /// Ends the connection's reads after [`LINGER`], waking a read that waits for the
    /// client (actix-http may wait on the socket for a body it discards, and would never
    /// see the end).
    pub fn end(&self) {
        let mut reads = self.0.borrow_mut();
        reads.at.get_or_insert_with(|| Instant::now() + LINGER);
        if let Some(waiting) = reads.waiting.take() {
            waiting.wake();
        }
    }

    /// When the reads end, if they were ended.
    pub fn at(&self) -> Option<Instant> {
        self.0.borrow().at
    }

    /// A read waits for the client: [`Self::end`] wakes `waker`.
    pub fn waiting(&self, waker: &Waker) {
        let mut reads = self.0.borrow_mut();
        match &reads.waiting {
            Some(known) if known.will_wake(waker) => {}
            _ => reads.waiting = Some(waker.clone()),
        }
    }
}

/// Reads `request`'s body, if it has one and is not a WebSocket upgrade, through
/// [`Paced`] with windows of `window`; what tells how far it was read.
pub fn pace(request: &mut ServiceRequest, window: Duration) -> Option<BodyWatch> {
    let headers = request.headers();
    let upgrade = headers.contains_key(header::UPGRADE);
    let sized = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.trim().parse::<u64>().ok())
        .is_some_and(|length| length > 0);
    let chunked = headers.contains_key(header::TRANSFER_ENCODING);
    if upgrade || !(sized || chunked) {
        return None;
    }
    let watch = BodyWatch::default();
    let body = Paced::new(request.take_payload(), window, watch.clone());
    request.set_payload(Payload::Stream {
        payload: Box::pin(body),
    });
    Some(watch)
}

/// A body that fails with a timeout when a window of its pace passes without
/// [`MIN_BYTES`] (or its end) arriving.
struct Paced {
    inner: Payload,
    window: Duration,
    /// The end of the current window.
    timer: Pin<Box<Sleep>>,
    /// Bytes brought in the current window.
    brought: usize,
    watch: BodyWatch,
}

impl Paced {
    fn new(inner: Payload, window: Duration, watch: BodyWatch) -> Self {
        Self {
            inner,
            window,
            timer: Box::pin(tokio::time::sleep(window)),
            brought: 0,
            watch,
        }
    }
}

impl Stream for Paced {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.watch.read() != BodyRead::Unfinished {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(bytes))) => {
                this.brought += bytes.len();
                if this.brought >= MIN_BYTES {
                    this.brought = 0;
                    let next = Instant::now() + this.window;
                    this.timer.as_mut().reset(next);
                }
                Poll::Ready(Some(Ok(bytes)))
            }
            Poll::Ready(other) => {
                this.watch.0.set(BodyRead::Ended);
                Poll::Ready(other)
            }
            Poll::Pending => {
                if this.timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.watch.0.set(BodyRead::Stalled);
                let why = format!(
                    "the body brought less than {MIN_BYTES} bytes in {} ms",
                    this.window.as_millis()
                );
                let error = std::io::Error::new(std::io::ErrorKind::TimedOut, why);
                Poll::Ready(Some(Err(PayloadError::Io(error))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    /// A body of `chunks`, each sent after its delay, then never ending.
    fn body(chunks: Vec<(u64, &'static [u8])>) -> Payload {
        let stream = futures_util::stream::iter(chunks)
            .then(|(after_ms, bytes)| async move {
                tokio::time::sleep(Duration::from_millis(after_ms)).await;
                Ok::<_, PayloadError>(Bytes::from_static(bytes))
            })
            .chain(futures_util::stream::pending());
        Payload::Stream {
            payload: Box::pin(stream),
        }
    }

    fn paced(inner: Payload) -> (Paced, BodyWatch) {
        let watch = BodyWatch::default();
        let paced = Paced::new(inner, Duration::from_secs(10), watch.clone());
        (paced, watch)
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_keeps_its_pace_is_read_and_one_that_stops_fails() {
        let kilobyte: &'static [u8] = &[b'x'; MIN_BYTES];
        let (mut body, watch) = paced(body(vec![(9_000, kilobyte), (9_000, kilobyte)]));
        assert_eq!(body.next().await.unwrap().unwrap().len(), MIN_BYTES);
        assert_eq!(body.next().await.unwrap().unwrap().len(), MIN_BYTES);
        let started = Instant::now();
        let error = body.next().await.unwrap().unwrap_err();
        assert!(error.to_string().contains("1024 bytes"), "{error}");
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        assert_eq!(watch.read(), BodyRead::Stalled);
        assert!(body.next().await.is_none(), "nothing after the failure");
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_below_the_pace_fails_in_the_first_window() {
        let byte: &'static [u8] = b"x";
        let (mut body, watch) = paced(body(vec![(4_000, byte), (4_000, byte), (4_000, byte)]));
        let started = Instant::now();
        assert!(body.next().await.unwrap().is_ok());
        assert!(body.next().await.unwrap().is_ok());
        assert!(body.next().await.unwrap().is_err());
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        assert_eq!(watch.read(), BodyRead::Stalled);
    }
}
