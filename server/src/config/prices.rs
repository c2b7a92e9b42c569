//! The price table (`--prices FILE`, `TANDEM_PRICES`): what each model's tokens cost, so
//! every model call is logged with its cost and the page can show it.
//!
//! The file is JSON, US dollars per million tokens, keyed by the model name the provider
//! reports; a key ending in `*` matches every model starting with the rest (the longest
//! such key wins, an exact name wins over all):
//!
//! ```json
//! { "gpt-4.1-mini*": { "input": 0.4, "cachedInput": 0.1, "output": 1.6 },
//!   "claude-sonnet-4*": { "input": 3, "cachedInput": 0.3, "output": 15 } }
//! ```
//!
//! Cached input is billed at `cachedInput` (else `input`); reasoning tokens are output.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use shared::usage::CallUsage;

/// One model's prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cached_input: Option<f64>,
}

/// Prices by model name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    exact: HashMap<String, Price>,
    /// `(prefix, price)`, longest prefix first.
    prefixes: Vec<(String, Price)>,
}

/// A price file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    #[error("cannot read the price table {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the price table is not valid: {0} (expected {{\"model\": {{\"input\": 2.5, \"output\": 10, \"cachedInput\": 1.25}}}}, USD per million tokens)")]
    Invalid(String),
}

impl PriceTable {
    /// Reads the table from a JSON file.
    pub fn load(path: &Path) -> Result<Self, PriceError> {
        let text = std::fs::read_to_string(path).map_err(|source| PriceError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Parses the table's JSON; every price must be a finite number, zero or more.
    pub fn parse(text: &str) -> Result<Self, PriceError> {
        let entries: HashMap<String, Price> =
            serde_json::from_str(text).map_err(|e| PriceError::Invalid(e.to_string()))?;
        let mut table = Self::default();
        for (model, price) in entries {
            let numbers = [price.input, price.output, price.cached_input.unwrap_or(0.0)];
            if numbers.iter().any(|n| !n.is_finite() || *n < 0.0) {
                return Err(PriceError::Invalid(format!(
                    "the prices of `{model}` must be numbers of zero or more"
                )));
            }
            match model.strip_suffix('*') {
                Some(prefix) => table.prefixes.push((prefix.to_string(), price)),
                None => drop(table.exact.insert(model, price)),
            }
        }
        table
            .prefixes
            .sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        Ok(table)
    }

    /// The prices of `model`, if the table knows it.
    pub fn price_of(&self, model: &str) -> Option<Price> {
        self.exact.get(model).copied().or_else(|| {
            self.prefixes
                .iter()
                .find(|(prefix, _)| model.starts_with(prefix.as_str()))
                .map(|(_, price)| *price)
        })
    }

    /// The call with its cost, when the table knows its model (else as it came: an
    /// engine may price its own calls, as the free demo model does).
    pub fn priced(&self, mut call: CallUsage) -> CallUsage {
        if let Some(price) = call.model.as_deref().and_then(|model| self.price_of(model)) {
            let cached = call.cached_input_tokens.min(call.input_tokens);
            let fresh = call.input_tokens - cached;
            let per_token = |dollars_per_million: f64| dollars_per_million / 1_000_000.0;
            call.cost_usd = Some(
                fresh as f64 * per_token(price.input)
                    + cached as f64 * per_token(price.cached_input.unwrap_or(price.input))
                    + call.output_tokens as f64 * per_token(price.output),
            );
        }
        call
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(model: &str, input: u64, cached: u64, output: u64) -> CallUsage {
        CallUsage {
            model: Some(model.into()),
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            ..CallUsage::default()
        }
    }

    #[test]
    fn exact_names_win_then_the_longest_prefix() {
        let table = PriceTable::parse(
            r#"{"gpt-4.1*": {"input": 2, "output": 8},
                "gpt-4.1-mini*": {"input": 0.4, "output": 1.6, "cachedInput": 0.1},
                "gpt-4.1-mini-special": {"input": 1, "output": 1}}"#,
        )
        .unwrap();
        assert_eq!(table.price_of("gpt-4.1-2025-04-14").unwrap().input, 2.0);
        assert_eq!(
            table.price_of("gpt-4.1-mini-2025-04-14").unwrap().input,
            0.4
        );
        assert_eq!(table.price_of("gpt-4.1-mini-special").unwrap().input, 1.0);
        assert_eq!(table.price_of("o4-mini"), None);
    }

    #[test]
    fn cost_bills_cached_input_at_its_own_price() {
        let table =
            PriceTable::parse(r#"{"m": {"input": 2, "output": 10, "cachedInput": 0.5}}"#).unwrap();
        let cost = table
            .priced(call("m", 1_000_000, 400_000, 100_000))
            .cost_usd;
        // 600k fresh × $2 + 400k cached × $0.5 + 100k out × $10 per million
        assert!((cost.unwrap() - (1.2 + 0.2 + 1.0)).abs() < 1e-9, "{cost:?}");
        let unknown = table.priced(call("other", 10, 0, 10));
        assert_eq!(unknown.cost_usd, None);
        let own = CallUsage {
            cost_usd: Some(0.0),
            ..call("demo", 1, 0, 1)
        };
        assert_eq!(table.priced(own).cost_usd, Some(0.0));
    }

    #[test]
    fn the_documented_example_parses() {
        let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/prices.example.json");
        let table = PriceTable::load(Path::new(example)).unwrap();
        assert!(table.price_of("gpt-4.1-mini-2025-04-14").is_some());
        assert!(table.price_of("claude-sonnet-4-5").is_some());
    }

    #[test]
    fn bad_tables_say_what_is_wrong() {
        for bad in [
            r#"{"m": {"input": -1, "output": 1}}"#,
            r#"{"m": {"input": 1}}"#,
            r#"{"m": {"input": 1, "output": 1, "cached": 1}}"#,
            r#"["m"]"#,
        ] {
            let error = PriceTable::parse(bad).unwrap_err().to_string();
            assert!(error.contains("USD per million tokens"), "{error}");
        }
    }
}
