//! The system prompt every model call starts with: Tandem's default (how to work with the
//! person, its tools, MCP servers' and the client application's tools, when to ask with
//! `request_input`), or the operator's own
//! (`--system-prompt` / `--system-prompt-file`), then the person's instructions (their own
//! and the conversation's), plus what an AG-UI client passed as `context` for its run.

use serde_json::Value;

use super::instructions::Given;

/// The prompt runs get unless the operator sets one.
pub const DEFAULT: &str = "\
You are an assistant working in tandem with a person through Tandem. The person sees \
everything you write, your reasoning and every tool call as it happens.

- Answer directly and concisely; use Markdown where it helps (lists, tables, code blocks).
- Use your tools when they give a better answer than guessing; a tool result with an \
`error` tells you what went wrong. Besides Tandem's own tools you may have tools of \
connected MCP servers (named `server__tool`; a server may be down for a while, so \
an error saying so is worth reporting, not retrying at once) and tools of the \
application the person is using, which that application runs itself: use them as \
their descriptions say.
- When you need something only the person knows or must decide (a choice, a missing \
detail, a confirmation before something that cannot be undone), call `request_input` \
instead of guessing: `kind` `text` for free text, `choice` with `choices`, `confirm` for \
yes/no, `form` with a JSON Schema for several fields. The run pauses until they answer; \
their answer arrives as the tool's result. Ask one question at a time.
- Some tools wait for the person's approval before they run; a rejection comes back as \
the result, with their reason if they gave one. Respect it.";

/// What the model is told, as the person's message, when the person continues an answer
/// they stopped ([`super::conversation::ChatMessage::Continue`]).
pub const CONTINUE: &str = "Your previous answer was stopped before it was complete. \
Continue it exactly where it stopped, without repeating anything you already wrote.";

/// The system prompt every run starts from, as the operator chose it.
pub fn configured(setting: crate::config::SystemPrompt) -> Option<std::sync::Arc<str>> {
    use crate::config::SystemPrompt;
    match setting {
        SystemPrompt::Default => Some(DEFAULT.into()),
        SystemPrompt::Own(text) => Some(text.into()),
        SystemPrompt::Off => None,
    }
}

/// The system prompt of one model call: the configured one, the person's own instructions
/// and the conversation's, the client's context entries (`[{description, value}]` from a
/// run's AG-UI input), if any, then the shared state when it is not empty.
pub fn for_call(
    configured: Option<&str>,
    instructions: &Given,
    context: Option<&Value>,
    state: &Value,
) -> Option<String> {
    let mut prompt = configured.unwrap_or_default().to_string();
    let told = [
        (
            "The person's instructions, for all their conversations:",
            &instructions.person,
        ),
        (
            "The person's instructions for this conversation:",
            &instructions.conversation,
        ),
    ];
    for (heading, text) in told.into_iter().filter(|(_, text)| !text.is_empty()) {
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(heading);
        prompt.push('\n');
        prompt.push_str(text);
    }
    let entries = context.and_then(Value::as_array).into_iter().flatten();
    let lines: Vec<String> = entries
        .filter_map(|entry| {
            let description = entry.get("description")?.as_str()?;
            let value = entry.get("value")?.as_str()?;
            Some(format!("- {description}: {value}"))
        })
        .collect();
    if !lines.is_empty() {
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str("Context from the application the person is using:\n");
        prompt.push_str(&lines.join("\n"));
    }
    if !shared::state::is_empty(state) {
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(
            "The shared state, which the person sees beside the conversation and may change \
             (change it with `update_state`):\n```json\n",
        );
        prompt.push_str(&serde_json::to_string_pretty(state).unwrap_or_default());
        prompt.push_str("\n```");
    }
    (!prompt.trim().is_empty()).then_some(prompt)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_clients_context_follows_the_configured_prompt() {
        let context = json!([{"description": "The page", "value": "Trip planner"}, {"bad": 1}]);
        let empty = json!({});
        let prompt =
            for_call(Some("Be brief."), &Given::default(), Some(&context), &empty).unwrap();
        assert_eq!(
            prompt,
            "Be brief.\n\nContext from the application the person is using:\n- The page: Trip planner"
        );
        assert_eq!(
            for_call(Some(""), &Given::default(), None, &empty),
            None,
            "an empty prompt sends none"
        );
        assert!(for_call(None, &Given::default(), Some(&context), &empty)
            .unwrap()
            .starts_with("Context"));
    }

    #[test]
    fn the_persons_instructions_follow_the_servers_prompt_their_own_first() {
        let given = Given {
            person: "Answer in French.".into(),
            conversation: "We are planning a trip.".into(),
        };
        let context = json!([{"description": "The page", "value": "Trip planner"}]);
        let prompt = for_call(Some("Be brief."), &given, Some(&context), &json!({})).unwrap();
        assert_eq!(
            prompt,
            "Be brief.\n\nThe person's instructions, for all their conversations:\nAnswer in \
             French.\n\nThe person's instructions for this conversation:\nWe are planning a \
             trip.\n\nContext from the application the person is using:\n- The page: Trip \
             planner"
        );
        let only_conversation = Given {
            conversation: "Be terse.".into(),
            ..Given::default()
        };
        assert_eq!(
            for_call(None, &only_conversation, None, &json!({})).as_deref(),
            Some("The person's instructions for this conversation:\nBe terse.")
        );
    }

    #[test]
    fn a_state_that_is_not_empty_comes_last() {
        let state = json!({"plan": [{"step": "Pack", "status": "done"}]});
        let prompt = for_call(Some("Be brief."), &Given::default(), None, &state).unwrap();
        assert!(
            prompt.starts_with("Be brief.\n\nThe shared state"),
            "{prompt}"
        );
        assert!(
            prompt.ends_with("\"status\": \"done\"\n    }\n  ]\n}\n```"),
            "{prompt}"
        );
    }
}
