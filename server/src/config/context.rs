//! The context window settings: how much of a conversation each model is sent
//! (`--context-tokens`, `--model-context-tokens`) and what becomes of the turns that no
//! longer fit (`--context-strategy`). [`ContextArgs::policy`] turns them into the
//! [`ContextPolicy`] the runs apply (`agent::context::policy`).

use clap::Args;

/// Context window flags and environment variables.
#[derive(Debug, Clone, Args)]
pub struct ContextArgs {
    /// Tokens the conversation a model call sends may take; older turns are left out
    /// (the log keeps them). Default: the model's known window less `--max-tokens`
    /// (OpenAI and Anthropic models Tandem knows), else everything.
    #[arg(long, env = "TANDEM_CONTEXT_TOKENS")]
    pub context_tokens: Option<usize>,
    /// Budgets of single models, `MODEL=TOKENS` (comma-separated; a name ending in `*`
    /// matches a prefix); they win over `--context-tokens` for those models.
    #[arg(long, env = "TANDEM_MODEL_CONTEXT_TOKENS", value_delimiter = ',',
          value_parser = model_budget)]
    pub model_context_tokens: Vec<(String, usize)>,
    /// What becomes of the turns that no longer fit: `drop` (left out) or `summarise`
    /// (left out, and one model call summarises them; the summary is sent ahead of the
    /// kept turns).
    #[arg(
        long,
        env = "TANDEM_CONTEXT_STRATEGY",
        value_enum,
        default_value = "drop"
    )]
    pub context_strategy: Strategy,
}

impl ContextArgs {
    /// The policy for an engine whose answers may take `answer_tokens`; `known_windows`
    /// when its models' windows are known (the real providers').
    pub fn policy(&self, answer_tokens: usize, known_windows: bool) -> ContextPolicy {
        ContextPolicy {
            strategy: self.context_strategy,
            tokens: self.context_tokens,
            per_model: self.model_context_tokens.clone(),
            answer_tokens,
            known_windows,
        }
    }
}

/// What happens to the turns that no longer fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Strategy {
    /// They are left out (the log keeps them).
    #[default]
    Drop,
    /// They are left out and one model call summarises them; the summary is sent ahead of
    /// the kept turns.
    #[value(alias = "summarize")]
    Summarise,
}

/// The context settings of every model call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextPolicy {
    pub strategy: Strategy,
    /// One budget for every model without an override of its own (`--context-tokens`).
    pub tokens: Option<usize>,
    /// Budgets of single models (`--model-context-tokens`), in the order given.
    pub per_model: Vec<(String, usize)>,
    /// Tokens kept for the answer, taken off a known window (`--max-tokens`).
    pub answer_tokens: usize,
    /// Whether the engine's models have known windows (the real providers' do).
    pub known_windows: bool,
}

/// Parses one `NAME=TOKENS` of `--model-context-tokens`.
pub fn model_budget(text: &str) -> Result<(String, usize), String> {
    let (name, tokens) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` must look like MODEL=TOKENS (gpt-4o=60000)"))?;
    let tokens = tokens
        .trim()
        .parse::<usize>()
        .map_err(|_| format!("`{text}`: the tokens must be a whole number"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("`{text}`: the model name is missing"));
    }
    Ok((name.to_string(), tokens))
}
