//! What appending events does to a session besides the rows themselves: the status it
//! leaves the session in, the interrupts it raises, the runs it ends and the stop it asks
//! for. Pure, so every backend derives the same state from the same log.

use shared::api::SessionStatus;
use shared::{EventBody, Interrupt, Outcome};

use super::LogEntry;

/// The effects of appending a run of entries to one session.
#[derive(Debug, Default, PartialEq)]
pub struct Effects {
    /// The session's status after the entries, if they change it.
    pub status: Option<(SessionStatus, Option<String>)>,
    /// Interrupts raised, with the run that raised them.
    pub interrupts: Vec<(String, Interrupt)>,
    /// The run a persisted stop request (`CUSTOM tandem.stop_requested`) asks to stop.
    pub stop_run: Option<String>,
    /// Runs ended by these entries (`RUN_FINISHED`, `RUN_ERROR`), for the webhook outbox.
    pub run_ends: Vec<RunEnd>,
    /// Which of the entries is the last state event (`STATE_SNAPSHOT`, `STATE_DELTA`).
    pub last_state: Option<usize>,
    /// What the model calls these entries log (`CUSTOM tandem.usage`) cost, added to the
    /// session owner's spending in the same transaction.
    pub spending: Option<super::Spending>,
}

/// A run's end, recorded with the event that ends it so that a webhook announcing it is
/// owed durably (see `store/webhooks.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnd {
    /// Which of the entries ends the run (its index).
    pub index: usize,
    /// The run, when the entries name it; `RUN_ERROR` does not, and the store then takes
    /// the run the session's lease was taken for.
    pub run_id: Option<String>,
    /// `success`, `interrupt`, `cancelled` or `error` (as [`run_outcome`] names them).
    pub outcome: &'static str,
    /// `RUN_ERROR`'s `{message, code}`.
    pub error: Option<serde_json::Value>,
}

/// How an event ends a run, if it does: `success`, `interrupt` (paused for a person),
/// `cancelled` or `error`. A pause for an AG-UI client's own tools is a `success` with
/// `pendingToolCallIds`, as AG-UI has it.
pub fn run_outcome(body: &EventBody) -> Option<&'static str> {
    match body {
        EventBody::RunFinished { outcome, .. } => Some(match outcome {
            Some(Outcome::Interrupt { .. }) => "interrupt",
            Some(Outcome::Cancelled) => "cancelled",
            Some(Outcome::Success { .. }) | None => "success",
        }),
        EventBody::RunError { .. } => Some("error"),
        _ => None,
    }
}

/// Whether `entries` are a whole run of a person's notes: changes of the shared state and
/// ratings of answers, nothing else.
pub fn is_annotation(entries: &[LogEntry]) -> bool {
    // Looked at for every command, the token path's too: the ends first, no allocation.
    let [first, middle @ .., last] = entries else {
        return false;
    };
    let note = |entry: &LogEntry| match &entry.event.body {
        EventBody::Custom { name, .. } => name == shared::custom::FEEDBACK,
        other => other.is_state(),
    };
    matches!(first.event.body, EventBody::RunStarted { .. })
        && matches!(last.event.body, EventBody::RunFinished { .. })
        && !middle.is_empty()
        && middle.iter().all(note)
}

/// Derives the effects of `entries`, in order.
pub fn derive_effects(entries: &[LogEntry]) -> Effects {
    let mut effects = Effects::default();
    // The interrupt of a client-tools pause, raised by the `RUN_FINISHED` that follows it.
    let mut client_tools: Option<Interrupt> = None;
    // The run these entries are about, once they name it.
    let mut current_run: Option<&str> = None;
    // A person's note while no run is active (a change of the state, a rating) is a short
    // run of its own: it changes neither the session's status nor its questions, and
    // nobody awaits its end.
    if is_annotation(entries) {
        effects.last_state = entries.iter().rposition(|e| e.event.body.is_state());
        return effects;
    }
    for (index, entry) in entries.iter().enumerate() {
        if entry.event.body.is_state() {
            effects.last_state = Some(index);
        }
        if let Some(outcome) = run_outcome(&entry.event.body) {
            let (run_id, error) = match &entry.event.body {
                EventBody::RunFinished { run_id, .. } => (Some(run_id.as_str()), None),
                EventBody::RunError { message, code } => (
                    current_run,
                    Some(serde_json::json!({"message": message, "code": code})),
                ),
                _ => (None, None),
            };
            effects.run_ends.push(RunEnd {
                index,
                run_id: run_id.map(str::to_string),
                outcome,
                error,
            });
        }
        match &entry.event.body {
            EventBody::RunStarted { run_id, .. } => {
                current_run = Some(run_id.as_str());
                effects.status = Some((SessionStatus::Running, Some(run_id.clone())));
            }
            EventBody::RunFinished {
                run_id, outcome, ..
            } => {
                if let Some(Outcome::Interrupt { interrupts }) = outcome {
                    effects.status = Some((SessionStatus::AwaitingInput, None));
                    for interrupt in interrupts {
                        effects.interrupts.push((run_id.clone(), interrupt.clone()));
                    }
                } else if let (Some(interrupt), Some(Outcome::Success { .. })) =
                    (client_tools.take(), outcome)
                {
                    effects.status = Some((SessionStatus::AwaitingInput, None));
                    effects.interrupts.push((run_id.clone(), interrupt));
                } else {
                    effects.status = Some((SessionStatus::Idle, None));
                }
            }
            EventBody::RunError { .. } => {
                effects.status = Some((SessionStatus::Idle, None));
            }
            EventBody::Custom { name, value } if name == shared::custom::STOP_REQUESTED => {
                effects.stop_run = value["runId"].as_str().map(str::to_string);
            }
            EventBody::Custom { name, value } if name == shared::custom::CLIENT_TOOLS_PENDING => {
                client_tools = serde_json::from_value(value.clone()).ok();
            }
            EventBody::Custom { name, value } if name == shared::custom::USAGE => {
                let spending = effects.spending.get_or_insert_with(Default::default);
                let count = |field: &str| value.get(field).and_then(|v| v.as_u64()).unwrap_or(0);
                let cost = value.get("costUsd").and_then(|v| v.as_f64());
                spending.cost_usd += cost.filter(|c| c.is_finite() && *c >= 0.0).unwrap_or(0.0);
                spending.tokens += count("inputTokens") + count("outputTokens");
                spending.calls += 1;
            }
            _ => {}
        }
    }
    effects
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::Event;

    fn entry(body: EventBody) -> LogEntry {
        LogEntry::new(Event::at(body, 0))
    }

    #[test]
    fn interrupt_outcome_awaits_input_and_raises_interrupts() {
        let interrupt = Interrupt {
            id: "i".into(),
            reason: "input_required".into(),
            message: None,
            tool_call_id: Some("c".into()),
            response_schema: None,
            expires_at: None,
            metadata: None,
        };
        let effects = derive_effects(&[entry(EventBody::RunFinished {
            thread_id: "t".into(),
            run_id: "r".into(),
            result: None,
            outcome: Some(Outcome::Interrupt {
                interrupts: vec![interrupt.clone()],
            }),
            usage: None,
        })]);
        assert_eq!(effects.status, Some((SessionStatus::AwaitingInput, None)));
        assert_eq!(effects.interrupts, vec![("r".to_string(), interrupt)]);
        assert_eq!(
            effects.run_ends,
            vec![RunEnd {
                index: 0,
                run_id: Some("r".into()),
                outcome: "interrupt",
                error: None,
            }]
        );
    }

    #[test]
    fn a_run_waiting_for_client_tools_awaits_input_with_their_interrupt() {
        let interrupt = Interrupt {
            id: "i".into(),
            reason: "client_tools".into(),
            message: None,
            tool_call_id: Some("c".into()),
            response_schema: None,
            expires_at: None,
            metadata: None,
        };
        let finished = |pending: Option<Vec<String>>| {
            entry(EventBody::RunFinished {
                thread_id: "t".into(),
                run_id: "r".into(),
                result: None,
                outcome: Some(Outcome::Success {
                    pending_tool_call_ids: pending,
                }),
                usage: None,
            })
        };
        let pending = entry(EventBody::Custom {
            name: shared::custom::CLIENT_TOOLS_PENDING.into(),
            value: serde_json::to_value(&interrupt).unwrap(),
        });
        let effects = derive_effects(&[pending, finished(Some(vec!["c".into()]))]);
        assert_eq!(effects.status, Some((SessionStatus::AwaitingInput, None)));
        assert_eq!(effects.interrupts, vec![("r".to_string(), interrupt)]);
        let plain = derive_effects(&[finished(None)]);
        assert_eq!(plain.status, Some((SessionStatus::Idle, None)));
        assert!(plain.interrupts.is_empty());
    }

    #[test]
    fn run_start_then_error_leaves_idle() {
        let effects = derive_effects(&[
            entry(EventBody::RunStarted {
                thread_id: "t".into(),
                run_id: "r".into(),
                parent_run_id: None,
                input: None,
            }),
            entry(EventBody::RunError {
                message: "x".into(),
                code: Some("c".into()),
            }),
        ]);
        assert_eq!(effects.status, Some((SessionStatus::Idle, None)));
        let end = &effects.run_ends[..];
        assert_eq!(end.len(), 1);
        assert_eq!((end[0].index, end[0].outcome), (1, "error"));
        assert_eq!(
            end[0].run_id.as_deref(),
            Some("r"),
            "the run the entries started"
        );
        assert_eq!(
            end[0].error,
            Some(serde_json::json!({"message": "x", "code": "c"}))
        );
        let alone = derive_effects(&[entry(EventBody::RunError {
            message: "x".into(),
            code: None,
        })]);
        assert_eq!(alone.run_ends[0].run_id, None, "the store finds the run");
    }

    #[test]
    fn a_person_s_note_is_a_run_that_changes_no_status_and_owes_no_webhook() {
        let started = || {
            entry(EventBody::RunStarted {
                thread_id: "t".into(),
                run_id: "r".into(),
                parent_run_id: None,
                input: None,
            })
        };
        let finished = || {
            entry(EventBody::RunFinished {
                thread_id: "t".into(),
                run_id: "r".into(),
                result: None,
                outcome: None,
                usage: None,
            })
        };
        let delta = || entry(EventBody::StateDelta { delta: Vec::new() });
        let edit = derive_effects(&[started(), delta(), finished()]);
        assert_eq!(edit.status, None, "a paused session stays paused");
        assert_eq!((edit.run_ends.len(), edit.last_state), (0, Some(1)));
        let step = entry(EventBody::StepStarted {
            step_name: "s".into(),
        });
        let run = derive_effects(&[started(), delta(), step, finished()]);
        assert_eq!(
            run.run_ends.len(),
            1,
            "a run that did more than change the state"
        );
    }

    #[test]
    fn content_changes_nothing() {
        let effects = derive_effects(&[entry(EventBody::TextMessageContent {
            message_id: "m".into(),
            delta: "hi".into(),
        })]);
        assert_eq!(effects, Effects::default());
    }

    #[test]
    fn logged_usage_is_spending_summed_over_the_calls() {
        let usage = |value: serde_json::Value| {
            entry(EventBody::Custom {
                name: shared::custom::USAGE.into(),
                value,
            })
        };
        let effects = derive_effects(&[
            usage(serde_json::json!({"inputTokens": 100, "outputTokens": 20, "costUsd": 0.5})),
            // Unpriced: its tokens count, no cost.
            usage(serde_json::json!({"inputTokens": 7, "outputTokens": 3})),
            usage(serde_json::json!({"inputTokens": 1, "costUsd": -4.0})),
        ]);
        assert_eq!(
            effects.spending,
            Some(crate::store::Spending {
                cost_usd: 0.5,
                tokens: 131,
                calls: 3
            })
        );
    }
}
