//! How much of a conversation each model may be sent, and what happens to the rest.
//!
//! A budget is per model, because a session may pick another model than the engine's
//! own (`tandem.model_selected`): a model's own override (`--model-context-tokens
//! NAME=TOKENS`, a name ending in `*` matching a prefix) wins over `--context-tokens`,
//! which wins over the model's known window less the tokens kept for its answer
//! (`--max-tokens`). Offline engines have no known window. It holds settings only; the
//! run applies them ([`crate::agent::view`]).

use super::known_window;

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

impl ContextPolicy {
    /// The budget of a call to `model`, in estimated tokens; `None`: everything is sent.
    pub fn budget_for(&self, model: &str) -> Option<usize> {
        let own = self
            .per_model
            .iter()
            .find(|(name, _)| match name.strip_suffix('*') {
                Some(prefix) => model.starts_with(prefix),
                None => name == model,
            });
        if let Some((_, tokens)) = own {
            return Some(*tokens);
        }
        if self.tokens.is_some() {
            return self.tokens;
        }
        if !self.known_windows {
            return None;
        }
        known_window(model).map(|window| window.saturating_sub(self.answer_tokens))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_model_gets_its_own_budget() {
        let policy = ContextPolicy {
            per_model: vec![("gpt-4o".into(), 500), ("claude-*".into(), 900)],
            answer_tokens: 4096,
            known_windows: true,
            ..ContextPolicy::default()
        };
        assert_eq!(policy.budget_for("gpt-4o"), Some(500));
        assert_eq!(policy.budget_for("claude-haiku-4-5"), Some(900));
        assert_eq!(policy.budget_for("gpt-4o-mini"), Some(128_000 - 4096));
        assert_eq!(policy.budget_for("gpt-5"), Some(400_000 - 4096));
        assert_eq!(policy.budget_for("my-local-model"), None);
        let flat = ContextPolicy {
            tokens: Some(700),
            ..policy.clone()
        };
        assert_eq!(flat.budget_for("gpt-5"), Some(700));
        assert_eq!(flat.budget_for("gpt-4o"), Some(500), "an override wins");
        let offline = ContextPolicy::default();
        assert_eq!(offline.budget_for("claude-sonnet-4-5"), None);
    }

    #[test]
    fn model_budgets_parse() {
        assert_eq!(model_budget("gpt-4o=60000"), Ok(("gpt-4o".into(), 60_000)));
        assert_eq!(model_budget(" o3 = 5 "), Ok(("o3".into(), 5)));
        assert!(model_budget("gpt-4o").is_err());
        assert!(model_budget("gpt-4o=lots").is_err());
        assert!(model_budget("=5").is_err());
    }
}
