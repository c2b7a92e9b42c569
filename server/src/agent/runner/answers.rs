//! Answers to interrupts: checking them, recording them, and resuming the run.
//!
//! A question's answer becomes its tool result; a decision on a tool call that needed
//! approval is recorded as `CUSTOM tandem.tool_approval` (with the rejection's result);
//! a client's tool results become their calls' results.
//! Both are committed with the resumed run's `RUN_STARTED` under the `Resume` guard, so
//! the first valid answer wins atomically. An answer past the deadline expires the
//! interrupt first and gets 410.

use serde_json::Value;
use shared::api::RunAccepted;
use shared::run_input::{input_messages, InputMessage};
use shared::{EventBody, Outcome, ResumeStatus, ToolRole};

use super::expiry;
use super::{rejected, Runner};
use crate::agent::budget;
use crate::agent::new_message::run_id_for;
use crate::agent::refusal::Refusal;
use crate::agent::run::{approval, client_tools};
use crate::agent::tools::{request_input, ToolRegistry};
use crate::config::BudgetOverrun;
use crate::domain::{new_id, SessionId, UserId};
use crate::store::{Applied, Guard, InterruptRow, InterruptState, Rejection, Store};

/// Answering a session's interrupts (a view of the [`Runner`]).
pub struct Answers<'a, S> {
    pub(super) runner: &'a Runner<S>,
}

/// A person's (or a client's) reply to one interrupt.
pub struct Reply<'a> {
    /// The interrupt answered.
    pub interrupt_id: &'a str,
    /// Whether it is answered or cancelled.
    pub status: ResumeStatus,
    /// The answer, checked against the interrupt's `responseSchema`.
    pub payload: Option<Value>,
    /// The AG-UI input that carried the reply, recorded in the resumed run's
    /// `RUN_STARTED` (none from REST or a socket).
    pub input: Option<Value>,
}

impl<S: Store> Runner<S> {
    /// Answering the session's interrupts.
    pub fn answers(&self) -> Answers<'_, S> {
        Answers { runner: self }
    }
}

impl<S: Store> Answers<'_, S> {
    /// An answer to an interrupt: validated, committed, and the run resumes.
    /// `owner`: the session's owner, whose line the run waits in for a slot.
    pub async fn answer(
        &self,
        session: SessionId,
        owner: UserId,
        reply: Reply<'_>,
    ) -> Result<RunAccepted, Refusal> {
        let status = reply.status;
        let answered = self.answer_unmetered(session, owner, reply).await;
        let outcome = match (&answered, status) {
            (Ok(accepted), _) if accepted.duplicate => "repeated",
            (Ok(_), ResumeStatus::Resolved) => "resolved",
            (Ok(_), ResumeStatus::Cancelled) => "cancelled",
            (Err(Refusal::InterruptExpired(_)), _) => "too_late",
            (Err(_), _) => "refused",
        };
        crate::metrics::METRICS.answered(outcome);
        answered
    }

    async fn answer_unmetered(
        &self,
        session: SessionId,
        owner: UserId,
        reply: Reply<'_>,
    ) -> Result<RunAccepted, Refusal> {
        let Reply {
            interrupt_id,
            status,
            payload,
            input,
        } = reply;
        if let Some(why) = payload
            .as_ref()
            .and_then(|payload| shared::nesting::too_deep("the answer", payload))
        {
            return Err(Refusal::InvalidPayload(why));
        }
        let mut row = self.pending_row(session, interrupt_id).await?;
        let response = request_input::answer(status, payload);
        if row.state == InterruptState::Pending && expiry::is_due(&row) {
            // Past its deadline but not yet swept: expire it now, as the sweeper would.
            super::expiry::Expiry {
                runner: self.runner,
            }
            .expire(&row)
            .await?;
            row = self.pending_row(session, interrupt_id).await?;
        }
        if row.state != InterruptState::Pending {
            return answered_already(session, &row, &response);
        }
        if status == ResumeStatus::Resolved {
            request_input::check_payload(&row.interrupt, response.get("payload"))
                .map_err(Refusal::InvalidPayload)?;
        }
        let run_id = run_id_for(input.as_ref());
        if row.interrupt.reason == budget::REASON {
            if !budget::continues(status, response.get("payload")) {
                // Stopping a run at its budget ends it here; nothing runs.
                let started = self.runner.run_started_with(session, &run_id, input);
                return self
                    .end_waiting(session, &row, response, started, run_id)
                    .await;
            }
            let rules = &self.runner.deps.budgets;
            if rules.overrun != BudgetOverrun::Allow {
                let now = crate::domain::now_ms();
                let reached = rules.reached(&*self.runner.deps.store, owner, now).await?;
                if !reached.is_empty() {
                    return Err(Refusal::BudgetExceeded(reached));
                }
            }
        }
        self.runner.check_room(owner)?;
        // Results an AG-UI client sent as `tool` messages travel in its input, which
        // the client holds already; only the rest become events.
        let carried: Vec<String> = input_messages(input.as_ref())
            .into_iter()
            .filter_map(|message| match message {
                InputMessage::ToolResult { tool_call_id, .. } => Some(tool_call_id),
                InputMessage::User { .. } => None,
            })
            .collect();
        let mut events = vec![self.runner.run_started_with(session, &run_id, input)];
        // Edited arguments are checked against the tool's schema: a person's own tool's too.
        let tools = match row.interrupt.reason == approval::REASON {
            true => self.runner.deps.tools_of(owner).await,
            false => self.runner.deps.tools.clone(),
        };
        let resolution = self.resolution(&row, status, &response, &tools)?;
        events.extend(resolution.into_iter().filter(|event| {
            !matches!(event, EventBody::ToolCallResult { tool_call_id, .. } if carried.contains(tool_call_id))
        }));
        let guard = Guard::Resume {
            interrupt_id: row.id,
            response,
            run_id: run_id.clone(),
        };
        self.runner
            .start(session, owner, run_id, guard, events)
            .await
    }

    /// The events that record an answer: the tool result of a question, or the decision
    /// on a call that needed approval (with its result if rejected).
    fn resolution(
        &self,
        row: &InterruptRow,
        status: ResumeStatus,
        response: &Value,
        tools: &ToolRegistry,
    ) -> Result<Vec<EventBody>, Refusal> {
        if row.interrupt.reason == client_tools::REASON {
            let max = self.runner.deps.limits.max_tool_result_bytes;
            return client_tools::results(&row.interrupt, status, response.get("payload"), max)
                .map_err(Refusal::InvalidPayload);
        }
        if row.interrupt.reason == budget::REASON {
            let go_on = budget::continues(status, response.get("payload"));
            let past_budget = self.runner.deps.budgets.overrun == BudgetOverrun::Allow;
            return Ok(vec![budget::decision(&row.id, go_on, past_budget)]);
        }
        if row.interrupt.reason != approval::REASON {
            return Ok(vec![tool_result(&row.tool_call_id, response)]);
        }
        let decision = approval::decide(&row.interrupt, status, response.get("payload"), tools)
            .map_err(Refusal::InvalidPayload)?;
        let mut events = vec![decision.to_event()];
        if !decision.approved {
            let content = decision.rejection_content();
            events.push(EventBody::ToolCallResult {
                message_id: new_id("msg"),
                tool_call_id: row.tool_call_id.clone(),
                content,
                role: Some(ToolRole::Tool),
            });
        }
        Ok(events)
    }

    async fn pending_row(
        &self,
        session: SessionId,
        interrupt_id: &str,
    ) -> Result<InterruptRow, Refusal> {
        match self
            .runner
            .deps
            .store
            .interrupt(session, interrupt_id)
            .await?
        {
            Some(row) => Ok(row),
            None if self.runner.deps.store.session(session).await?.is_none() => {
                Err(Refusal::SessionNotFound(session))
            }
            None => Err(Refusal::interrupt_not_found(interrupt_id)),
        }
    }

    pub(super) async fn decline_pending(&self, session: SessionId) -> Result<(), Refusal> {
        let pending = self.runner.deps.store.pending_interrupts(session).await?;
        let Some(row) = pending.into_iter().next() else {
            return Err(Refusal::Idle);
        };
        let response = request_input::answer(ResumeStatus::Cancelled, None);
        let run_id = new_id("run");
        let started = self.runner.run_started(session, &run_id);
        // A duplicate means another stop declined it first: nothing left to do.
        self.end_waiting(session, &row, response, started, run_id)
            .await
            .map(drop)
    }

    /// Answers the interrupt `row` with `response` in a run that ends at once (stopped):
    /// its `RUN_STARTED`, the answer's record, `RUN_FINISHED` cancelled.
    async fn end_waiting(
        &self,
        session: SessionId,
        row: &InterruptRow,
        response: Value,
        started: EventBody,
        run_id: String,
    ) -> Result<RunAccepted, Refusal> {
        let tools = &self.runner.deps.tools;
        let resolution = self.resolution(row, ResumeStatus::Cancelled, &response, tools)?;
        let finished = EventBody::RunFinished {
            thread_id: session.to_string(),
            run_id: run_id.clone(),
            result: None,
            outcome: Some(Outcome::Cancelled),
            usage: None,
        };
        let mut events = vec![started];
        events.extend(resolution);
        events.extend(super::trace_context());
        events.push(finished);
        let guard = Guard::Resume {
            interrupt_id: row.id.clone(),
            response,
            run_id: run_id.clone(),
        };
        match self.runner.submit(session, guard, events).await? {
            Applied::Committed { .. } => {
                // Its spans (and the wait it ended) go out now: no loop runs it.
                self.runner.deps.traces.run_ended(session, &run_id);
                Ok(RunAccepted {
                    run_id,
                    duplicate: false,
                    queued: None,
                })
            }
            Applied::Rejected(rejection) => rejected(session, rejection),
        }
    }
}

fn tool_result(tool_call_id: &str, response: &Value) -> EventBody {
    EventBody::ToolCallResult {
        message_id: new_id("msg"),
        tool_call_id: tool_call_id.into(),
        content: response.to_string(),
        role: Some(ToolRole::Tool),
    }
}

/// The answer to an interrupt that already has one: a repeat or a conflict.
fn answered_already(
    session: SessionId,
    row: &InterruptRow,
    response: &Value,
) -> Result<RunAccepted, Refusal> {
    let rejection = Rejection::InterruptAnswered {
        interrupt_id: row.id.clone(),
        same: row.response.as_ref() == Some(response),
        state: row.state.as_str().to_string(),
        response: row.response.clone().unwrap_or_default(),
        run_id: row.resumed_run_id.clone(),
    };
    rejected(session, rejection)
}
