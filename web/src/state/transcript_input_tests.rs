//! Tests of what the fold takes from a run's start and Tandem's own records: an AG-UI
//! client's messages and tool results (`RUN_STARTED.input`), where the model's view begins
//! (`tandem.context_trimmed`) and the model the person picked (`tandem.model_selected`).

use serde_json::{json, Value};

use super::{finished, fold, message, started, tool_call};
use crate::state::item::{ItemBody, RunState, ToolStatus};
use crate::state::transcript::Transcript;

#[test]
fn an_agui_clients_messages_and_tool_results_come_from_the_runs_input() {
    let input = |messages: Value| {
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r",
               "input": {"threadId": "t", "runId": "c", "messages": messages}})
    };
    let mut events = vec![input(
        json!([{"id": "u1", "role": "user", "content": "show a card"}]),
    )];
    events.extend(tool_call("c1", "show_card", &["{}"]));
    events.push(finished(
        json!({"type": "success", "pendingToolCallIds": ["c1"]}),
    ));
    let transcript = fold(&events);
    assert!(
        matches!(&transcript.items()[0].body, ItemBody::User { text, .. } if text == "show a card")
    );
    assert_eq!(
        transcript.run_state(),
        RunState::Awaiting,
        "the client's call waits"
    );
    assert!(
        transcript.waiting_for_client(),
        "on the client, not the person"
    );
    let ItemBody::ToolCall(call) = &transcript.items()[1].body else {
        panic!("a tool card")
    };
    assert_eq!(
        call.status(),
        ToolStatus::Running,
        "not abandoned: the client runs it"
    );

    events.push(input(
        json!([{"id": "t1", "role": "tool", "toolCallId": "c1", "content": "shown"}]),
    ));
    events.push(finished(json!({"type": "success"})));
    let transcript = fold(&events);
    let ItemBody::ToolCall(call) = &transcript.items()[1].body else {
        panic!("a tool card")
    };
    assert_eq!(call.result.as_deref(), Some("shown"));
    assert_eq!(transcript.run_state(), RunState::Idle);
    assert!(!transcript.waiting_for_client());
}

#[test]
fn the_models_view_start_is_marked_on_the_persons_message_and_moves() {
    let trimmed = |n: u64| {
        json!({"type": "CUSTOM", "name": "tandem.context_trimmed",
               "value": {"firstUserMessage": n, "droppedMessages": 2, "budgetTokens": 1, "estimatedTokens": 9}})
    };
    let mut events = vec![started()];
    for (i, id) in ["u1", "u2", "u3"].iter().enumerate() {
        events.extend(message(id, "user", &["hi"]));
        if i == 1 {
            events.push(trimmed(1));
        }
    }
    let marked = |transcript: &Transcript| -> Vec<bool> {
        transcript
            .items()
            .iter()
            .filter_map(|item| match item.body {
                ItemBody::User { view_start, .. } => Some(view_start),
                _ => None,
            })
            .collect()
    };
    assert_eq!(marked(&fold(&events)), [false, true, false]);
    events.push(trimmed(2));
    assert_eq!(
        marked(&fold(&events)),
        [false, false, true],
        "the mark moves"
    );
}

#[test]
fn the_persons_model_pick_is_remembered() {
    let mut events = vec![started()];
    assert_eq!(fold(&events).model(), None);
    events.push(json!({"type": "CUSTOM", "name": "tandem.model_selected", "value": {"model": "gpt-4.1-mini"}}));
    assert_eq!(fold(&events).model(), Some("gpt-4.1-mini"));
}

#[test]
fn the_summary_of_the_left_out_turns_shows_where_the_view_begins() {
    let mut events = vec![started()];
    for id in ["u1", "u2", "u3"] {
        events.extend(message(id, "user", &["hi"]));
    }
    events.push(json!({"type": "CUSTOM", "name": "tandem.context_summary",
        "value": {"firstUserMessage": 2, "summary": "They said hi twice.", "summarisedMessages": 2}}));
    events.push(json!({"type": "CUSTOM", "name": "tandem.context_trimmed",
        "value": {"firstUserMessage": 2, "droppedMessages": 2, "budgetTokens": 1, "estimatedTokens": 9}}));
    let summaries = |transcript: &Transcript| -> Vec<Option<String>> {
        transcript
            .items()
            .iter()
            .filter_map(|item| match &item.body {
                ItemBody::User { summary, .. } => Some(summary.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        summaries(&fold(&events)),
        [None, None, Some("They said hi twice.".to_string())]
    );
    events.push(json!({"type": "CUSTOM", "name": "tandem.context_trimmed",
        "value": {"firstUserMessage": 1, "droppedMessages": 1, "budgetTokens": 1, "estimatedTokens": 9}}));
    assert_eq!(
        summaries(&fold(&events)),
        [None, None, None],
        "a view drawn without a summary shows none"
    );
}

#[test]
fn a_down_mcp_server_is_a_notice_of_its_own() {
    let mut events = vec![started()];
    events.extend(message("u1", "user", &["use it"]));
    events.push(json!({"type": "CUSTOM", "name": "tandem.mcp_server_unavailable",
        "value": {"server": "notes", "toolCallId": "c1", "reason": "it died",
                  "message": "The MCP server `notes` is down (it died); Tandem starts it again in 1 s."}}));
    let transcript = fold(&events);
    let notices: Vec<&ItemBody> = transcript
        .items()
        .iter()
        .map(|item| &item.body)
        .filter(|body| matches!(body, ItemBody::Notice { .. }))
        .collect();
    assert_eq!(
        notices,
        [&ItemBody::Notice {
            text: "The MCP server `notes` is down (it died); Tandem starts it again in 1 s.".into(),
            warning: true,
        }]
    );
}
