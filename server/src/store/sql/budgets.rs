//! Budgets in SQL both backends run: a user's own caps, and the spending the log's writer
//! adds with each `CUSTOM tandem.usage` event ([`ADD_SPENDING`]).

/// Adds a command's model calls to its session owner's day: day, cost, tokens, calls,
/// session. (SQLite numbers `$N` parameters in the order they first appear, so they
/// appear here in the order of their numbers.)
pub(crate) const ADD_SPENDING: &str =
    "INSERT INTO spending (user_id, day, cost_usd, tokens, calls) \
     SELECT owner_id, $1, $2, $3, $4 FROM sessions WHERE id = $5 \
     ON CONFLICT (user_id, day) DO UPDATE SET \
       cost_usd = spending.cost_usd + excluded.cost_usd, \
       tokens = spending.tokens + excluded.tokens, \
       calls = spending.calls + excluded.calls";

/// Implements [`crate::store::Budgets`] for a backend (the arguments [`super`] describes).
macro_rules! budgets_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $writes:ident, $reads:ident) => {
        impl<$($generics)*> crate::store::Budgets for $store {
            async fn own_budget(
                &self,
                user: crate::domain::UserId,
            ) -> Result<crate::store::OwnBudget, crate::store::StoreError> {
                let row: Option<(Option<f64>, Option<f64>, Option<i64>, Option<i64>)> =
                    sqlx::query_as(
                        "SELECT daily_usd, monthly_usd, daily_tokens, monthly_tokens \
                         FROM budgets WHERE user_id = $1",
                    )
                    .bind(user.to_string())
                    .fetch_optional(&$keeper(self).$reads)
                    .await?;
                let Some((daily_usd, monthly_usd, daily_tokens, monthly_tokens)) = row else {
                    return Ok(Default::default());
                };
                use crate::store::OwnLimit;
                Ok(crate::store::OwnBudget {
                    daily_usd: OwnLimit::from_column(daily_usd),
                    monthly_usd: OwnLimit::from_column(monthly_usd),
                    daily_tokens: OwnLimit::from_column(daily_tokens.map(|t| t as f64)),
                    monthly_tokens: OwnLimit::from_column(monthly_tokens.map(|t| t as f64)),
                })
            }

            async fn set_own_budget(
                &self,
                user: crate::domain::UserId,
                budget: crate::store::OwnBudget,
                now_ms: i64,
            ) -> Result<(), crate::store::StoreError> {
                let tokens = |limit: crate::store::OwnLimit| limit.to_column().map(|t| t as i64);
                sqlx::query(
                    "INSERT INTO budgets \
                       (user_id, daily_usd, monthly_usd, daily_tokens, monthly_tokens, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6) \
                     ON CONFLICT (user_id) DO UPDATE SET daily_usd = excluded.daily_usd, \
                       monthly_usd = excluded.monthly_usd, daily_tokens = excluded.daily_tokens, \
                       monthly_tokens = excluded.monthly_tokens, updated_at = excluded.updated_at",
                )
                .bind(user.to_string())
                .bind(budget.daily_usd.to_column())
                .bind(budget.monthly_usd.to_column())
                .bind(tokens(budget.daily_tokens))
                .bind(tokens(budget.monthly_tokens))
                .bind(now_ms)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(())
            }

            async fn spent(
                &self,
                user: crate::domain::UserId,
                today: i64,
                month_start: i64,
            ) -> Result<crate::store::Spent, crate::store::StoreError> {
                // A month's days at most: summed here, the same on both backends.
                let days: Vec<(i64, f64, i64)> = sqlx::query_as(
                    "SELECT day, cost_usd, tokens FROM spending \
                     WHERE user_id = $1 AND day >= $2 AND day <= $3",
                )
                .bind(user.to_string())
                .bind(month_start)
                .bind(today)
                .fetch_all(&$keeper(self).$reads)
                .await?;
                let mut spent = crate::store::Spent::default();
                for (day, cost_usd, tokens) in days {
                    let tokens = tokens.max(0) as u64;
                    if day == today {
                        spent.day_usd += cost_usd;
                        spent.day_tokens += tokens;
                    }
                    spent.month_usd += cost_usd;
                    spent.month_tokens += tokens;
                }
                Ok(spent)
            }

            async fn take_call_turn(
                &self,
                user: crate::domain::UserId,
                holder: &str,
                expires_at_ms: i64,
                now_ms: i64,
            ) -> Result<bool, crate::store::StoreError> {
                // The row is inserted, or taken over when its holder's time ran out; a
                // held one is left alone and nothing changes.
                let taken = sqlx::query(
                    "INSERT INTO model_call_turns (user_id, holder, expires_at) \
                     VALUES ($1, $2, $3) \
                     ON CONFLICT (user_id) DO UPDATE SET holder = excluded.holder, \
                       expires_at = excluded.expires_at \
                     WHERE model_call_turns.expires_at < $4",
                )
                .bind(user.to_string())
                .bind(holder)
                .bind(expires_at_ms)
                .bind(now_ms)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(taken.rows_affected() == 1)
            }

            async fn renew_call_turn(
                &self,
                user: crate::domain::UserId,
                holder: &str,
                expires_at_ms: i64,
            ) -> Result<bool, crate::store::StoreError> {
                let renewed = sqlx::query(
                    "UPDATE model_call_turns SET expires_at = $1 \
                     WHERE user_id = $2 AND holder = $3",
                )
                .bind(expires_at_ms)
                .bind(user.to_string())
                .bind(holder)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(renewed.rows_affected() == 1)
            }

            async fn give_back_call_turn(
                &self,
                user: crate::domain::UserId,
                holder: &str,
            ) -> Result<(), crate::store::StoreError> {
                sqlx::query("DELETE FROM model_call_turns WHERE user_id = $1 AND holder = $2")
                    .bind(user.to_string())
                    .bind(holder)
                    .execute(&$keeper(self).$writes)
                    .await?;
                Ok(())
            }
        }
    };
}

pub(crate) use budgets_on;
