//! Spending caps: what a user may spend on model calls per UTC day and month, in US
//! dollars (costed by the server's price table) or tokens (input plus output), and what is
//! left. `GET /api/auth/me` lists them; an interrupt of reason `budget` carries the ones a
//! run reached in its metadata.

use serde::{Deserialize, Serialize};

use crate::decimal::fixed;

/// One cap and where the user stands against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetLine {
    /// `day` or `month` (UTC).
    pub period: String,
    /// `usd` or `tokens`.
    pub unit: String,
    pub limit: f64,
    pub spent: f64,
    /// `limit - spent`, never below 0.
    pub left: f64,
    /// When the period ends and the spending starts again from 0 (RFC 3339, UTC).
    pub resets_at: String,
}

impl BudgetLine {
    /// Reads a line field by field (the page keeps no derived deserialiser it can do
    /// without); `None` if it is not one.
    pub fn from_value(value: &serde_json::Value) -> Option<Self> {
        let text = |key: &str| value.get(key)?.as_str().map(str::to_string);
        let number = |key: &str| value.get(key)?.as_f64();
        Some(Self {
            period: text("period")?,
            unit: text("unit")?,
            limit: number("limit")?,
            spent: number("spent")?,
            left: number("left").unwrap_or(0.0),
            resets_at: text("resetsAt").unwrap_or_default(),
        })
    }

    /// Every line of a JSON array of them.
    pub fn list_from_value(value: Option<&serde_json::Value>) -> Vec<Self> {
        let lines = value.and_then(|v| v.as_array()).map(Vec::as_slice);
        lines
            .unwrap_or_default()
            .iter()
            .filter_map(Self::from_value)
            .collect()
    }

    /// Whether nothing is left.
    pub fn is_spent(&self) -> bool {
        self.spent >= self.limit
    }

    /// How a person reads it: `$4.10 of $5.00 left today`, `12,000 of 50,000 tokens left
    /// this month`.
    pub fn describe_left(&self) -> String {
        self.describe(self.left, "left")
    }

    /// How a person reads what was spent: `$5.02 of $5.00 spent today`.
    pub fn describe_spent(&self) -> String {
        self.describe(self.spent, "spent")
    }

    /// What is left, briefly: `$4.10 left today`, `12,000 tokens left this month`.
    pub fn short_left(&self) -> String {
        let period = self.period_words();
        match self.unit.as_str() {
            "usd" => format!("${} left {period}", fixed(self.left, 2)),
            _ => format!("{} tokens left {period}", tokens(self.left)),
        }
    }

    fn describe(&self, value: f64, what: &str) -> String {
        let period = self.period_words();
        match self.unit.as_str() {
            "usd" => format!(
                "${} of ${} {what} {period}",
                fixed(value, 2),
                fixed(self.limit, 2)
            ),
            _ => format!(
                "{} of {} tokens {what} {period}",
                tokens(value),
                tokens(self.limit)
            ),
        }
    }

    fn period_words(&self) -> &'static str {
        match self.period.as_str() {
            "day" => "today",
            _ => "this month",
        }
    }
}

/// A count of tokens, grouped: `12,000`.
fn tokens(value: f64) -> String {
    grouped(value.max(0.0).round() as u64)
}

/// `12345` → `12,345`.
fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(unit: &str, period: &str, limit: f64, spent: f64) -> BudgetLine {
        BudgetLine {
            period: period.into(),
            unit: unit.into(),
            limit,
            spent,
            left: (limit - spent).max(0.0),
            resets_at: "2026-11-27T00:00:00Z".into(),
        }
    }

    #[test]
    fn lines_read_as_money_or_grouped_tokens() {
        assert_eq!(
            line("usd", "day", 5.0, 0.9).describe_left(),
            "$4.10 of $5.00 left today"
        );
        assert_eq!(
            line("tokens", "month", 50_000.0, 38_000.0).describe_left(),
            "12,000 of 50,000 tokens left this month"
        );
        assert_eq!(
            line("usd", "day", 5.0, 5.02).describe_spent(),
            "$5.02 of $5.00 spent today"
        );
        assert_eq!(
            line("usd", "day", 5.0, 0.9).short_left(),
            "$4.10 left today"
        );
        assert_eq!(
            line("tokens", "month", 50_000.0, 38_000.0).short_left(),
            "12,000 tokens left this month"
        );
        assert!(line("tokens", "day", 10.0, 10.0).is_spent());
        assert!(!line("tokens", "day", 10.0, 9.0).is_spent());
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }
}
