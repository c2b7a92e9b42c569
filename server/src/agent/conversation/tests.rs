use super::*;

fn ev(body: EventBody) -> Event {
    Event::at(body, 0)
}

fn user(id: &str, text: &str) -> Vec<Event> {
    vec![
        ev(EventBody::TextMessageStart {
            message_id: id.into(),
            role: Some(TextRole::User),
            name: None,
        }),
        ev(EventBody::TextMessageContent {
            message_id: id.into(),
            delta: text.into(),
        }),
        ev(EventBody::TextMessageEnd {
            message_id: id.into(),
        }),
    ]
}

fn step(start: bool) -> Event {
    let step_name = MODEL_CALL_STEP.to_string();
    ev(if start {
        EventBody::StepStarted { step_name }
    } else {
        EventBody::StepFinished { step_name }
    })
}

fn call(id: &str, name: &str, args: &str) -> Vec<Event> {
    vec![
        ev(EventBody::ToolCallStart {
            tool_call_id: id.into(),
            tool_call_name: name.into(),
            parent_message_id: None,
        }),
        ev(EventBody::ToolCallArgs {
            tool_call_id: id.into(),
            delta: args.into(),
        }),
        ev(EventBody::ToolCallEnd {
            tool_call_id: id.into(),
        }),
    ]
}

/// The result of call `id`.
fn result(id: &str, content: &str) -> Event {
    ev(EventBody::ToolCallResult {
        message_id: format!("r-{id}"),
        tool_call_id: id.into(),
        content: content.into(),
        role: None,
    })
}

#[test]
fn rebuilds_user_assistant_tool_turns_and_counts_model_calls() {
    let mut log = user("u1", "hi");
    log.push(step(true));
    log.extend(call("c1", "clock", "{}"));
    log.push(step(false));
    log.push(result("c1", "{\"utc\":\"x\"}"));
    log.push(step(true));
    log.push(ev(EventBody::TextMessageStart {
        message_id: "a1".into(),
        role: Some(TextRole::Assistant),
        name: None,
    }));
    log.push(ev(EventBody::TextMessageContent {
        message_id: "a1".into(),
        delta: "It is x".into(),
    }));
    log.push(step(false));
    let history = rebuild(&log);
    assert_eq!(history.model_calls, 2);
    assert_eq!(history.messages.len(), 4);
    assert_eq!(history.messages[0], ChatMessage::user("hi"));
    assert!(matches!(&history.messages[2], ChatMessage::Tool { name, .. } if name == "clock"));
    assert!(
        matches!(&history.messages[3], ChatMessage::Assistant { text, .. } if text == "It is x")
    );
}

#[test]
fn a_call_without_result_gets_a_synthetic_error_result() {
    let mut log = user("u1", "hi");
    log.push(step(true));
    log.extend(call("c1", "calculator", "{\"expression\":\"1+1\"}"));
    log.push(step(false));
    log.extend(user("u2", "again"));
    let history = rebuild(&log);
    assert!(matches!(
        &history.messages[2],
        ChatMessage::Tool { tool_call_id, content, .. }
            if tool_call_id == "c1" && content.contains("error")
    ));
    assert_eq!(history.messages[3], ChatMessage::user("again"));
}

#[test]
fn folding_in_steps_gives_the_conversation_a_whole_rebuild_gives() {
    let mut log = user("u1", "hi");
    log.push(step(true));
    log.extend(call("c1", "clock", "{}"));
    log.push(step(false));
    log.push(result("c1", "{}"));
    log.push(step(true));
    log.extend(call("c2", "clock", "{}"));
    log.extend(user("u2", "and now?"));
    for split in 0..=log.len() {
        let mut folded = Folded::default();
        for (index, event) in log[..split].iter().enumerate() {
            folded.observe(index as u64 + 1, Some(event));
        }
        assert_eq!(
            folded.history(),
            rebuild(&log[..split]),
            "after {split} events"
        );
        for (index, event) in log.iter().enumerate().skip(split) {
            folded.observe(index as u64 + 1, Some(event));
        }
        assert_eq!(folded.last_seq(), log.len() as u64);
        assert_eq!(folded.history(), rebuild(&log), "split at {split}");
    }
}

#[test]
fn an_agui_clients_messages_and_results_come_from_the_runs_input() {
    let started = |messages: serde_json::Value| {
        ev(EventBody::RunStarted {
            thread_id: "t".into(),
            run_id: "r".into(),
            parent_run_id: None,
            input: Some(serde_json::json!({
                "messages": messages,
                "tools": [{"name": "show_card", "description": "Shows a card"}],
            })),
        })
    };
    let mut events = vec![started(serde_json::json!([
        {"id": "u1", "role": "user", "content": "Show a card"}
    ]))];
    events.push(step(true));
    events.extend(call("c1", "show_card", "{}"));
    events.push(step(false));
    let paused = rebuild(&events);
    assert_eq!(
        paused.pending.len(),
        1,
        "the client's call has no result yet"
    );
    assert_eq!(paused.client_tools[0].name, "show_card");
    events.push(started(serde_json::json!([
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "shown"}
    ])));
    let resumed = rebuild(&events);
    assert!(resumed.pending.is_empty());
    assert_eq!(
        resumed.messages.first(),
        Some(&ChatMessage::user("Show a card"))
    );
    assert_eq!(
        resumed.messages.last(),
        Some(&ChatMessage::Tool {
            tool_call_id: "c1".into(),
            name: "show_card".into(),
            content: "shown".into()
        })
    );
}
