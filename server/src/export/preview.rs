//! The end of a session's transcript (its newest messages) as an HTML fragment in the
//! page's own markup: what the page paints while its code is still loading (`index.html`'s
//! loader asks for it beside the history), until the live transcript is drawn and takes
//! its place.
//!
//! Built from the conversation as the model sees it ([`conversation::rebuild`]): the
//! person's messages, the agent's answers (Markdown rendered by the same `tandem-markdown`
//! the page uses, so an answer looks the same before and after), reasoning collapsed,
//! and each tool call as its card's head. Questions to the person, errors and notices are
//! left to the live page, which follows within a fraction of a second. Everything from
//! the log is escaped: the fragment is set as `innerHTML`. The classes are the page's own
//! (`web/src/components/message.rs`, `tool_call.rs`): one renamed there is renamed here
//! (the browser story `first_paint` finds the layer's rows by them).

use std::fmt::Write;

use markdown::escape_text;
use shared::Event;

use crate::agent::conversation::{self, ChatMessage, ReasoningBlock};
use crate::agent::tools::request_input;

/// The newest `newest` messages (the person's and the agent's) of the transcript of
/// `events` as HTML rows, oldest first. The layer shows the transcript's end, as the page
/// opens at it, and cannot be scrolled: older rows would only cost rendering and layout
/// before the first paint.
pub fn transcript_html(events: &[Event], newest: usize) -> String {
    let history = conversation::rebuild(events);
    let read = conversation::as_read(&history.messages);
    let rows: Vec<&ChatMessage> = read
        .iter()
        .filter(|message| !matches!(message, ChatMessage::Tool { .. }))
        .collect();
    let mut out = String::new();
    for message in &rows[rows.len().saturating_sub(newest)..] {
        match message {
            ChatMessage::User { text, attachments } => {
                out.push_str(
                    r#"<div class="row row-user"><div class="user-turn"><div class="bubble bubble-user">"#,
                );
                out.push_str(&escape_text(text));
                for attached in attachments {
                    let _ = write!(
                        out,
                        r#"<span class="first-paint-file">📎 {}</span>"#,
                        escape_text(&attached.attachment.name)
                    );
                }
                out.push_str("</div></div></div>");
            }
            ChatMessage::Assistant {
                reasoning,
                text,
                tool_calls,
            } => {
                for block in reasoning {
                    if let ReasoningBlock::Thinking { text, .. } = block {
                        if !text.trim().is_empty() {
                            let _ = write!(
                                out,
                                r#"<details class="reasoning"><summary>Reasoning</summary><div class="reasoning-text">{}</div></details>"#,
                                escape_text(text)
                            );
                        }
                    }
                }
                if !text.trim().is_empty() {
                    let _ = write!(
                        out,
                        r#"<div class="row row-assistant"><div class="answer"><div class="bubble bubble-assistant markdown">{}</div></div></div>"#,
                        markdown::to_html(text)
                    );
                }
                // Questions for a person are cards the live page draws.
                for call in tool_calls.iter().filter(|c| c.name != request_input::NAME) {
                    let _ = write!(
                        out,
                        r#"<div class="tool-call"><div class="tool-head"><span class="tool-icon" aria-hidden="true">⚙</span><span class="tool-name">{}</span></div></div>"#,
                        escape_text(&call.name)
                    );
                }
            }
            // `as_read` joined each continued answer; Tandem's word to go on is not shown.
            ChatMessage::Tool { .. } | ChatMessage::Continue => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{EventBody, TextRole};

    fn event(body: EventBody) -> Event {
        Event::at(body, 0)
    }

    fn message(role: TextRole, id: &str, text: &str) -> Vec<Event> {
        vec![
            event(EventBody::TextMessageStart {
                message_id: id.into(),
                role: Some(role),
                name: None,
            }),
            event(EventBody::TextMessageContent {
                message_id: id.into(),
                delta: text.into(),
            }),
            event(EventBody::TextMessageEnd {
                message_id: id.into(),
            }),
        ]
    }

    #[test]
    fn messages_render_in_order_in_the_pages_markup() {
        let mut events = message(TextRole::User, "u1", "What is **2+2**?");
        events.push(event(EventBody::StepStarted {
            step_name: conversation::MODEL_CALL_STEP.into(),
        }));
        events.extend(message(TextRole::Assistant, "a1", "It is **4**."));
        events.push(event(EventBody::StepFinished {
            step_name: conversation::MODEL_CALL_STEP.into(),
        }));
        let html = transcript_html(&events, usize::MAX);
        let user = html.find("bubble-user").expect("the person's message");
        let answer = html.find("bubble-assistant").expect("the answer");
        assert!(user < answer, "{html}");
        // The person's text is shown as written; the answer is Markdown.
        assert!(html.contains("What is **2+2**?"), "{html}");
        assert!(html.contains("<strong>4</strong>"), "{html}");
    }

    #[test]
    fn nothing_from_the_log_can_render_markup() {
        let mut events = message(TextRole::User, "u1", "<img src=x onerror=alert(1)>");
        events.push(event(EventBody::StepStarted {
            step_name: conversation::MODEL_CALL_STEP.into(),
        }));
        events.extend(message(
            TextRole::Assistant,
            "a1",
            "<script>alert(2)</script>",
        ));
        events.push(event(EventBody::StepFinished {
            step_name: conversation::MODEL_CALL_STEP.into(),
        }));
        let html = transcript_html(&events, usize::MAX);
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
    }

    #[test]
    fn only_the_newest_messages_are_rendered() {
        let mut events = Vec::new();
        for turn in 1..=30 {
            events.extend(message(
                TextRole::User,
                &format!("u{turn}"),
                &format!("question {turn}."),
            ));
            events.push(event(EventBody::StepStarted {
                step_name: conversation::MODEL_CALL_STEP.into(),
            }));
            events.extend(message(
                TextRole::Assistant,
                &format!("a{turn}"),
                &format!("answer {turn}."),
            ));
            events.push(event(EventBody::StepFinished {
                step_name: conversation::MODEL_CALL_STEP.into(),
            }));
        }
        let html = transcript_html(&events, 5);
        assert_eq!(html.matches(r#"class="row "#).count(), 5, "{html}");
        // The last five: the answer to 28, then 29 and 30 asked and answered.
        assert!(!html.contains("question 28."), "{html}");
        for shown in [
            "answer 28.",
            "question 29.",
            "answer 29.",
            "question 30.",
            "answer 30.",
        ] {
            assert!(html.contains(shown), "{shown} missing: {html}");
        }
        assert!(html.find("question 29.") < html.find("answer 30."));
    }

    #[test]
    fn an_empty_log_is_an_empty_fragment() {
        assert_eq!(transcript_html(&[], 10), "");
    }
}
