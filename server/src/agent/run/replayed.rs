//! A replay trial's tool calls and questions, met with the record (`shared::replays`).
//!
//! The record is the recorded run's calls in order, each with the result its log holds
//! (a tool's output, a person's answer to a question, the rejection of a call they did
//! not approve), read once a run from the source session's log between the mark's
//! `fromSeq` and `toSeq`. A trial's call is matched with the recorded call at the same
//! place (its n-th call since the trial began with the record's n-th): the same tool and
//! the same arguments (as JSON values) get the recorded result without running. The first
//! call that differs is marked (`CUSTOM tandem.replay_diverged`); from then on, what
//! differs runs only if it changes nothing, a question the record does not answer waits for
//! the person (`answers: ask`) or stops the trial, and anything that changes something
//! stops it. A recorded side effect never runs again.

use serde_json::Value;
use shared::replays::{AnswersMode, Diverged, ReplayMark, ToolsMode};
use shared::{Event, EventBody};

use crate::domain::SessionId;
use crate::store::{Store, StoreError};

/// One call of the recorded run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecordedCall {
    pub name: String,
    pub arguments: Value,
    /// Its result as logged (none if the run ended before it had one).
    pub content: Option<String>,
}

/// The recorded run's calls, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Recording {
    pub calls: Vec<RecordedCall>,
}

impl Recording {
    /// Reads the calls the mark's record holds (none if its session is gone).
    pub async fn load<S: Store>(store: &S, mark: &ReplayMark) -> Result<Self, StoreError> {
        let Ok(source) = SessionId::parse(&mark.source_session_id) else {
            return Ok(Self::default());
        };
        let count = mark.to_seq.saturating_sub(mark.from_seq) + 1;
        let limit = u32::try_from(count).unwrap_or(u32::MAX);
        let rows = store
            .events_after(source, mark.from_seq.saturating_sub(1), limit)
            .await?;
        let events = rows
            .iter()
            .filter(|row| row.seq <= mark.to_seq)
            .filter_map(|row| serde_json::from_str::<Event>(&row.json).ok())
            .map(|event| event.body);
        Ok(Self::from_events(events))
    }

    /// The calls of a run's events.
    pub fn from_events(events: impl IntoIterator<Item = EventBody>) -> Self {
        let mut calls: Vec<(String, RecordedCall, String)> = Vec::new();
        for body in events {
            match body {
                EventBody::ToolCallStart {
                    tool_call_id,
                    tool_call_name,
                    ..
                } => calls.push((
                    tool_call_id,
                    RecordedCall {
                        name: tool_call_name,
                        arguments: Value::Null,
                        content: None,
                    },
                    String::new(),
                )),
                EventBody::ToolCallArgs {
                    tool_call_id,
                    delta,
                } => {
                    if let Some((_, _, text)) = calls.iter_mut().find(|c| c.0 == tool_call_id) {
                        text.push_str(&delta);
                    }
                }
                EventBody::ToolCallResult {
                    tool_call_id,
                    content,
                    ..
                } => {
                    if let Some((_, call, _)) = calls.iter_mut().find(|c| c.0 == tool_call_id) {
                        call.content = Some(content);
                    }
                }
                _ => {}
            }
        }
        let calls = calls
            .into_iter()
            .map(|(_, mut call, text)| {
                call.arguments = arguments_of(&text);
                call
            })
            .collect();
        Self { calls }
    }
}

/// A call's arguments as JSON (its text as a string if it is not JSON; none is `{}`).
pub(crate) fn arguments_of(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// What a call is, for a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// `request_input`: a question for the person.
    Question,
    /// A tool that needs approval or is not safe to run twice.
    ChangesThings,
    /// A tool that changes nothing.
    ReadOnly,
}

/// What a trial's call gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Served {
    /// The recorded result, without running.
    Recorded(String),
    /// It runs (or, a question, waits for the person) as in any run.
    AsUsual,
    /// The trial stops here, for this reason.
    Stop(String),
}

/// The decision on one call of a trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    pub served: Served,
    /// Set when this is the trial's first call that differs from the record.
    pub diverged: Option<Diverged>,
}

/// One call of a trial: its id, tool, arguments and place among the trial's calls.
pub(crate) struct TrialCall<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub arguments: &'a Value,
    pub place: usize,
    pub kind: CallKind,
}

/// Decides what `call` gets, given the record, the trial's modes and whether an earlier
/// call already differed.
pub(crate) fn decide(
    recording: &Recording,
    mark: &ReplayMark,
    call: &TrialCall<'_>,
    diverged_before: bool,
) -> Decision {
    let recorded = recording.calls.get(call.place);
    let same = recorded
        .filter(|r| r.name == call.name && r.arguments == *call.arguments)
        .and_then(|r| r.content.clone());
    let diverged = (same.is_none() && !diverged_before).then(|| Diverged {
        tool_call_id: call.id.to_string(),
        tool_call_name: call.name.to_string(),
        recorded_name: recorded.map(|r| r.name.clone()),
    });
    let served = match (same, call.kind) {
        (Some(_), CallKind::ReadOnly) if mark.tools == ToolsMode::Live => Served::AsUsual,
        (Some(content), _) => Served::Recorded(content),
        (None, CallKind::ReadOnly) => Served::AsUsual,
        (None, CallKind::Question) if mark.answers == AnswersMode::Ask => Served::AsUsual,
        (None, CallKind::Question) => Served::Stop(
            "the trial asked a question the record does not answer (answers: recorded)".into(),
        ),
        (None, CallKind::ChangesThings) => Served::Stop(format!(
            "the trial called `{}` differently from the record; it changes things, so a \
             replay does not run it",
            call.name.chars().take(80).collect::<String>()
        )),
    };
    Decision { served, diverged }
}

/// The event that marks a trial's first call that differs from the record.
pub(crate) fn diverged_event(diverged: &Diverged) -> EventBody {
    EventBody::Custom {
        name: shared::custom::REPLAY_DIVERGED.into(),
        value: serde_json::to_value(diverged).expect("a divergence serialises"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn mark(tools: ToolsMode, answers: AnswersMode) -> ReplayMark {
        ReplayMark {
            replay_id: "rp".into(),
            variant: "a".into(),
            trial: 1,
            source_session_id: String::new(),
            from_seq: 1,
            to_seq: 2,
            tools,
            answers,
            system_prompt: None,
            temperature: None,
        }
    }

    fn recording() -> Recording {
        Recording::from_events([
            EventBody::ToolCallStart {
                tool_call_id: "c1".into(),
                tool_call_name: "append_file".into(),
                parent_message_id: None,
            },
            EventBody::ToolCallArgs {
                tool_call_id: "c1".into(),
                delta: r#"{"path":"a.txt","#.into(),
            },
            EventBody::ToolCallArgs {
                tool_call_id: "c1".into(),
                delta: r#""text":"x"}"#.into(),
            },
            EventBody::ToolCallResult {
                message_id: "m".into(),
                tool_call_id: "c1".into(),
                content: "appended".into(),
                role: None,
            },
        ])
    }

    fn call<'a>(
        name: &'a str,
        arguments: &'a Value,
        place: usize,
        kind: CallKind,
    ) -> TrialCall<'a> {
        TrialCall {
            id: "t1",
            name,
            arguments,
            place,
            kind,
        }
    }

    #[test]
    fn the_same_call_at_its_place_gets_the_recorded_result_whatever_its_key_order() {
        let arguments = json!({"text": "x", "path": "a.txt"});
        let mark = mark(ToolsMode::Recorded, AnswersMode::Recorded);
        let same = call("append_file", &arguments, 0, CallKind::ChangesThings);
        let decision = decide(&recording(), &mark, &same, false);
        assert_eq!(decision.served, Served::Recorded("appended".into()));
        assert_eq!(decision.diverged, None);
    }

    #[test]
    fn a_different_call_diverges_once_and_runs_only_if_it_changes_nothing() {
        let other = json!({"path": "b.txt", "text": "x"});
        let mark = mark(ToolsMode::Recorded, AnswersMode::Recorded);
        let changing = call("append_file", &other, 0, CallKind::ChangesThings);
        let decision = decide(&recording(), &mark, &changing, false);
        assert!(matches!(decision.served, Served::Stop(_)));
        assert_eq!(
            decision.diverged.map(|d| d.recorded_name),
            Some(Some("append_file".into()))
        );
        let reading = call("clock", &other, 1, CallKind::ReadOnly);
        let decision = decide(&recording(), &mark, &reading, true);
        assert_eq!(decision.served, Served::AsUsual);
        assert_eq!(
            decision.diverged, None,
            "only the first difference is marked"
        );
    }

    #[test]
    fn live_tools_run_again_only_when_they_change_nothing() {
        let arguments = json!({"text": "x", "path": "a.txt"});
        let live = mark(ToolsMode::Live, AnswersMode::Recorded);
        let reading = call("append_file", &arguments, 0, CallKind::ReadOnly);
        assert_eq!(
            decide(&recording(), &live, &reading, false).served,
            Served::AsUsual
        );
        let changing = call("append_file", &arguments, 0, CallKind::ChangesThings);
        assert_eq!(
            decide(&recording(), &live, &changing, false).served,
            Served::Recorded("appended".into())
        );
    }

    #[test]
    fn a_question_the_record_does_not_answer_waits_or_stops_as_the_replay_says() {
        let arguments = json!({"kind": "text", "prompt": "Which?"});
        let question = call("request_input", &arguments, 0, CallKind::Question);
        let ask = mark(ToolsMode::Recorded, AnswersMode::Ask);
        assert_eq!(
            decide(&recording(), &ask, &question, false).served,
            Served::AsUsual
        );
        let recorded = mark(ToolsMode::Recorded, AnswersMode::Recorded);
        assert!(matches!(
            decide(&recording(), &recorded, &question, false).served,
            Served::Stop(_)
        ));
    }
}
