//! The share-link filter, walked over every kind of event the log can hold.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use shared::{custom, Event, EventBody};

use super::{samples, Visibility};
use crate::store::FramePage;

/// Every setting a link can have.
fn links() -> Vec<Visibility> {
    (0..32)
        .map(|bits| Visibility {
            hide_reasoning: bits & 1 != 0,
            hide_tool_arguments: bits & 2 != 0,
            hide_attachments: bits & 4 != 0,
            hide_state: bits & 8 != 0,
            show_instructions: bits & 16 != 0,
        })
        .collect()
}

const HIDES_ARGUMENTS: Visibility = Visibility {
    hide_reasoning: false,
    hide_tool_arguments: true,
    hide_attachments: false,
    hide_state: false,
    show_instructions: false,
};

/// A link that shows everything a link can show.
const SHOWS_ALL: Visibility = Visibility {
    hide_reasoning: false,
    hide_tool_arguments: false,
    hide_attachments: false,
    hide_state: false,
    show_instructions: true,
};

/// How many variants `EventBody` has.
const VARIANTS: usize = 24;

/// A number for each `EventBody` variant. No wildcard: a new variant does not compile
/// until it has a number here, and then fails `every_kind_of_event_has_a_sample` until
/// it has a sample, which the walk then holds to the rules.
fn variant(body: &EventBody) -> usize {
    match body {
        EventBody::RunStarted { .. } => 0,
        EventBody::RunFinished { .. } => 1,
        EventBody::RunError { .. } => 2,
        EventBody::StepStarted { .. } => 3,
        EventBody::StepFinished { .. } => 4,
        EventBody::TextMessageStart { .. } => 5,
        EventBody::TextMessageContent { .. } => 6,
        EventBody::TextMessageEnd { .. } => 7,
        EventBody::ReasoningStart { .. } => 8,
        EventBody::ReasoningMessageStart { .. } => 9,
        EventBody::ReasoningMessageContent { .. } => 10,
        EventBody::ReasoningMessageEnd { .. } => 11,
        EventBody::ReasoningEnd { .. } => 12,
        EventBody::ReasoningEncryptedValue { .. } => 13,
        EventBody::ToolCallStart { .. } => 14,
        EventBody::ToolCallArgs { .. } => 15,
        EventBody::ToolCallEnd { .. } => 16,
        EventBody::ToolCallResult { .. } => 17,
        EventBody::Custom { .. } => 18,
        EventBody::StateSnapshot { .. } => 19,
        EventBody::StateDelta { .. } => 20,
        EventBody::Unknown => 21,
        EventBody::ActivitySnapshot { .. } => 22,
        EventBody::ActivityDelta { .. } => 23,
    }
}

/// The words of a JSON text (runs of letters, digits and `_`), so markers are found
/// inside strings that hold JSON too.
fn words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect()
}

/// Whether a link may show a sample's word; `None` if the word is not a marker.
fn may_leave(word: &str, link: &Visibility) -> Option<bool> {
    match word.split_once('_').map_or("", |(prefix, _)| prefix) {
        "shown" => Some(true),
        "args" => Some(!link.hide_tool_arguments),
        "thought" => Some(!link.hide_reasoning),
        "files" => Some(!link.hide_attachments),
        "state" => Some(!link.hide_state),
        "recap" => Some(link.hides_nothing()),
        "told" => Some(link.show_instructions),
        "canary" => Some(false),
        "" if (7000..8000).contains(&word.parse::<u32>().unwrap_or(0)) => Some(true),
        _ => None,
    }
}

#[test]
fn every_kind_of_event_has_a_sample() {
    let samples = samples::all();
    let mut seen = [false; VARIANTS];
    for sample in &samples {
        if let Ok(event) = serde_json::from_value::<Event>(sample.clone()) {
            seen[variant(&event.body)] = true;
        }
    }
    assert_eq!(seen, [true; VARIANTS], "a variant without a sample");
    for name in custom::ALL {
        assert!(
            samples
                .iter()
                .any(|s| s["type"] == "CUSTOM" && s["name"] == *name),
            "no sample of CUSTOM {name}"
        );
    }
}

#[test]
fn no_field_leaves_unless_the_link_shows_it_and_what_it_shows_leaves() {
    for link in &links() {
        for sample in samples::all() {
            let input = sample.to_string();
            let shown = link.event(&sample);
            let output = shown.as_ref().map(Value::to_string).unwrap_or_default();
            let left = words(&output);
            for word in words(&input) {
                if let Some(expected) = may_leave(word, link) {
                    assert_eq!(
                        left.contains(word),
                        expected,
                        "{word} with {link:?}\nin:  {input}\nout: {output}"
                    );
                }
            }
            if let Some(shown) = shown {
                assert_eq!(shown["type"], sample["type"], "{output}");
                assert_eq!(shown["timestamp"], sample["timestamp"], "{output}");
            }
        }
    }
}

#[test]
fn every_custom_name_is_shown_to_a_link_that_hides_nothing() {
    let samples = samples::all();
    let customs = samples.iter().filter(|s| s["type"] == "CUSTOM");
    for sample in customs.filter(|s| s["value"].is_object()) {
        let name = sample["name"].as_str().unwrap();
        let shown = SHOWS_ALL.event(sample);
        assert_eq!(shown.is_some(), custom::ALL.contains(&name), "{sample}");
    }
}

#[test]
fn a_link_that_hides_arguments_shows_of_a_result_how_the_call_ended_and_nothing_it_said() {
    let result = |content: &str| {
        json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "role": "tool",
               "content": content})
    };
    let edited = json!({"result": {"written": "a.txt", "bytes": 2},
                        "argumentsEditedByThePerson": {"path": "a.txt", "content": "secret"}});
    let event = result(&edited.to_string());
    assert_eq!(
        HIDES_ARGUMENTS.event(&event).unwrap(),
        result(r#"{"status":"hidden"}"#)
    );
    assert_eq!(Visibility::default().event(&event), Some(event));
    let plain = result(r#"{"expression":"1+1","result":2}"#);
    assert_eq!(
        HIDES_ARGUMENTS.event(&plain),
        Some(result(r#"{"status":"hidden"}"#))
    );
    let failed = result(r#"{"error":"no attachment att_secret"}"#);
    assert_eq!(
        HIDES_ARGUMENTS.event(&failed),
        Some(result(
            r#"{"status":"hidden","error":"hidden by the share link"}"#
        ))
    );
}

#[test]
fn a_link_that_hides_arguments_shows_how_far_a_tool_got_and_not_its_words() {
    let [snapshot, delta] = <[Value; 2]>::try_from(samples::activity()).unwrap();
    let shown = HIDES_ARGUMENTS.event(&snapshot).unwrap();
    assert_eq!(
        shown["content"],
        json!({"toolCallId": "shown_c1", "progress": 7020, "total": 7021})
    );
    let shown = HIDES_ARGUMENTS.event(&delta).unwrap();
    assert_eq!(
        shown["patch"],
        json!([{"op": "replace", "path": "/progress", "value": 7022}])
    );
    assert_eq!(Visibility::default().event(&delta), Some(delta));
}

#[test]
fn an_ag_ui_input_keeps_only_the_person_s_messages_and_stays_a_run_agent_input() {
    let started = json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r",
                         "input": samples::agui_input()});
    let shown = Visibility::default().event(&started).unwrap();
    assert_eq!(
        shown["input"],
        json!({"threadId": "shown_thread", "runId": "shown_client_run",
            "messages": [
                {"id": "shown_u1", "role": "user", "content": [{"type": "text", "text": "shown_hello"}]},
                {"id": "shown_t1", "role": "tool", "toolCallId": "shown_c9", "content": "args_result"}],
            "tools": [], "context": []})
    );
    let read_back = shared::run_input::input_messages(Some(&shown["input"]));
    let original = shared::run_input::input_messages(Some(&started["input"]));
    assert_eq!(read_back, original, "the page reads the same messages");
}

#[test]
fn questions_keep_their_controls_and_approvals_lose_only_their_arguments() {
    let finished = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
        "outcome": {"type": "interrupt", "interrupts": samples::interrupts()}});
    let shown = HIDES_ARGUMENTS.event(&finished).unwrap();
    let interrupts = &shown["outcome"]["interrupts"];
    let mut approval = samples::interrupts()[0].clone();
    approval["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("arguments");
    assert_eq!(interrupts[0], approval);
    assert_eq!(
        interrupts[1]["metadata"],
        json!({"kind": "choice", "choices": ["shown_a", "shown_b"]})
    );
    assert_eq!(interrupts[2], samples::interrupts()[2]);
    assert_eq!(
        interrupts[3]["metadata"],
        json!({"kind": "client_tools", "toolCalls": [{"id": "shown_c2", "name": "shown_show_card"}]})
    );
    assert!(
        interrupts[4].get("metadata").is_none(),
        "an unknown kind: {shown}"
    );
    let everything = Visibility::default().event(&finished).unwrap();
    let approval = &everything["outcome"]["interrupts"][0];
    assert_eq!(approval, &samples::interrupts()[0]);
}

#[test]
fn usage_fields_are_exactly_those_of_the_usage_types() {
    let keys =
        |value: Value| -> Vec<String> { value.as_object().unwrap().keys().cloned().collect() };
    let call = shared::usage::CallUsage {
        provider: Some("p".into()),
        model: Some("m".into()),
        cost_usd: Some(1.0),
        finish_reason: Some("stop".into()),
        retries: 1,
        ..Default::default()
    };
    assert_eq!(
        keys(serde_json::to_value(call).unwrap()),
        super::custom::CALL_USAGE
    );
    let run = shared::TokenUsage {
        provider: Some("p".into()),
        model: Some("m".into()),
        input_tokens: Some(1),
        output_tokens: Some(1),
        reasoning_tokens: Some(1),
    };
    assert_eq!(
        keys(serde_json::to_value(run).unwrap()),
        super::runs::TOKEN_USAGE
    );
}

#[test]
fn frames_pass_unchanged_unless_something_in_them_is_hidden() {
    let text = FramePage::frame(
        4,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m","timestamp":3}"#,
    );
    for link in &links() {
        assert_eq!(link.frame(text.clone()), Some(text.clone()));
    }
    let args = FramePage::frame(
        5,
        r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"x"}"#,
    );
    assert_eq!(HIDES_ARGUMENTS.frame(args.clone()), None);
    assert_eq!(Visibility::default().frame(args.clone()), Some(args));

    let extra = FramePage::frame(
        6,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m","later":1}"#,
    );
    assert_eq!(
        Visibility::default().frame(extra).as_deref(),
        Some(r#"{"kind":"event","seq":6,"event":{"type":"TEXT_MESSAGE_END","messageId":"m"}}"#)
    );
    let caught_up = bytestring::ByteString::from(r#"{"kind":"caught_up","seq":6}"#);
    assert_eq!(
        Visibility::default().frame(caught_up.clone()),
        Some(caught_up)
    );
    let unknown = bytestring::ByteString::from(r#"{"kind":"later","secret":1}"#);
    assert_eq!(Visibility::default().frame(unknown), None);
}
