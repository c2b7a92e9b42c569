//! What a replay's judge needs of the agent: one model call outside any run (its text and
//! its usage, priced), and a note in a trial's log that records the verdict and what the
//! call used, so the judge's spending counts against its person's budget as any call does.

use futures_util::StreamExt;
use shared::usage::CallUsage;
use shared::EventBody;

use super::Runner;
use crate::agent::annotations::{self, Note, ATTEMPTS};
use crate::agent::engines::{EngineError, EngineEvent, ModelRequest};
use crate::agent::refusal::Refusal;
use crate::domain::SessionId;
use crate::store::Store;

impl<S: Store> Runner<S> {
    /// Makes one model call with no tools and returns what it wrote and its usage
    /// (priced; none if the provider reported none).
    pub async fn call_once(
        &self,
        request: ModelRequest,
    ) -> Result<(String, Option<CallUsage>), EngineError> {
        let mut stream = self.deps.engine.stream(request);
        let mut text = String::new();
        let mut usage = None;
        while let Some(item) = stream.next().await {
            match item? {
                EngineEvent::TextDelta(delta) => text.push_str(&delta),
                EngineEvent::Usage(call) => usage = Some(self.deps.prices.priced(call)),
                EngineEvent::Finish(_) => break,
                _ => {}
            }
        }
        Ok((text, usage))
    }

    /// Appends `events` to `session` as a note (into its active run, else a short run of
    /// its own), placed again while the session moves under it.
    pub async fn record_note(
        &self,
        session: SessionId,
        events: Vec<EventBody>,
    ) -> Result<(), Refusal> {
        for _ in 0..ATTEMPTS {
            let note = Note {
                events: events.clone(),
                state: None,
                feedback: None,
            };
            match annotations::append(&self.deps, session, note).await? {
                Ok(_) => return Ok(()),
                Err(rejection) if annotations::moved(&rejection) => continue,
                Err(rejection) => {
                    return Err(super::rejected(session, rejection)
                        .err()
                        .unwrap_or(Refusal::Internal("a note was answered with a run")))
                }
            }
        }
        Err(Refusal::Busy(shared::api::SessionStatus::Running))
    }
}
