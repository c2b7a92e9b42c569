//! How much of a conversation each model may be sent, and what happens to the rest.
//!
//! A budget is per model, because a session may pick another model than the engine's
//! own (`tandem.model_selected`): a model's own override (`--model-context-tokens
//! NAME=TOKENS`, a name ending in `*` matching a prefix) wins over `--context-tokens`,
//! which wins over the model's known window less the tokens kept for its answer
//! (`--max-tokens`). Offline engines have no known window. The settings are the config's
//! [`ContextPolicy`]; the run applies them ([`crate::agent::run::view`]).

use super::known_window;
use crate::config::context::ContextPolicy;

/// The budget of a call to `model` under `policy`, in estimated tokens; `None`:
/// everything is sent.
pub fn budget_for(policy: &ContextPolicy, model: &str) -> Option<usize> {
    let own = policy
        .per_model
        .iter()
        .find(|(name, _)| match name.strip_suffix('*') {
            Some(prefix) => model.starts_with(prefix),
            None => name == model,
        });
    if let Some((_, tokens)) = own {
        return Some(*tokens);
    }
    if policy.tokens.is_some() {
        return policy.tokens;
    }
    if !policy.known_windows {
        return None;
    }
    known_window(model).map(|window| window.saturating_sub(policy.answer_tokens))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::context::model_budget;

    #[test]
    fn each_model_gets_its_own_budget() {
        let policy = ContextPolicy {
            per_model: vec![("gpt-4o".into(), 500), ("claude-*".into(), 900)],
            answer_tokens: 4096,
            known_windows: true,
            ..ContextPolicy::default()
        };
        assert_eq!(budget_for(&policy, "gpt-4o"), Some(500));
        assert_eq!(budget_for(&policy, "claude-haiku-4-5"), Some(900));
        assert_eq!(budget_for(&policy, "gpt-4o-mini"), Some(128_000 - 4096));
        assert_eq!(budget_for(&policy, "gpt-5"), Some(400_000 - 4096));
        assert_eq!(budget_for(&policy, "my-local-model"), None);
        let flat = ContextPolicy {
            tokens: Some(700),
            ..policy.clone()
        };
        assert_eq!(budget_for(&flat, "gpt-5"), Some(700));
        assert_eq!(budget_for(&flat, "gpt-4o"), Some(500), "an override wins");
        let offline = ContextPolicy::default();
        assert_eq!(budget_for(&offline, "claude-sonnet-4-5"), None);
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
