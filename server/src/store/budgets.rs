//! Budgets: each user's own spending caps (set with `tandem users budget`), what they
//! spent per UTC day, and whose turn it is to call the model. Spending is added by the
//! log's writer in the transaction of each `CUSTOM tandem.usage` event (see
//! [`super::Effects::spending`]); this part reads it, keeps the caps and the turns, one of
//! the jobs of [`super::Records`], its SQL in `store/sql/budgets.rs`.

use std::future::Future;

use super::StoreError;
use crate::domain::UserId;

/// One cap as a user's own budget row holds it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum OwnLimit {
    /// The server's default (`--budget-*`).
    #[default]
    Default,
    /// No cap for this user, whatever the default.
    Unlimited,
    /// This cap.
    At(f64),
}

impl OwnLimit {
    /// The column's value: NULL for the default, negative for no cap.
    pub fn to_column(self) -> Option<f64> {
        match self {
            Self::Default => None,
            Self::Unlimited => Some(-1.0),
            Self::At(limit) => Some(limit),
        }
    }

    /// Reads a column written by [`Self::to_column`].
    pub fn from_column(value: Option<f64>) -> Self {
        match value {
            None => Self::Default,
            Some(limit) if limit < 0.0 => Self::Unlimited,
            Some(limit) => Self::At(limit),
        }
    }

    /// This cap where the user has one, else `default`.
    pub fn or(self, default: Option<f64>) -> Option<f64> {
        match self {
            Self::Default => default,
            Self::Unlimited => None,
            Self::At(limit) => Some(limit),
        }
    }
}

/// A user's own caps; each falls back to the server's default on its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OwnBudget {
    pub daily_usd: OwnLimit,
    pub monthly_usd: OwnLimit,
    pub daily_tokens: OwnLimit,
    pub monthly_tokens: OwnLimit,
}

/// What a user spent today and this month (UTC).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub day_usd: f64,
    pub day_tokens: u64,
    pub month_usd: f64,
    pub month_tokens: u64,
}

/// What one command's model calls cost, added to its session owner's day.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spending {
    pub cost_usd: f64,
    /// Input plus output tokens.
    pub tokens: u64,
    pub calls: u32,
}

/// The day `now_ms` falls in: days since 1970-01-01, UTC.
pub fn day_of(now_ms: i64) -> i64 {
    now_ms.div_euclid(86_400_000)
}

/// Keeping the caps and reading what was spent.
pub trait Budgets: Send + Sync + 'static {
    /// A user's own caps (all defaults when they set none).
    fn own_budget(
        &self,
        user: UserId,
    ) -> impl Future<Output = Result<OwnBudget, StoreError>> + Send;

    /// Replaces a user's own caps.
    fn set_own_budget(
        &self,
        user: UserId,
        budget: OwnBudget,
        now_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// What `user` spent on day `today` and from day `month_start` on.
    fn spent(
        &self,
        user: UserId,
        today: i64,
        month_start: i64,
    ) -> impl Future<Output = Result<Spent, StoreError>> + Send;

    /// Takes `user`'s turn to call the model for `holder`, until `expires_at_ms`, if
    /// nobody holds it (or its holder's turn expired at `now_ms`): one statement, so two
    /// instances never both take it. False when another holds it.
    fn take_call_turn(
        &self,
        user: UserId,
        holder: &str,
        expires_at_ms: i64,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Holds `holder`'s turn until `expires_at_ms`; false if it is no longer theirs.
    fn renew_call_turn(
        &self,
        user: UserId,
        holder: &str,
        expires_at_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Gives `holder`'s turn back (nothing if it is no longer theirs).
    fn give_back_call_turn(
        &self,
        user: UserId,
        holder: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}
