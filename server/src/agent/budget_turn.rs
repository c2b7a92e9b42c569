//! A user's turn to call the model, while a budget cap applies to them. A check before a
//! call reads the spending already committed, and a call's cost is known only when it
//! ends; if a user's runs called the model side by side, each would pass the check and
//! together they would overspend by a call per run (five runs, a 300-token cap: 750). So
//! a capped user's model calls take turns, on every instance: a run takes the user's turn
//! (a row of the store, [`crate::store::Budgets::take_call_turn`]), then checks the cap,
//! calls, and gives the turn back only once the call's usage is committed, so the next
//! check counts it. Only the last call can go past the cap: the overspend is one model
//! call per user, whatever the number of runs or instances. Users no cap applies to, and
//! runs a person let go past theirs, never wait.
//!
//! A held turn is renewed while its call runs; an instance that dies holding one loses
//! it after [`TURN_TTL`]. A run that waits for the turn wakes when a turn is given back
//! on this instance, and looks again every [`LOOK_AGAIN`] for one given back elsewhere.

use std::sync::Arc;
use std::time::Duration;

use shared::budget::BudgetLine;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::budget::BudgetRules;
use crate::domain::{new_id, now_ms, UserId};
use crate::store::{Budgets, StoreError};

/// How long a turn lasts without being renewed (an instance that died holding one).
pub const TURN_TTL: Duration = Duration::from_secs(30);
/// How often a held turn is renewed.
const RENEW_EVERY: Duration = Duration::from_secs(10);
/// How often a waiting run looks again for a turn given back on another instance.
const LOOK_AGAIN: Duration = Duration::from_millis(250);

/// Turns given back on this instance: the runs waiting here look again at once.
static GIVEN_BACK: Notify = Notify::const_new();

/// What a run may do about its next model call.
pub enum NextCall<S: Budgets> {
    /// Call: with the user's turn, or `None` when no cap applies to them.
    Go(Option<CallTurn<S>>),
    /// A cap is reached: these.
    Reached(Vec<BudgetLine>),
    /// The run was stopped (or the process is stopping) while it waited for the turn.
    Stopped,
}

/// Waits for `user`'s turn to call the model when a cap applies to them, and checks the
/// caps once it has it; `stops` end the wait.
pub async fn admit<S: Budgets>(
    store: &Arc<S>,
    rules: &BudgetRules,
    user: UserId,
    stops: (&CancellationToken, &CancellationToken),
) -> Result<NextCall<S>, StoreError> {
    let lines = rules.lines(&**store, user, now_ms()).await?;
    if lines.is_empty() {
        return Ok(NextCall::Go(None));
    }
    let holder = new_id("turn");
    loop {
        let reached = rules.reached(&**store, user, now_ms()).await?;
        if !reached.is_empty() {
            return Ok(NextCall::Reached(reached));
        }
        // Registered before looking, so a turn given back meanwhile is not missed.
        let given_back = GIVEN_BACK.notified();
        if let Some(turn) = CallTurn::take(store, user, &holder).await? {
            // The spending of every call before this one is committed by now.
            let reached = rules.reached(&**store, user, now_ms()).await?;
            if reached.is_empty() {
                return Ok(NextCall::Go(Some(turn)));
            }
            return Ok(NextCall::Reached(reached));
        }
        tokio::select! {
            _ = stops.0.cancelled() => return Ok(NextCall::Stopped),
            _ = stops.1.cancelled() => return Ok(NextCall::Stopped),
            _ = given_back => {}
            _ = tokio::time::sleep(LOOK_AGAIN) => {}
        }
    }
}

/// A user's turn to call the model, held until dropped: then it is given back (after the
/// call's usage is committed, where the run loop drops it).
pub struct CallTurn<S: Budgets> {
    store: Arc<S>,
    user: UserId,
    holder: String,
    /// Ends the renewing task.
    held: CancellationToken,
}

impl<S: Budgets> CallTurn<S> {
    /// The turn, if nobody else holds it; renewed from then on until dropped.
    async fn take(store: &Arc<S>, user: UserId, holder: &str) -> Result<Option<Self>, StoreError> {
        let now = now_ms();
        let until = now + TURN_TTL.as_millis() as i64;
        if !store.take_call_turn(user, holder, until, now).await? {
            return Ok(None);
        }
        let held = CancellationToken::new();
        let (renewing, ended) = (store.clone(), held.clone());
        let holder_id = holder.to_string();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = ended.cancelled() => return,
                    _ = tokio::time::sleep(RENEW_EVERY) => {}
                }
                let until = now_ms() + TURN_TTL.as_millis() as i64;
                match renewing.renew_call_turn(user, &holder_id, until).await {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(error) => tracing::warn!(%error, "could not renew a model call's turn"),
                }
            }
        });
        Ok(Some(Self {
            store: store.clone(),
            user,
            holder: holder.to_string(),
            held,
        }))
    }
}

impl<S: Budgets> Drop for CallTurn<S> {
    fn drop(&mut self) {
        self.held.cancel();
        let (store, user, holder) = (
            self.store.clone(),
            self.user,
            std::mem::take(&mut self.holder),
        );
        tokio::spawn(async move {
            if let Err(error) = store.give_back_call_turn(user, &holder).await {
                tracing::warn!(%error, "could not give a model call's turn back; it expires");
            }
            GIVEN_BACK.notify_waiters();
        });
    }
}
