//! A session as a document to keep: Markdown for people, JSON (its AG-UI events) for
//! programs, and a zip of both with the files the messages carry ([`archive`]). All are
//! built from the event log, the way the model's conversation is.

pub mod archive;
pub mod preview;

use serde_json::{json, Value};
use shared::api::SessionSummary;
use shared::attachments::Attachment;
use shared::Event;

use crate::agent::conversation::{self, ChatMessage, ReasoningBlock};
use crate::agent::tools::request_input;

/// The session as Markdown: the title, then each message in order (a message's files as
/// links, each where `link` says it is); the agent's reasoning as a quote, tool calls with
/// their arguments and results in code blocks, and questions with the person's answers.
pub fn markdown(
    session: &SessionSummary,
    events: &[Event],
    link: impl Fn(&Attachment) -> String,
) -> String {
    let history = conversation::rebuild(events);
    let mut out = format!("# {}\n\n", one_line(&session.title));
    for message in &conversation::as_read(&history.messages) {
        match message {
            ChatMessage::User { text, attachments } => {
                out.push_str("## You\n\n");
                if !text.trim().is_empty() {
                    out.push_str(text.trim_end());
                    out.push_str("\n\n");
                }
                for attached in attachments {
                    out.push_str(&attachment_line(&attached.attachment, &link));
                }
                if !attachments.is_empty() {
                    out.push('\n');
                }
            }
            ChatMessage::Assistant {
                reasoning,
                text,
                tool_calls,
            } => {
                out.push_str("## Agent\n\n");
                for block in reasoning {
                    if let ReasoningBlock::Thinking { text, .. } = block {
                        if !text.trim().is_empty() {
                            out.push_str(&quote(&format!("Reasoning: {}", text.trim())));
                        }
                    }
                }
                if !text.trim().is_empty() {
                    out.push_str(text.trim_end());
                    out.push_str("\n\n");
                }
                for call in tool_calls {
                    out.push_str(&tool_call(&call.name, &call.arguments));
                }
            }
            ChatMessage::Tool { name, content, .. } if name == request_input::NAME => {
                out.push_str(&format!("**Answer:** {}\n\n", answer_text(content)));
            }
            ChatMessage::Tool { name, content, .. } => {
                out.push_str(&format!("Result of `{name}`:\n\n"));
                out.push_str(&fenced(&pretty(content), "json"));
            }
            // `as_read` joined each continued answer; Tandem's word to go on is not shown.
            ChatMessage::Continue => {}
        }
    }
    out.push_str(&feedback_section(events));
    out
}

/// The ratings the session's answers got (each user's latest per answer), as a closing
/// section: which way, on which answer (its first words), with the comment.
fn feedback_section(events: &[Event]) -> String {
    use shared::feedback::{FeedbackEvent, Rating};
    use shared::{EventBody, TextRole};
    let mut answers: Vec<(String, String)> = Vec::new();
    let mut ratings: Vec<FeedbackEvent> = Vec::new();
    let mut run = String::new();
    let mut assistant: Vec<String> = Vec::new();
    for event in events {
        match &event.body {
            EventBody::RunStarted { run_id, .. } => run.clone_from(run_id),
            EventBody::TextMessageStart {
                message_id,
                role: Some(TextRole::Assistant),
                ..
            } => assistant.push(message_id.clone()),
            EventBody::TextMessageContent { message_id, delta }
                if assistant.contains(message_id) =>
            {
                match answers.iter_mut().find(|(of, _)| *of == run) {
                    Some((_, text)) => text.push_str(delta),
                    None => answers.push((run.clone(), delta.clone())),
                }
            }
            EventBody::Custom { name, value } if name == shared::custom::FEEDBACK => {
                if let Ok(given) = serde_json::from_value::<FeedbackEvent>(value.clone()) {
                    ratings.retain(|r| !(r.run_id == given.run_id && r.user == given.user));
                    ratings.push(given);
                }
            }
            _ => {}
        }
    }
    if ratings.is_empty() {
        return String::new();
    }
    let mut out = "## Feedback\n\n".to_string();
    for given in ratings {
        let way = match given.rating {
            Rating::Up => "👍 Good answer",
            Rating::Down => "👎 Bad answer",
        };
        let answer = answers
            .iter()
            .find(|(run, _)| *run == given.run_id)
            .map(|(_, text)| one_line(&text.chars().take(80).collect::<String>()))
            .unwrap_or_else(|| format!("run {}", given.run_id));
        out.push_str(&format!("- {way} ({}): “{answer}…”", given.user));
        if let Some(comment) = &given.comment {
            out.push_str(&format!(" — {}", one_line(comment)));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The session as JSON: its summary and its AG-UI events in `seq` order.
pub fn json(session: &SessionSummary, events: &[Event]) -> Value {
    json!({
        "session": session,
        "events": events,
    })
}

/// Every attachment the session's messages carry, each once, in order.
pub fn attachments(events: &[Event]) -> Vec<Attachment> {
    let mut found: Vec<Attachment> = Vec::new();
    for message in conversation::rebuild(events).messages {
        if let ChatMessage::User { attachments, .. } = message {
            for attached in attachments {
                if !found.iter().any(|a| a.id == attached.attachment.id) {
                    found.push(attached.attachment);
                }
            }
        }
    }
    found
}

/// An attachment as a Markdown list item: an image shown, any other file linked.
fn attachment_line(attachment: &Attachment, link: impl Fn(&Attachment) -> String) -> String {
    let name = attachment.name.replace(['[', ']'], "");
    let target = link(attachment).replace(' ', "%20");
    let size = crate::agent::attached::content::size(attachment.bytes);
    let shown = if attachment.media_type.starts_with("image/") {
        "!"
    } else {
        ""
    };
    format!(
        "- {shown}[{name}]({target}) ({}, {size})\n",
        attachment.media_type
    )
}

fn tool_call(name: &str, arguments: &str) -> String {
    if name == request_input::NAME {
        let prompt = serde_json::from_str::<Value>(arguments)
            .ok()
            .and_then(|args| {
                args.get("prompt")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| "(a question)".into());
        return quote(&format!("**Question:** {prompt}"));
    }
    format!(
        "Called `{name}` with:\n\n{}",
        fenced(&pretty(arguments), "json")
    )
}

/// What a person answered, from a `request_input` result.
fn answer_text(content: &str) -> String {
    let Ok(result) = serde_json::from_str::<Value>(content) else {
        return content.to_string();
    };
    match (
        result.get("status").and_then(Value::as_str),
        result.get("payload"),
    ) {
        (Some("resolved"), Some(payload)) => payload_text(payload),
        (Some("cancelled"), _) => "(not answered)".into(),
        _ => format!("`{result}`"),
    }
}

/// A payload as a person would say it: the text or choice of a question, yes or no (and the
/// comment) of a confirm, else the JSON.
fn payload_text(payload: &Value) -> String {
    let field = |name: &str| payload.get(name).and_then(Value::as_str);
    if let Value::String(text) = payload {
        return text.clone();
    }
    if let Some(text) = field("text").or_else(|| field("choice")) {
        return text.to_string();
    }
    if let Some(approved) = payload.get("approved").and_then(Value::as_bool) {
        let verdict = if approved { "Yes" } else { "No" };
        return match field("comment").or_else(|| field("reason")) {
            Some(comment) => format!("{verdict} — {comment}"),
            None => verdict.to_string(),
        };
    }
    format!("`{payload}`")
}

fn pretty(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| text.to_string())
}

/// A fenced code block whose fence is longer than any backtick run inside.
fn fenced(code: &str, lang: &str) -> String {
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n\n", code.trim_end())
}

fn quote(text: &str) -> String {
    let mut out: String = text.lines().map(|line| format!("> {line}\n")).collect();
    out.push('\n');
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shared::api::SessionStatus;

    fn summary() -> SessionSummary {
        SessionSummary {
            id: "s".into(),
            title: "Trip\nplan".into(),
            status: SessionStatus::Idle,
            last_seq: 0,
            created_at: 0,
            updated_at: 0,
            parent_id: None,
            fork_seq: None,
            conversation_id: "s".into(),
            snippet: None,
        }
    }

    fn events(values: Vec<Value>) -> Vec<Event> {
        values
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect()
    }

    #[test]
    fn a_conversation_reads_as_markdown() {
        let log = events(vec![
            json!({"type": "RUN_STARTED", "threadId": "s", "runId": "r"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "u", "delta": "What is 6*7?"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "u"}),
            json!({"type": "STEP_STARTED", "stepName": "model_call"}),
            json!({"type": "REASONING_START", "messageId": "rs"}),
            json!({"type": "REASONING_MESSAGE_START", "messageId": "rm", "role": "reasoning"}),
            json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "rm", "delta": "Multiply."}),
            json!({"type": "REASONING_MESSAGE_END", "messageId": "rm"}),
            json!({"type": "REASONING_END", "messageId": "rs"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "calculator"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{\"expression\":\"6*7\"}"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "c"}),
            json!({"type": "STEP_FINISHED", "stepName": "model_call"}),
            json!({"type": "TOOL_CALL_RESULT", "messageId": "t", "toolCallId": "c", "content": "{\"value\":42}"}),
            json!({"type": "STEP_STARTED", "stepName": "model_call"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "It is **42**."}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "a"}),
            json!({"type": "STEP_FINISHED", "stepName": "model_call"}),
            json!({"type": "RUN_FINISHED", "threadId": "s", "runId": "r"}),
        ]);
        let text = markdown(&summary(), &log, |file| {
            format!("/api/attachments/{}", file.id)
        });
        assert!(
            text.starts_with("# Trip plan\n\n## You\n\nWhat is 6*7?\n\n## Agent\n\n"),
            "{text}"
        );
        assert!(text.contains("> Reasoning: Multiply.\n"), "{text}");
        assert!(
            text.contains(
                "Called `calculator` with:\n\n```json\n{\n  \"expression\": \"6*7\"\n}\n```"
            ),
            "{text}"
        );
        assert!(
            text.contains("Result of `calculator`:\n\n```json\n{\n  \"value\": 42\n}\n```"),
            "{text}"
        );
        assert!(text.contains("It is **42**."), "{text}");
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fenced("a ```` b", ""), "`````\na ```` b\n`````\n\n");
    }

    #[test]
    fn answers_read_as_text() {
        assert_eq!(
            answer_text(r#"{"status":"resolved","payload":"Lisbon"}"#),
            "Lisbon"
        );
        assert_eq!(answer_text(r#"{"status":"cancelled"}"#), "(not answered)");
        assert_eq!(
            answer_text(r#"{"status":"resolved","payload":{"text":"Porto"}}"#),
            "Porto"
        );
        assert_eq!(
            answer_text(
                r#"{"status":"resolved","payload":{"approved":false,"comment":"too dear"}}"#
            ),
            "No — too dear"
        );
        assert_eq!(
            answer_text(r#"{"status":"resolved","payload":{"n":2}}"#),
            "`{\"n\":2}`"
        );
    }
}
