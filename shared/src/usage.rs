//! What model calls cost: the value of `CUSTOM tandem.usage` (one per model call, appended
//! when the call ends) and the sums a page shows per run and per session.
//!
//! Counts are tokens as the provider reported them. `inputTokens` includes cached input
//! (`cachedInputTokens` says how much of it was read from the provider's cache) and
//! `outputTokens` includes reasoning (`reasoningTokens` says how much), the way OpenAI and
//! Anthropic both bill them. `costUsd` is present when the server's price table knows the
//! model; it is fixed when the call is logged, so a later price change never rewrites
//! history.

use serde::{Deserialize, Serialize};

/// One model call's usage and cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub reasoning_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Why the model stopped: `stop`, `tool_calls`, `length` or the provider's own word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Failed attempts the provider client retried before this call's answer began.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// Usage summed over model calls (a run's, a session's or a conversation's).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
    pub cached_input_tokens: u64,
    /// The summed cost of the calls that had one.
    pub cost_usd: f64,
    /// Calls whose model had no price: the cost is then a lower bound.
    pub unpriced_calls: u32,
}

impl UsageTotals {
    /// Adds one call.
    pub fn add(&mut self, call: &CallUsage) {
        self.calls += 1;
        self.input_tokens += call.input_tokens;
        self.output_tokens += call.output_tokens;
        self.reasoning_tokens += call.reasoning_tokens;
        self.cached_input_tokens += call.cached_input_tokens;
        match call.cost_usd {
            Some(cost) if cost.is_finite() && cost >= 0.0 => self.cost_usd += cost,
            _ => self.unpriced_calls += 1,
        }
    }

    /// Whether any call was priced.
    pub fn has_cost(&self) -> bool {
        self.unpriced_calls < self.calls
    }

    /// Adds every call of `other`.
    pub fn merge(&mut self, other: &UsageTotals) {
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cost_usd += other.cost_usd;
        self.unpriced_calls += other.unpriced_calls;
    }
}

/// `GET /api/sessions/{id}/usage`: what a line of a conversation cost, and the whole
/// conversation, each model call counted once however many lines share it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionUsage {
    /// The calls of this line's whole history (the prefix it shares included).
    pub line: UsageTotals,
    /// The calls this line made itself (after the point where it parts).
    pub own: UsageTotals,
    /// The calls of every line of its conversation, each once.
    pub conversation: UsageTotals,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_has_camel_case_counts_and_no_nulls() {
        let call = CallUsage {
            model: Some("m".into()),
            input_tokens: 10,
            output_tokens: 5,
            cached_input_tokens: 4,
            ..CallUsage::default()
        };
        assert_eq!(
            serde_json::to_value(&call).unwrap(),
            json!({"model": "m", "inputTokens": 10, "outputTokens": 5,
                   "reasoningTokens": 0, "cachedInputTokens": 4})
        );
    }

    #[test]
    fn totals_add_counts_and_known_costs() {
        let mut totals = UsageTotals::default();
        let priced = CallUsage {
            input_tokens: 100,
            output_tokens: 20,
            cost_usd: Some(0.5),
            ..CallUsage::default()
        };
        totals.add(&priced);
        totals.add(&priced);
        assert!(totals.has_cost());
        totals.add(&CallUsage::default());
        assert_eq!(
            (totals.calls, totals.input_tokens, totals.output_tokens),
            (3, 200, 40)
        );
        assert_eq!((totals.cost_usd, totals.unpriced_calls), (1.0, 1));
    }
}
