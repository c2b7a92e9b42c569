//! Budgets: before each model call a run checks what its user (the session's owner) has
//! spent today and this month (UTC) against their caps: their own (`tandem users
//! budget`), else the server's (`--budget-*`). Spending is what the log's usage events
//! add up to, kept per day by the store in the same transaction as each event, so every
//! instance checks against the same figure.
//!
//! A run past a cap fails with `budget_exceeded`, or pauses with an interrupt of reason
//! `budget` (per `--budget-overrun`). The person's answer is recorded as `CUSTOM
//! tandem.budget_decision`: to stop ends the run; to continue resumes it, past the cap
//! for the rest of that run where `allow` permits, else only once the budget has room.
//!
//! How far a user can overspend: a check reads committed spending and a call's cost is
//! known only when it ends, so a capped user's model calls take turns
//! ([`super::budget_turn`]) and the overspend is one call per user, across every run and
//! instance (`tests/api/budget.rs` races five runs, and two instances, to hold it).

use chrono::{Datelike, NaiveDate, TimeZone, Utc};
use serde_json::{json, Value};
use shared::budget::BudgetLine;
use shared::{EventBody, Interrupt, ResumeStatus};

use crate::config::{BudgetArgs, BudgetOverrun};
use crate::domain::{new_id, UserId};
use crate::store::{day_of, Budgets, OwnBudget, StoreError};

/// The interrupt reason of a run that reached its budget.
pub const REASON: &str = "budget";
/// The `RUN_ERROR` code of a run that reached its budget under `--budget-overrun error`.
pub const CODE: &str = "budget_exceeded";

/// The server's caps and what a run that reaches one does.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BudgetRules {
    daily_usd: Option<f64>,
    monthly_usd: Option<f64>,
    daily_tokens: Option<f64>,
    monthly_tokens: Option<f64>,
    /// What a run that reaches a cap does.
    pub overrun: BudgetOverrun,
}

impl BudgetRules {
    /// The rules the flags set.
    pub fn configured(args: &BudgetArgs) -> Self {
        Self {
            daily_usd: args.budget_daily_usd,
            monthly_usd: args.budget_monthly_usd,
            daily_tokens: args.budget_daily_tokens.map(|t| t as f64),
            monthly_tokens: args.budget_monthly_tokens.map(|t| t as f64),
            overrun: args.budget_overrun,
        }
    }

    /// Every cap that applies to `user` and where they stand against it at `now_ms`; empty
    /// when none does.
    pub async fn lines<S: Budgets>(
        &self,
        store: &S,
        user: UserId,
        now_ms: i64,
    ) -> Result<Vec<BudgetLine>, StoreError> {
        let own = store.own_budget(user).await?;
        let caps = self.caps(&own);
        if caps.iter().all(|(_, _, cap)| cap.is_none()) {
            return Ok(Vec::new());
        }
        let period = Period::at(now_ms);
        let spent = store.spent(user, period.today, period.month_start).await?;
        let mut lines = Vec::new();
        for (period_name, unit, cap) in caps {
            let Some(limit) = cap else { continue };
            let (spent, resets_at) = match (period_name, unit) {
                ("day", "usd") => (spent.day_usd, &period.next_day),
                ("day", _) => (spent.day_tokens as f64, &period.next_day),
                (_, "usd") => (spent.month_usd, &period.next_month),
                _ => (spent.month_tokens as f64, &period.next_month),
            };
            lines.push(BudgetLine {
                period: period_name.into(),
                unit: unit.into(),
                limit,
                spent,
                left: (limit - spent).max(0.0),
                resets_at: resets_at.clone(),
            });
        }
        Ok(lines)
    }

    /// The caps that stop `user` now (empty: none does).
    pub async fn reached<S: Budgets>(
        &self,
        store: &S,
        user: UserId,
        now_ms: i64,
    ) -> Result<Vec<BudgetLine>, StoreError> {
        let mut lines = self.lines(store, user, now_ms).await?;
        lines.retain(BudgetLine::is_spent);
        Ok(lines)
    }

    /// `(period, unit, cap)` for each of the four caps, the user's own over the default.
    fn caps(&self, own: &OwnBudget) -> [(&'static str, &'static str, Option<f64>); 4] {
        [
            ("day", "usd", own.daily_usd.or(self.daily_usd)),
            ("month", "usd", own.monthly_usd.or(self.monthly_usd)),
            ("day", "tokens", own.daily_tokens.or(self.daily_tokens)),
            (
                "month",
                "tokens",
                own.monthly_tokens.or(self.monthly_tokens),
            ),
        ]
    }
}

/// The UTC day and month an instant falls in, and when each ends.
struct Period {
    today: i64,
    month_start: i64,
    next_day: String,
    next_month: String,
}

impl Period {
    fn at(now_ms: i64) -> Self {
        let today = day_of(now_ms);
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date");
        let date = epoch + chrono::Days::new(today.max(0) as u64);
        let first = date.with_day(1).expect("every month has a first");
        let next_first = first
            .checked_add_months(chrono::Months::new(1))
            .unwrap_or(first);
        let midnight = |day: NaiveDate| {
            Utc.from_utc_datetime(&day.and_hms_opt(0, 0, 0).expect("midnight"))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        };
        Self {
            today,
            month_start: (first - epoch).num_days(),
            next_day: midnight(date + chrono::Days::new(1)),
            next_month: midnight(next_first),
        }
    }
}

/// What a person reads about the caps a run reached.
pub fn describe(reached: &[BudgetLine]) -> String {
    let spent: Vec<String> = reached.iter().map(BudgetLine::describe_spent).collect();
    format!("Your budget is used up: {}.", spent.join("; "))
}

/// The interrupt a run that reached its budget pauses on.
pub fn interrupt(reached: &[BudgetLine], overrun: BudgetOverrun) -> Interrupt {
    let may_overrun = overrun == BudgetOverrun::Allow;
    let hint = match may_overrun {
        true => "Stop here, or let this run go on past the budget.",
        false => "Stop here, or continue once the budget has room again.",
    };
    Interrupt {
        id: new_id("int"),
        reason: REASON.into(),
        message: Some(format!("{} {hint}", describe(reached))),
        tool_call_id: None,
        response_schema: Some(json!({
            "type": "object",
            "properties": {"continue": {"type": "boolean"}},
            "required": ["continue"],
            "additionalProperties": false
        })),
        expires_at: None,
        metadata: Some(json!({
            "kind": REASON,
            "budget": reached,
            "mayOverrun": may_overrun,
        })),
    }
}

/// Whether an answer to a budget interrupt asks the run to go on.
pub fn continues(status: ResumeStatus, payload: Option<&Value>) -> bool {
    status == ResumeStatus::Resolved
        && payload
            .and_then(|p| p.get("continue"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
}

/// The event that records the person's decision: whether the run goes on, and whether
/// past its budget (`--budget-overrun allow`) for the rest of the run it resumes.
pub fn decision(interrupt_id: &str, go_on: bool, past_budget: bool) -> EventBody {
    EventBody::Custom {
        name: shared::custom::BUDGET_DECISION.into(),
        value: json!({
            "interruptId": interrupt_id,
            "continue": go_on,
            "pastBudget": go_on && past_budget,
        }),
    }
}

/// Whether a logged `CUSTOM` event lets the run it is in go on past its budget.
pub fn lets_run_overrun(name: &str, value: &Value) -> bool {
    name == shared::custom::BUDGET_DECISION && value.get("pastBudget") == Some(&json!(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_end_at_the_next_utc_midnight_and_first_of_the_month() {
        // 2026-11-26T16:00:00Z
        let period = Period::at(1_795_708_800_000);
        assert_eq!(period.next_day, "2026-11-27T00:00:00Z");
        assert_eq!(period.next_month, "2026-12-01T00:00:00Z");
        assert_eq!(period.today - period.month_start, 25);
        // 2026-12-31T23:59:59Z rolls into the next year.
        let period = Period::at(1_798_761_599_000);
        assert_eq!(period.next_day, "2027-01-01T00:00:00Z");
        assert_eq!(period.next_month, "2027-01-01T00:00:00Z");
    }

    #[test]
    fn only_a_resolved_answer_with_continue_true_goes_on() {
        let yes = json!({"continue": true});
        assert!(continues(ResumeStatus::Resolved, Some(&yes)));
        assert!(!continues(ResumeStatus::Cancelled, Some(&yes)));
        assert!(!continues(
            ResumeStatus::Resolved,
            Some(&json!({"continue": false}))
        ));
        assert!(!continues(ResumeStatus::Resolved, None));
    }
}
