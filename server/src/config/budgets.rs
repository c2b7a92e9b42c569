//! Budget settings: the caps every user has unless `tandem users budget` gives them their
//! own, and what a run that reaches one does.

use clap::{Args, ValueEnum};

/// What a run that would go past its user's budget does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum BudgetOverrun {
    /// The run ends with `RUN_ERROR` `budget_exceeded`.
    #[default]
    Error,
    /// The run pauses with an interrupt of reason `budget`: the person may stop it, and
    /// continue only once the budget has room again (raised, or a new day or month).
    Pause,
    /// As `pause`, and the person may also let the run go on past the cap.
    Allow,
}

impl BudgetOverrun {
    /// Whether a run pauses for its person instead of failing.
    pub fn pauses(self) -> bool {
        self != Self::Error
    }
}

/// Budget flags and environment variables (no cap unless set).
#[derive(Debug, Clone, Default, Args)]
pub struct BudgetArgs {
    /// What each user may spend per UTC day, in US dollars (priced by `--prices`).
    #[arg(long, env = "TANDEM_BUDGET_DAILY_USD", value_parser = non_negative)]
    pub budget_daily_usd: Option<f64>,
    /// What each user may spend per UTC month, in US dollars.
    #[arg(long, env = "TANDEM_BUDGET_MONTHLY_USD", value_parser = non_negative)]
    pub budget_monthly_usd: Option<f64>,
    /// Tokens (input plus output) each user's model calls may take per UTC day.
    #[arg(long, env = "TANDEM_BUDGET_DAILY_TOKENS")]
    pub budget_daily_tokens: Option<u64>,
    /// Tokens each user's model calls may take per UTC month.
    #[arg(long, env = "TANDEM_BUDGET_MONTHLY_TOKENS")]
    pub budget_monthly_tokens: Option<u64>,
    /// What a run that reaches its user's budget does: `error` (it fails with
    /// `budget_exceeded`), `pause` (it waits for its person, who may stop it) or `allow`
    /// (it waits, and the person may also let it go on past the cap).
    #[arg(long, env = "TANDEM_BUDGET_OVERRUN", value_enum, default_value_t = BudgetOverrun::Error)]
    pub budget_overrun: BudgetOverrun,
}

fn non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!(
            "`{text}` is not an amount of US dollars (0 or more)"
        )),
    }
}
