//! Replays and their trials in SQL both backends run.

/// A replay's columns, in [`ReplayRow`](crate::store::ReplayRow)'s order.
pub(crate) const REPLAY_COLUMNS: &str =
    "id, owner_id, session_id, run_id, eval_id, spec, record, status, created_at, finished_at";

/// An eval's columns, in [`EvalRow`](crate::store::EvalRow)'s order.
pub(crate) const EVAL_COLUMNS: &str = "id, owner_id, spec, skipped, created_at";

/// An eval's row as selected.
pub(crate) type EvalTuple = (String, String, String, String, i64);

/// An eval from its row.
pub(crate) fn eval_row(
    (id, owner, spec, skipped, created_at): EvalTuple,
) -> Result<crate::store::EvalRow, crate::store::StoreError> {
    let owner = crate::domain::UserId::parse(&owner)
        .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?;
    Ok(crate::store::EvalRow {
        id,
        owner,
        spec,
        skipped,
        created_at,
    })
}

/// A trial's columns, in [`TrialRow`](crate::store::TrialRow)'s order.
pub(crate) const TRIAL_COLUMNS: &str = "replay_id, variant, trial, session_id, state, result";

/// A replay's row as selected.
pub(crate) type ReplayTuple = (
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    String,
    i64,
    Option<i64>,
);

/// A trial's row as selected.
pub(crate) type TrialTuple = (String, i64, i64, Option<String>, String, Option<String>);

/// A replay from its row.
pub(crate) fn replay_row(
    (id, owner, session_id, run_id, eval_id, spec, record, status, created_at, finished_at): ReplayTuple,
) -> Result<crate::store::ReplayRow, crate::store::StoreError> {
    let owner = crate::domain::UserId::parse(&owner)
        .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?;
    Ok(crate::store::ReplayRow {
        id,
        owner,
        session_id,
        run_id,
        eval_id,
        spec,
        record,
        status,
        created_at,
        finished_at,
    })
}

/// A trial from its row.
pub(crate) fn trial_row(
    (replay_id, variant, trial, session_id, state, result): TrialTuple,
) -> Result<crate::store::TrialRow, crate::store::StoreError> {
    let number = |n: i64| {
        u32::try_from(n).map_err(|_| crate::store::StoreError::Corrupt(format!("a trial {n}")))
    };
    Ok(crate::store::TrialRow {
        replay_id,
        variant: number(variant)?,
        trial: number(trial)?,
        session_id,
        state,
        result,
    })
}

/// Implements [`crate::store::Replays`] for a backend (the arguments [`super`] describes).
macro_rules! replays_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $writes:ident, $reads:ident) => {
        impl<$($generics)*> crate::store::Replays for $store {
            async fn add_replay(
                &self,
                row: &crate::store::ReplayRow,
                variants: u32,
                trials: u32,
            ) -> Result<(), crate::store::StoreError> {
                // Two statements and no transaction: on SQLite a transaction held across
                // awaits holds the write lock the log's writer waits for. The replay goes
                // first (its trials name it); a replay whose trials are missing (a crash
                // between the two) ends as done with none.
                sqlx::query(
                    "INSERT INTO replays (id, owner_id, session_id, run_id, eval_id, spec, record, \
                       status, created_at, finished_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&row.id)
                .bind(row.owner.to_string())
                .bind(&row.session_id)
                .bind(&row.run_id)
                .bind(&row.eval_id)
                .bind(&row.spec)
                .bind(&row.record)
                .bind(&row.status)
                .bind(row.created_at)
                .bind(row.finished_at)
                .execute(&$keeper(self).$writes)
                .await?;
                let numbers: Vec<(i64, i64)> = (0..variants)
                    .flat_map(|variant| (1..=trials).map(move |trial| (i64::from(variant), i64::from(trial))))
                    .collect();
                let values: Vec<String> = (0..numbers.len())
                    .map(|at| format!("(${}, ${}, ${}, 'queued')", 3 * at + 1, 3 * at + 2, 3 * at + 3))
                    .collect();
                let sql = format!(
                    "INSERT INTO replay_trials (replay_id, variant, trial, state) VALUES {}",
                    values.join(", ")
                );
                let mut insert = sqlx::query(&sql);
                for (variant, trial) in &numbers {
                    insert = insert.bind(&row.id).bind(*variant).bind(*trial);
                }
                insert.execute(&$keeper(self).$writes).await?;
                Ok(())
            }

            async fn replay(
                &self,
                owner: crate::domain::UserId,
                id: &str,
            ) -> Result<Option<crate::store::ReplayRow>, crate::store::StoreError> {
                use crate::store::sql::replays::{replay_row, ReplayTuple, REPLAY_COLUMNS};
                let row: Option<ReplayTuple> = sqlx::query_as(&format!(
                    "SELECT {REPLAY_COLUMNS} FROM replays WHERE id = $1 AND owner_id = $2"
                ))
                .bind(id)
                .bind(owner.to_string())
                .fetch_optional(&$keeper(self).$writes)
                .await?;
                row.map(replay_row).transpose()
            }

            async fn replay_by_id(
                &self,
                id: &str,
            ) -> Result<Option<crate::store::ReplayRow>, crate::store::StoreError> {
                use crate::store::sql::replays::{replay_row, ReplayTuple, REPLAY_COLUMNS};
                let row: Option<ReplayTuple> =
                    sqlx::query_as(&format!("SELECT {REPLAY_COLUMNS} FROM replays WHERE id = $1"))
                        .bind(id)
                        .fetch_optional(&$keeper(self).$writes)
                        .await?;
                row.map(replay_row).transpose()
            }

            async fn replays_of(
                &self,
                owner: crate::domain::UserId,
                session: &str,
                limit: u32,
            ) -> Result<Vec<crate::store::ReplayRow>, crate::store::StoreError> {
                use crate::store::sql::replays::{replay_row, REPLAY_COLUMNS};
                crate::store::sql::rows_of!(
                    &$keeper(self).$writes,
                    &format!("SELECT {REPLAY_COLUMNS} FROM replays \
                              WHERE owner_id = $1 AND session_id = $2 \
                              ORDER BY created_at DESC, id DESC LIMIT $3"),
                    replay_row,
                    owner.to_string(),
                    session,
                    i64::from(limit),
                )
            }

            async fn add_eval(
                &self,
                row: &crate::store::EvalRow,
            ) -> Result<(), crate::store::StoreError> {
                sqlx::query(
                    "INSERT INTO evals (id, owner_id, spec, skipped, created_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(&row.id)
                .bind(row.owner.to_string())
                .bind(&row.spec)
                .bind(&row.skipped)
                .bind(row.created_at)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(())
            }

            async fn eval(
                &self,
                owner: crate::domain::UserId,
                id: &str,
            ) -> Result<Option<crate::store::EvalRow>, crate::store::StoreError> {
                use crate::store::sql::replays::{eval_row, EvalTuple, EVAL_COLUMNS};
                let row: Option<EvalTuple> = sqlx::query_as(&format!(
                    "SELECT {EVAL_COLUMNS} FROM evals WHERE id = $1 AND owner_id = $2"
                ))
                .bind(id)
                .bind(owner.to_string())
                .fetch_optional(&$keeper(self).$writes)
                .await?;
                row.map(eval_row).transpose()
            }

            async fn evals_of(
                &self,
                owner: crate::domain::UserId,
                limit: u32,
            ) -> Result<Vec<crate::store::EvalRow>, crate::store::StoreError> {
                use crate::store::sql::replays::{eval_row, EVAL_COLUMNS};
                crate::store::sql::rows_of!(
                    &$keeper(self).$writes,
                    &format!("SELECT {EVAL_COLUMNS} FROM evals WHERE owner_id = $1 \
                              ORDER BY created_at DESC, id DESC LIMIT $2"),
                    eval_row,
                    owner.to_string(),
                    i64::from(limit),
                )
            }

            async fn replays_of_eval(
                &self,
                id: &str,
            ) -> Result<Vec<crate::store::ReplayRow>, crate::store::StoreError> {
                use crate::store::sql::replays::{replay_row, REPLAY_COLUMNS};
                crate::store::sql::rows_of!(
                    &$keeper(self).$writes,
                    &format!("SELECT {REPLAY_COLUMNS} FROM replays WHERE eval_id = $1 \
                              ORDER BY created_at, id"),
                    replay_row,
                    id,
                )
            }

            async fn is_trial(&self, session: &str) -> Result<bool, crate::store::StoreError> {
                let found: Option<(i32,)> =
                    sqlx::query_as("SELECT 1 FROM replay_trials WHERE session_id = $1 LIMIT 1")
                        .bind(session)
                        .fetch_optional(&$keeper(self).$writes)
                        .await?;
                Ok(found.is_some())
            }

            async fn trials(
                &self,
                replay: &str,
            ) -> Result<Vec<crate::store::TrialRow>, crate::store::StoreError> {
                use crate::store::sql::replays::{trial_row, TRIAL_COLUMNS};
                crate::store::sql::rows_of!(
                    &$keeper(self).$writes,
                    &format!("SELECT {TRIAL_COLUMNS} FROM replay_trials WHERE replay_id = $1 \
                              ORDER BY variant, trial"),
                    trial_row,
                    replay,
                )
            }

            async fn claim_replay(
                &self,
                id: &str,
                instance: &str,
                now_ms: i64,
                until_ms: i64,
            ) -> Result<bool, crate::store::StoreError> {
                let claimed = sqlx::query(
                    "UPDATE replays SET claimed_by = $1, claimed_until = $2 \
                     WHERE id = $3 AND status = 'running' \
                       AND (claimed_by IS NULL OR claimed_by = $4 OR claimed_until IS NULL \
                            OR claimed_until < $5)",
                )
                .bind(instance)
                .bind(until_ms)
                .bind(id)
                .bind(instance)
                .bind(now_ms)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(claimed.rows_affected() == 1)
            }

            async fn release_replay(
                &self,
                id: &str,
                instance: &str,
            ) -> Result<(), crate::store::StoreError> {
                sqlx::query(
                    "UPDATE replays SET claimed_by = NULL, claimed_until = NULL \
                     WHERE id = $1 AND claimed_by = $2",
                )
                .bind(id)
                .bind(instance)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(())
            }

            async fn unclaimed_replays(
                &self,
                now_ms: i64,
                limit: u32,
            ) -> Result<Vec<String>, crate::store::StoreError> {
                let rows: Vec<(String,)> = sqlx::query_as(
                    "SELECT id FROM replays WHERE status = 'running' \
                       AND (claimed_until IS NULL OR claimed_until < $1) \
                     ORDER BY created_at, id LIMIT $2",
                )
                .bind(now_ms)
                .bind(i64::from(limit))
                .fetch_all(&$keeper(self).$writes)
                .await?;
                Ok(rows.into_iter().map(|(id,)| id).collect())
            }

            async fn start_trial(
                &self,
                replay: &str,
                (variant, trial): (u32, u32),
                session: &str,
            ) -> Result<bool, crate::store::StoreError> {
                let started = sqlx::query(
                    "UPDATE replay_trials SET state = 'started', session_id = $1 \
                     WHERE replay_id = $2 AND variant = $3 AND trial = $4 AND state = 'queued'",
                )
                .bind(session)
                .bind(replay)
                .bind(i64::from(variant))
                .bind(i64::from(trial))
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(started.rows_affected() == 1)
            }

            async fn requeue_trial(
                &self,
                replay: &str,
                (variant, trial): (u32, u32),
                session: &str,
            ) -> Result<bool, crate::store::StoreError> {
                let requeued = sqlx::query(
                    "UPDATE replay_trials SET state = 'queued', session_id = NULL \
                     WHERE replay_id = $1 AND variant = $2 AND trial = $3 \
                       AND state = 'started' AND session_id = $4",
                )
                .bind(replay)
                .bind(i64::from(variant))
                .bind(i64::from(trial))
                .bind(session)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(requeued.rows_affected() == 1)
            }

            async fn end_trial(
                &self,
                replay: &str,
                (variant, trial): (u32, u32),
                state: &str,
                result: &str,
            ) -> Result<bool, crate::store::StoreError> {
                let ended = sqlx::query(
                    "UPDATE replay_trials SET state = $1, result = $2 \
                     WHERE replay_id = $3 AND variant = $4 AND trial = $5 \
                       AND state IN ('queued', 'started')",
                )
                .bind(state)
                .bind(result)
                .bind(replay)
                .bind(i64::from(variant))
                .bind(i64::from(trial))
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(ended.rows_affected() == 1)
            }

            async fn finish_replay(
                &self,
                id: &str,
                status: &str,
                now_ms: i64,
            ) -> Result<bool, crate::store::StoreError> {
                // Done only once no trial is queued or started (a driver that read the
                // trials before another started one cannot end the replay under it).
                let finished = sqlx::query(
                    "UPDATE replays SET status = $1, finished_at = $2, claimed_by = NULL, \
                       claimed_until = NULL WHERE id = $3 AND status = 'running' \
                       AND ($4 <> 'done' OR NOT EXISTS (SELECT 1 FROM replay_trials \
                         WHERE replay_id = $5 AND state IN ('queued', 'started')))",
                )
                .bind(status)
                .bind(now_ms)
                .bind(id)
                .bind(status)
                .bind(id)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(finished.rows_affected() == 1)
            }
        }
    };
}

pub(crate) use replays_on;
