//! The context window settings: how much of a conversation each model is sent
//! (`--context-tokens`, `--model-context-tokens`) and what becomes of the turns that no
//! longer fit (`--context-strategy`). [`ContextArgs::policy`] turns them into the
//! [`ContextPolicy`] the runs apply.

use clap::Args;

use crate::agent::context::policy::{model_budget, ContextPolicy, Strategy};

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
