//! How usage reads on the page: short token counts and costs for a run's footer, the
//! working line and the session header. Pure, tested on the host.

use shared::decimal::{fixed, tenths};
use shared::usage::UsageTotals;

/// `950`, `1.2k`, `12k`, `3.4M`.
pub fn tokens(count: u64) -> String {
    match count {
        0..=999 => count.to_string(),
        1_000..=9_999 => trim(format!("{}k", tenths(count, 1_000))),
        10_000..=999_999 => format!("{}k", count / 1_000),
        _ => trim(format!("{}M", tenths(count, 1_000_000))),
    }
}

/// `$0`, `$0.0042`, `$0.012`, `$1.23`, `$120`; two significant digits below a cent.
pub fn dollars(cost: f64) -> String {
    if cost <= 0.0 {
        "$0".into()
    } else if cost < 0.01 {
        let digits = (-cost.log10()).floor() as usize + 2;
        format!("${}", fixed(cost, digits))
    } else if cost < 100.0 {
        format!("${}", fixed(cost, 2))
    } else {
        format!("${}", fixed(cost, 0))
    }
}

/// `1.2k in · 340 out · $0.0042`; cached input and reasoning are named when there are
/// any, and a cost that misses unpriced calls says so (`≥ $0.01`).
pub fn summary(totals: &UsageTotals) -> String {
    let mut parts = vec![format!("{} in", tokens(totals.input_tokens))];
    if totals.cached_input_tokens > 0 {
        parts.push(format!("{} cached", tokens(totals.cached_input_tokens)));
    }
    parts.push(format!("{} out", tokens(totals.output_tokens)));
    if totals.reasoning_tokens > 0 {
        parts.push(format!("{} reasoning", tokens(totals.reasoning_tokens)));
    }
    if totals.has_cost() {
        let at_least = if totals.unpriced_calls > 0 {
            "≥ "
        } else {
            ""
        };
        parts.push(format!("{at_least}{}", dollars(totals.cost_usd)));
    }
    parts.join(" · ")
}

/// The longer text of a tooltip: every count in full.
pub fn details(totals: &UsageTotals) -> String {
    let mut text = format!(
        "{} model call{}: {} input tokens ({} cached), {} output tokens ({} reasoning)",
        totals.calls,
        if totals.calls == 1 { "" } else { "s" },
        totals.input_tokens,
        totals.cached_input_tokens,
        totals.output_tokens,
        totals.reasoning_tokens,
    );
    if totals.has_cost() {
        text.push_str(&format!(", cost {}", dollars(totals.cost_usd)));
    }
    if totals.unpriced_calls > 0 {
        text.push_str(&format!(
            "; {} call(s) of a model without a price",
            totals.unpriced_calls
        ));
    }
    text
}

fn trim(text: String) -> String {
    text.replace(".0k", "k").replace(".0M", "M")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::usage::CallUsage;

    #[test]
    fn counts_read_short() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1_000, "1k"),
            (1_234, "1.2k"),
            (12_345, "12k"),
            (3_400_000, "3.4M"),
        ];
        for (count, text) in cases {
            assert_eq!(tokens(count), text);
        }
    }

    #[test]
    fn costs_keep_two_significant_digits_below_a_cent() {
        let cases = [
            (0.0, "$0"),
            (0.0042, "$0.0042"),
            (0.000123, "$0.00012"),
            (0.0123, "$0.01"),
            (1.234, "$1.23"),
            (123.4, "$123"),
        ];
        for (cost, text) in cases {
            assert_eq!(dollars(cost), text);
        }
    }

    #[test]
    fn a_summary_names_what_there_is() {
        let mut totals = UsageTotals::default();
        totals.add(&CallUsage {
            input_tokens: 1_234,
            output_tokens: 340,
            cost_usd: Some(0.0042),
            ..CallUsage::default()
        });
        assert_eq!(summary(&totals), "1.2k in · 340 out · $0.0042");
        totals.add(&CallUsage {
            input_tokens: 100,
            cached_input_tokens: 80,
            output_tokens: 10,
            reasoning_tokens: 5,
            ..CallUsage::default()
        });
        assert_eq!(
            summary(&totals),
            "1.3k in · 80 cached · 350 out · 5 reasoning · ≥ $0.0042"
        );
        assert!(details(&totals).contains("1 call(s) of a model without a price"));
    }
}
