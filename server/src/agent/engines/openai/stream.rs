//! The Chat Completions stream decoder: each `chat.completion.chunk` becomes engine events.
//!
//! Text comes from `delta.content` (and `delta.refusal`), reasoning from
//! `delta.reasoning_content` or `delta.reasoning` (DeepSeek, vLLM, Ollama, OpenRouter),
//! tool calls from `delta.tool_calls` fragments keyed by `index`. Calls end when
//! `finish_reason` arrives; usage (the last chunk, `choices: []`) and the finish reason
//! are held until `data: [DONE]`, which completes the response. An `error` object in the
//! stream fails the call. It must not touch the network: [`sse::drive`] feeds it.

use eventsource_stream::Event as SseEvent;
use serde::Deserialize;
use serde_json::Value;
use shared::usage::CallUsage;

use crate::agent::engines::http::provider_message;
use crate::agent::engines::sse::{self, Decoder};
use crate::agent::engines::{EngineError, EngineEvent, FinishReason};
use crate::domain::new_id;

/// The data of the event that ends an OpenAI stream.
const DONE: &str = "[DONE]";

/// Reads one Chat Completions stream.
#[derive(Default)]
pub struct ChunkDecoder {
    /// Who answers, for error messages (never a URL with credentials or a key).
    provider: String,
    /// The model asked for, reported in usage when the chunks name none.
    model: String,
    calls: Vec<Call>,
    in_reasoning: bool,
    finish: Option<FinishReason>,
    usage: Option<CallUsage>,
}

/// One tool call of the response.
#[derive(Default)]
struct Call {
    /// The provider's `index` for it, if it sent one.
    index: Option<u64>,
    /// The id the provider sent, to match later fragments that repeat it.
    provider_id: Option<String>,
    id: String,
    name: String,
    /// Arguments that arrived before the name; sent once the call starts.
    held: String,
    started: bool,
    ended: bool,
}

impl ChunkDecoder {
    /// A decoder for one call to `provider` asking for `model`.
    pub fn new(provider: String, model: String) -> Self {
        Self {
            provider,
            model,
            ..Self::default()
        }
    }

    fn choice(&mut self, choice: Choice, out: &mut Vec<EngineEvent>) {
        if self.finish.is_some() {
            return;
        }
        if let Some(delta) = choice.delta {
            self.delta(delta, out);
        }
        if let Some(reason) = choice.finish_reason {
            self.close(out);
            self.finish = Some(finish_reason(&reason));
        }
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<EngineEvent>) {
        let reasoning = non_empty(delta.reasoning_content).or_else(|| non_empty(delta.reasoning));
        if let Some(reasoning) = reasoning {
            self.in_reasoning = true;
            out.push(EngineEvent::ReasoningDelta(reasoning));
        }
        for text in [delta.content, delta.refusal] {
            if let Some(text) = text.filter(|text| !text.is_empty()) {
                self.end_reasoning(out);
                out.push(EngineEvent::TextDelta(text));
            }
        }
        for fragment in delta.tool_calls.unwrap_or_default() {
            self.end_reasoning(out);
            self.fragment(fragment, out);
        }
    }

    fn fragment(&mut self, fragment: CallFragment, out: &mut Vec<EngineEvent>) {
        let provider_id = fragment.id.filter(|id| !id.is_empty());
        let function = fragment.function.unwrap_or_default();
        let name = function.name.filter(|name| !name.is_empty());
        let at = match self.find(fragment.index, provider_id.as_deref(), name.is_some()) {
            Some(at) => at,
            None => self.open(fragment.index, provider_id),
        };
        let call = &mut self.calls[at];
        if let (false, Some(name)) = (call.started, name) {
            call.name = name;
            call.start(out);
        }
        match function.arguments {
            Some(Value::String(text)) => call.arguments(text, out),
            Some(Value::Null) | None => {}
            Some(other) => call.arguments(other.to_string(), out),
        }
    }

    /// The call a fragment continues: the one at its `index` (unless the fragment names
    /// another id), else the one with its id, else the last one if the fragment is not
    /// the start of a new call.
    fn find(&self, index: Option<u64>, id: Option<&str>, named: bool) -> Option<usize> {
        let same_id = |call: &Call| match (id, &call.provider_id) {
            (Some(id), Some(known)) => id == known,
            _ => true,
        };
        if let Some(index) = index {
            let at = self
                .calls
                .iter()
                .rposition(|call| call.index == Some(index))?;
            return same_id(&self.calls[at]).then_some(at);
        }
        if let Some(id) = id {
            return self
                .calls
                .iter()
                .rposition(|c| c.provider_id.as_deref() == Some(id));
        }
        let last = self.calls.len().checked_sub(1)?;
        (!named || !self.calls[last].started).then_some(last)
    }

    fn open(&mut self, index: Option<u64>, provider_id: Option<String>) -> usize {
        // A call reusing another's id (or sending none) gets a fresh one.
        let id = match &provider_id {
            Some(id) if !self.calls.iter().any(|call| call.id == *id) => id.clone(),
            _ => new_id("call"),
        };
        self.calls.push(Call {
            index,
            provider_id,
            id,
            ..Call::default()
        });
        self.calls.len() - 1
    }

    /// Ends reasoning and every call of the response.
    fn close(&mut self, out: &mut Vec<EngineEvent>) {
        self.end_reasoning(out);
        for call in self.calls.iter_mut().filter(|call| !call.ended) {
            // A call whose name never came still starts, so the model hears it failed.
            call.start(out);
            out.push(EngineEvent::ToolCallEnd {
                id: call.id.clone(),
            });
            call.ended = true;
        }
    }

    fn end_reasoning(&mut self, out: &mut Vec<EngineEvent>) {
        if std::mem::take(&mut self.in_reasoning) {
            out.push(EngineEvent::ReasoningEnd { signature: None });
        }
    }

    /// `[DONE]`: whatever is still open closes, then usage and the finish reason.
    fn done(&mut self, out: &mut Vec<EngineEvent>) {
        self.close(out);
        out.extend(self.usage.take().map(EngineEvent::Usage));
        let reason = self.finish.take().unwrap_or(if self.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        out.push(EngineEvent::Finish(reason));
    }

    fn token_usage(&self, usage: Usage, model: Option<String>) -> CallUsage {
        CallUsage {
            provider: Some("openai".into()),
            model: Some(model.unwrap_or_else(|| self.model.clone())),
            input_tokens: usage.prompt_tokens.unwrap_or(0),
            output_tokens: usage.completion_tokens.unwrap_or(0),
            reasoning_tokens: usage
                .completion_tokens_details
                .and_then(|details| details.reasoning_tokens)
                .unwrap_or(0),
            cached_input_tokens: usage
                .prompt_tokens_details
                .and_then(|details| details.cached_tokens)
                .unwrap_or(0),
            cost_usd: None,
            finish_reason: None,
            retries: 0,
        }
    }

    fn provider_error(&self, data: &str) -> EngineError {
        let detail =
            provider_message(data).unwrap_or_else(|| data.chars().take(200).collect::<String>());
        EngineError {
            code: "provider_error",
            message: format!("{} reported an error mid-response: {detail}", self.provider),
        }
    }
}

impl Call {
    /// A piece of the arguments: sent if the call has started, held until then.
    fn arguments(&mut self, text: String, out: &mut Vec<EngineEvent>) {
        if text.is_empty() || self.ended {
            return;
        }
        if self.started {
            let id = self.id.clone();
            out.push(EngineEvent::ToolCallArgs { id, delta: text });
        } else {
            self.held.push_str(&text);
        }
    }

    fn start(&mut self, out: &mut Vec<EngineEvent>) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        out.push(EngineEvent::ToolCallStart {
            id: self.id.clone(),
            name: self.name.clone(),
        });
        if !self.held.is_empty() {
            out.push(EngineEvent::ToolCallArgs {
                id: self.id.clone(),
                delta: std::mem::take(&mut self.held),
            });
        }
    }
}

impl Decoder for ChunkDecoder {
    fn decode(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<EngineEvent>,
    ) -> Result<bool, EngineError> {
        let data = event.data.trim();
        if data == DONE {
            self.done(out);
            return Ok(true);
        }
        if event.event == "error" {
            return Err(self.provider_error(data));
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Chunk = sse::parse_data(event)?;
        if chunk.error.as_ref().is_some_and(|error| !error.is_null()) {
            return Err(self.provider_error(data));
        }
        let choices = chunk.choices.unwrap_or_default();
        for choice in choices.into_iter().filter(|c| c.index.unwrap_or(0) == 0) {
            self.choice(choice, out);
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(self.token_usage(usage, chunk.model));
        }
        Ok(false)
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        other => FinishReason::Other(other.to_string()),
    }
}

/// A reasoning field's text, if it is a non-empty string.
fn non_empty(value: Option<Value>) -> Option<String> {
    match value {
        Some(Value::String(text)) if !text.is_empty() => Some(text),
        _ => None,
    }
}

/// The fields Tandem reads of a `chat.completion.chunk`; the rest are ignored.
#[derive(Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<Usage>,
    model: Option<String>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    index: Option<u64>,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    refusal: Option<String>,
    reasoning_content: Option<Value>,
    reasoning: Option<Value>,
    tool_calls: Option<Vec<CallFragment>>,
}

#[derive(Deserialize)]
struct CallFragment {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Default, Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    completion_tokens_details: Option<UsageDetails>,
    prompt_tokens_details: Option<PromptDetails>,
}

/// How much of the prompt the provider read from its cache.
#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct UsageDetails {
    reasoning_tokens: Option<u64>,
}
