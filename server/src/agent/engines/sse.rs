//! A streamed model call: connect (with retries), read the response as Server-Sent
//! Events with the `eventsource-stream` crate, and let a provider [`Decoder`] turn each
//! event into [`EngineEvent`]s.
//!
//! Dropping the returned stream drops the HTTP response, which closes the connection at
//! once: that is how Stop cancels a call. A stream that ends before the decoder saw the
//! provider's last event is reported as `stream_interrupted`, never as a clean finish.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use eventsource_stream::{Event as SseEvent, EventStreamError, Eventsource};
use futures_util::{stream, Stream, StreamExt};
use reqwest::Response;

use super::{EngineError, EngineEvent, EngineStream};
use crate::scrub::Scrubber;

/// Reads one provider's stream.
pub trait Decoder: Send + 'static {
    /// Turns one SSE event into engine events (pushed to `out`); returns true when the
    /// event completes the response.
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<EngineEvent>)
        -> Result<bool, EngineError>;
}

type Connect = Pin<Box<dyn Future<Output = Result<Response, EngineError>> + Send>>;
type Events = Pin<Box<dyn Stream<Item = Result<SseEvent, EngineError>> + Send>>;

enum State<D> {
    Connecting(Connect, D),
    Streaming {
        events: Events,
        decoder: D,
        queue: VecDeque<EngineEvent>,
        done: bool,
    },
    Finished,
}

/// The engine stream of one call: `connect` yields the 2xx response. Every error's
/// message passes through `scrubber` (it reaches every viewer as `RUN_ERROR`).
pub fn drive<D: Decoder>(
    connect: impl Future<Output = Result<Response, EngineError>> + Send + 'static,
    decoder: D,
    scrubber: Scrubber,
) -> EngineStream {
    let start = State::Connecting(Box::pin(connect), decoder);
    Box::pin(stream::unfold(start, step).map(move |item| {
        item.map_err(|mut error| {
            error.message = scrubber.clean(&error.message);
            error
        })
    }))
}

async fn step<D: Decoder>(
    mut state: State<D>,
) -> Option<(Result<EngineEvent, EngineError>, State<D>)> {
    loop {
        state = match state {
            State::Finished => return None,
            State::Connecting(connect, decoder) => match connect.await {
                Err(error) => return Some((Err(error), State::Finished)),
                Ok(response) => State::Streaming {
                    events: sse_events(response),
                    decoder,
                    queue: VecDeque::new(),
                    done: false,
                },
            },
            State::Streaming {
                mut events,
                mut decoder,
                mut queue,
                done,
            } => {
                if let Some(event) = queue.pop_front() {
                    let next = State::Streaming {
                        events,
                        decoder,
                        queue,
                        done,
                    };
                    return Some((Ok(event), next));
                }
                if done {
                    return None;
                }
                let event = match events.next().await {
                    Some(Ok(event)) => event,
                    Some(Err(error)) => return Some((Err(error), State::Finished)),
                    None => return Some((Err(cut_short()), State::Finished)),
                };
                let mut out = Vec::new();
                let done = match decoder.decode(&event, &mut out) {
                    Ok(done) => done,
                    Err(error) => return Some((Err(error), State::Finished)),
                };
                queue.extend(out);
                State::Streaming {
                    events,
                    decoder,
                    queue,
                    done,
                }
            }
        }
    }
}

fn sse_events(response: Response) -> Events {
    Box::pin(response.bytes_stream().eventsource().map(|item| {
        item.map_err(|error| match error {
            EventStreamError::Transport(error) => {
                let what = if error.is_timeout() {
                    "the provider stopped sending data (read timeout)".to_string()
                } else {
                    let cause = std::error::Error::source(&error)
                        .map(|source| format!(": {source}"))
                        .unwrap_or_default();
                    format!("the connection to the provider broke mid-response{cause}")
                };
                EngineError {
                    code: "stream_interrupted",
                    message: what,
                }
            }
            other => malformed(format!("the stream is not valid SSE: {other}")),
        })
    }))
}

fn cut_short() -> EngineError {
    EngineError {
        code: "stream_interrupted",
        message: "the provider closed the stream before the response was complete".into(),
    }
}

/// Reads a whole response body (fed in `chunk`-byte pieces) the way a model call reads
/// its stream, and returns what the call would yield, up to its first error. Used by the
/// fuzz targets and tests: the same SSE parser and decoder, without the network.
pub fn decode_body<D: Decoder>(
    body: &[u8],
    chunk: usize,
    mut decoder: D,
) -> Vec<Result<EngineEvent, EngineError>> {
    use futures_util::FutureExt;
    let pieces = body
        .chunks(chunk.max(1))
        .map(|piece| Ok::<_, std::convert::Infallible>(piece.to_vec()));
    let events = stream::iter(pieces).eventsource().collect::<Vec<_>>();
    // The source is always ready, so one poll parses it all.
    let events = events
        .now_or_never()
        .expect("an in-memory stream is always ready");
    let mut out = Vec::new();
    for event in events {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                out.push(Err(malformed(format!(
                    "the stream is not valid SSE: {error}"
                ))));
                return out;
            }
        };
        let mut decoded = Vec::new();
        match decoder.decode(&event, &mut decoded) {
            Ok(done) => {
                out.extend(decoded.into_iter().map(Ok));
                if done {
                    return out;
                }
            }
            Err(error) => {
                out.push(Err(error));
                return out;
            }
        }
    }
    out.push(Err(cut_short()));
    out
}

/// A chunk Tandem cannot read.
pub fn malformed(message: String) -> EngineError {
    EngineError {
        code: "malformed_response",
        message,
    }
}

/// Parses an event's JSON data, or explains which event was malformed.
pub fn parse_data<T: serde::de::DeserializeOwned>(event: &SseEvent) -> Result<T, EngineError> {
    serde_json::from_str(&event.data).map_err(|error| {
        let name = if event.event.is_empty() {
            "message"
        } else {
            event.event.as_str()
        };
        let sample: String = event.data.chars().take(120).collect();
        malformed(format!(
            "the provider sent a malformed `{name}` event ({error}): {sample}"
        ))
    })
}
