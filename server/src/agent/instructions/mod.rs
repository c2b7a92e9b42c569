//! The instructions a person gives the model: their own, for all their conversations (a
//! row of theirs, `PUT /api/instructions`), and each conversation's own
//! (`PUT /api/sessions/{id}/instructions`). Both are in the log as
//! `CUSTOM tandem.instructions {scope, text}`: a conversation's as a note when the person
//! sets them, the person's own as each run finds them before its first model call, when
//! they differ from the last ones its line recorded. So the conversation sent to the model
//! is the log's, a branch keeps what its prefix holds, and a replay reads what was told.

pub(super) mod recorded;

use shared::instructions::{self, Scope};
use shared::{Event, EventBody};

use super::annotations::{self, Note, ATTEMPTS};
use super::refusal::Refusal;
use super::runner::{rejected, Runner};
use crate::domain::{SessionId, UserId};
use crate::store::Store;
use recorded::event;
pub use recorded::Given;

/// The instructions of a runner's sessions and users (a view of the [`Runner`]).
pub struct InstructionsOf<'a, S> {
    pub(super) runner: &'a Runner<S>,
}

impl<S: Store> Runner<S> {
    /// Reading and setting instructions.
    pub fn instructions(&self) -> InstructionsOf<'_, S> {
        InstructionsOf { runner: self }
    }
}

impl<S: Store> InstructionsOf<'_, S> {
    /// `user`'s own instructions.
    pub async fn person(&self, user: UserId) -> Result<String, Refusal> {
        Ok(self.runner.deps.store.user_instructions(user).await?)
    }

    /// Replaces `user`'s own instructions (checked first); the text as kept. Their runs
    /// from now on are told them, in every conversation.
    pub async fn set_person(&self, user: UserId, text: &str) -> Result<String, Refusal> {
        let text = instructions::check(text).map_err(Refusal::InvalidInstructions)?;
        let store = &self.runner.deps.store;
        store
            .set_user_instructions(user, &text, crate::domain::now_ms())
            .await?;
        Ok(text)
    }

    /// The instructions of `session`'s conversation, as its log holds them.
    pub async fn conversation(&self, session: SessionId) -> Result<String, Refusal> {
        let rows = self
            .runner
            .deps
            .store
            .events_after(session, 0, u32::MAX)
            .await?;
        let mut given = Given::default();
        let name = shared::custom::INSTRUCTIONS;
        for row in rows.iter().filter(|row| row.json.contains(name)) {
            if let Ok(Event {
                body: EventBody::Custom { name: found, value },
                ..
            }) = serde_json::from_str::<Event>(&row.json)
            {
                if found == name {
                    given.observe(&value);
                }
            }
        }
        Ok(given.conversation)
    }

    /// Sets the instructions of `session`'s conversation (checked first): a note in its
    /// log, which the next model call of any run of the line is told. The text as kept.
    pub async fn set_conversation(
        &self,
        session: SessionId,
        text: &str,
    ) -> Result<String, Refusal> {
        let text = instructions::check(text).map_err(Refusal::InvalidInstructions)?;
        for _ in 0..ATTEMPTS {
            let note = Note {
                events: vec![event(Scope::Conversation, &text)],
                state: None,
                feedback: None,
            };
            match annotations::append(&self.runner.deps, session, note).await? {
                Ok(_) => return Ok(text),
                Err(rejection) if annotations::moved(&rejection) => continue,
                Err(rejection) => {
                    return Err(rejected(session, rejection)
                        .err()
                        .unwrap_or(Refusal::Internal("instructions were answered with a run")))
                }
            }
        }
        Err(Refusal::Busy(shared::api::SessionStatus::Running))
    }
}
