//! The `bench` engine: timestamped tokens for the benchmark (`bench/`).
//!
//! Each text delta is `t<ns> `, the wall-clock time in nanoseconds since the Unix epoch
//! at the moment the engine yields it, so a client on the same host measures engine →
//! socket latency as its receive time minus that number. Tokens come on a fixed clock
//! (`--token-delay-ms`, 0 = as fast as the run takes them), like a model streaming at a
//! steady rate whether or not the run keeps up. The latest user message may override the
//! defaults (`tokens=<n>`, `delay_ms=<n>`) and, on the first model call after it, the
//! word `pause` makes the engine call `request_input` instead, so a benchmark can create
//! paused sessions through the real path. It must not do anything a benchmark cannot
//! measure: no reasoning, no other tools.

use std::cmp::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::stream;
use tokio::time::{Interval, MissedTickBehavior};

use super::{Engine, EngineEvent, EngineInfo, EngineStream, FinishReason, ModelRequest};
use crate::agent::conversation::ChatMessage;
use crate::agent::tools::request_input;

/// Streams `tokens` timestamped text deltas per model call.
pub struct BenchEngine {
    tokens: u64,
    delay: Duration,
}

impl BenchEngine {
    /// `tokens` deltas per call, one every `delay`.
    pub fn new(tokens: u64, delay: Duration) -> Self {
        Self { tokens, delay }
    }
}

impl Engine for BenchEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "bench".into(),
            model: format!("bench ({} timestamped tokens per call)", self.tokens),
        }
    }

    fn stream(&self, request: ModelRequest) -> EngineStream {
        let last_user = request.conversation.iter().rev().find_map(|m| match m {
            ChatMessage::User { text, .. } => Some(text.as_str()),
            _ => None,
        });
        let words: Vec<&str> = last_user.unwrap_or_default().split_whitespace().collect();
        let just_asked = matches!(request.conversation.last(), Some(ChatMessage::User { .. }));
        if just_asked && words.contains(&"pause") {
            return ask();
        }
        let setting = |key: &str| {
            words
                .iter()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse::<u64>().ok())
        };
        let tokens = setting("tokens").unwrap_or(self.tokens);
        let delay = setting("delay_ms").map_or(self.delay, Duration::from_millis);
        timestamped(tokens, delay)
    }
}

/// `count` deltas `t<ns> `, the first at once and then one per `delay`.
fn timestamped(count: u64, delay: Duration) -> EngineStream {
    let clock = (!delay.is_zero()).then(|| {
        let mut clock = tokio::time::interval(delay);
        // A run that fell behind gets the missed tokens at once, as from a real stream.
        clock.set_missed_tick_behavior(MissedTickBehavior::Burst);
        clock
    });
    Box::pin(stream::unfold(
        (0u64, clock),
        move |(sent, mut clock): (u64, Option<Interval>)| async move {
            let event = match sent.cmp(&count) {
                Ordering::Greater => return None,
                Ordering::Equal => EngineEvent::Finish(FinishReason::Stop),
                Ordering::Less => {
                    if let Some(clock) = clock.as_mut() {
                        clock.tick().await;
                    }
                    EngineEvent::TextDelta(format!("t{} ", now_ns()))
                }
            };
            Some((Ok(event), (sent + 1, clock)))
        },
    ))
}

/// A `request_input` call asking for text: the run pauses on it.
fn ask() -> EngineStream {
    let id = crate::domain::new_id("call");
    let arguments = r#"{"prompt":"Paused by the benchmark. Any answer resumes it.","kind":"text"}"#;
    let events = vec![
        EngineEvent::ToolCallStart {
            id: id.clone(),
            name: request_input::NAME.into(),
        },
        EngineEvent::ToolCallArgs {
            id: id.clone(),
            delta: arguments.into(),
        },
        EngineEvent::ToolCallEnd { id },
        EngineEvent::Finish(FinishReason::ToolCalls),
    ];
    Box::pin(stream::iter(events.into_iter().map(Ok)))
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn request(texts: &[&str]) -> ModelRequest {
        ModelRequest {
            temperature: None,
            system: None,
            model: None,
            summary: None,
            conversation: texts
                .iter()
                .map(|t| ChatMessage::user(t.to_string()))
                .collect(),
            tools: Vec::new(),
            model_call_index: 0,
        }
    }

    async fn events(engine: &BenchEngine, texts: &[&str]) -> Vec<EngineEvent> {
        engine
            .stream(request(texts))
            .map(Result::unwrap)
            .collect()
            .await
    }

    #[tokio::test]
    async fn tokens_carry_increasing_timestamps_then_stop() {
        let events = events(&BenchEngine::new(3, Duration::ZERO), &[]).await;
        let stamps: Vec<u128> = events
            .iter()
            .filter_map(|e| match e {
                EngineEvent::TextDelta(d) => d.trim().strip_prefix('t')?.parse().ok(),
                _ => None,
            })
            .collect();
        assert_eq!(stamps.len(), 3);
        assert!(stamps.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(
            events.last(),
            Some(&EngineEvent::Finish(FinishReason::Stop))
        );
    }

    #[tokio::test]
    async fn the_message_overrides_the_count_and_can_pause() {
        let engine = BenchEngine::new(3, Duration::from_millis(1));
        assert_eq!(events(&engine, &["go tokens=5 delay_ms=0"]).await.len(), 6);
        let paused = events(&engine, &["pause"]).await;
        assert!(
            matches!(&paused[0], EngineEvent::ToolCallStart { name, .. } if name == "request_input")
        );
    }
}
