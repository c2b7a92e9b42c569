//! Summaries of the turns that left the model's view (`--context-strategy summarise`).
//!
//! It owns what a summary call asks (the instruction, the dropped turns written out as one
//! plain transcript, so no tool call can lose its result and every provider accepts it),
//! the offline engines' deterministic summary, the text a model call sends it under, and
//! the `CUSTOM tandem.context_summary` event that records it. It does no I/O: the run
//! makes the call ([`crate::agent::run::view`]) and the engines send the text in their shape.

use serde_json::json;
use shared::EventBody;

use crate::agent::conversation::ChatMessage;
use crate::agent::engines::ModelRequest;

/// What the summary call's system prompt asks for.
pub const INSTRUCTION: &str = "You write the memory of a conversation between a person and an \
AI assistant that has grown too long for the assistant's context window. Summarise the part \
given to you (and the earlier summary, if there is one) so the assistant can carry on without \
it: keep facts, decisions, names, numbers, files, tool results that still matter, and what the \
person wants or still waits for; leave out pleasantries. Write plain prose, at most 200 words. \
Do not answer the person.";

/// The words a model call puts before the summary it sends ahead of the kept turns.
pub const PREAMBLE: &str = "Summary of the earlier part of this conversation, which no longer \
fits your context window (the person's messages after it follow in full):";

/// The longest summary kept, in bytes (about 1,000 tokens); a longer one is cut.
pub const MAX_BYTES: usize = 4_000;

/// The longest a single message is quoted in a summary call's transcript, in bytes.
const MAX_QUOTE: usize = 2_000;

/// What a summary call is given: the summary so far (when the view moved on from an
/// earlier one) and the messages that left the view since.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    pub previous: Option<String>,
    pub messages: Vec<ChatMessage>,
    /// The model the session picked, if not the engine's own.
    pub model: Option<String>,
}

impl SummaryRequest {
    /// The turns written out as one transcript (the earlier summary first).
    pub fn transcript(&self) -> String {
        let mut out = String::new();
        if let Some(previous) = &self.previous {
            out.push_str(&format!("Summary so far:\n{previous}\n\nWhat followed:\n"));
        }
        for message in &self.messages {
            let line = match message {
                ChatMessage::User { text, .. } => format!("Person: {}", quote(text)),
                ChatMessage::Assistant {
                    text, tool_calls, ..
                } => {
                    let mut line = format!("Assistant: {}", quote(text));
                    for call in tool_calls {
                        line.push_str(&format!(
                            "\nAssistant called {}({})",
                            call.name,
                            quote(&call.arguments)
                        ));
                    }
                    line
                }
                ChatMessage::Tool { name, content, .. } => {
                    format!("Result of {name}: {}", quote(content))
                }
                ChatMessage::Continue => "Person: (asked the assistant to go on)".into(),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// The model call a provider engine makes of it: the instruction as the system
    /// prompt, the transcript as the one user message, no tools.
    pub fn model_request(&self) -> ModelRequest {
        ModelRequest {
            temperature: None,
            conversation: vec![ChatMessage::user(self.transcript())],
            tools: Vec::new(),
            model_call_index: 0,
            system: Some(INSTRUCTION.to_string()),
            model: self.model.clone(),
            summary: None,
        }
    }
}

/// The summary the offline engines (`demo`, `script`) give: the same for the same turns.
pub fn offline(request: &SummaryRequest) -> String {
    let asked: Vec<String> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { text, .. } => Some(format!("“{}”", short(text, 60))),
            _ => None,
        })
        .collect();
    let mut tools: Vec<&str> = request
        .messages
        .iter()
        .flat_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls.iter().collect(),
            _ => Vec::new(),
        })
        .map(|call| call.name.as_str())
        .collect();
    tools.dedup();
    let mut text = request
        .previous
        .as_ref()
        .map_or_else(String::new, |previous| format!("{previous} "));
    text.push_str(&format!("Then the person said {}", asked.join(", ")));
    if !tools.is_empty() {
        text.push_str(&format!("; the assistant used {}", tools.join(", ")));
    }
    text.push('.');
    cut(text)
}

/// A summary no longer than [`MAX_BYTES`] (cut at a character boundary).
pub fn cut(mut text: String) -> String {
    if text.len() > MAX_BYTES {
        let end = (0..=MAX_BYTES)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The text a model call sends ahead of the kept turns.
pub fn framed(summary: &str) -> String {
    format!("{PREAMBLE}\n\n{summary}")
}

/// The event that records a summary of the conversation before the person's
/// `user_index`-th message (`messages` of it).
pub fn summary_event(user_index: usize, summary: &str, messages: usize) -> EventBody {
    EventBody::Custom {
        name: shared::custom::CONTEXT_SUMMARY.into(),
        value: json!({
            "firstUserMessage": user_index,
            "summary": summary,
            "summarisedMessages": messages,
        }),
    }
}

fn quote(text: &str) -> String {
    short(text, MAX_QUOTE).replace('\n', " ")
}

/// At most `max` bytes of `text`, with an ellipsis when cut.
fn short(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let end = (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::ToolCallRecord;

    fn request(previous: Option<&str>) -> SummaryRequest {
        SummaryRequest {
            previous: previous.map(str::to_string),
            messages: vec![
                ChatMessage::user("What is 6*7?"),
                ChatMessage::Assistant {
                    reasoning: vec![],
                    text: String::new(),
                    tool_calls: vec![ToolCallRecord {
                        id: "c1".into(),
                        name: "calculator".into(),
                        arguments: r#"{"expression":"6*7"}"#.into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "c1".into(),
                    name: "calculator".into(),
                    content: r#"{"result":42}"#.into(),
                },
            ],
            model: None,
        }
    }

    #[test]
    fn the_transcript_keeps_every_call_with_its_result() {
        let text = request(Some("They met.")).transcript();
        assert!(text.starts_with("Summary so far:\nThey met."), "{text}");
        assert!(text.contains("Person: What is 6*7?"));
        assert!(text.contains(r#"Assistant called calculator({"expression":"6*7"})"#));
        assert!(text.contains(r#"Result of calculator: {"result":42}"#));
        let call = request(None).model_request();
        assert_eq!(call.system.as_deref(), Some(INSTRUCTION));
        assert!(call.tools.is_empty() && call.conversation.len() == 1);
    }

    #[test]
    fn the_offline_summary_is_deterministic_and_bounded() {
        let one = offline(&request(None));
        assert_eq!(
            one,
            "Then the person said “What is 6*7?”; the assistant used calculator."
        );
        assert_eq!(one, offline(&request(None)));
        assert!(offline(&request(Some("Earlier."))).starts_with("Earlier. Then"));
        let long = cut("é".repeat(MAX_BYTES));
        assert!(long.len() <= MAX_BYTES + '…'.len_utf8());
    }
}
