//! Recording what a command raised besides its events, in SQL both backends run: the
//! interrupts it pauses on, the runs it ends (the webhook outbox's sources) and what its
//! model calls spent.

/// Records a raised interrupt: id, session, run, tool call, JSON, time, deadline, reason.
pub(crate) const INSERT_INTERRUPT: &str = "INSERT INTO interrupts \
     (id, session_id, run_id, tool_call_id, interrupt, created_at, expires_at, reason) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
/// Gives a branch its own copy of each question a run waits on in the session it parts
/// from: branch, time, session, run. Pending, with a fresh deadline of the same length.
pub(crate) const COPY_WAITING: &str = "INSERT INTO interrupts \
     (id, session_id, run_id, tool_call_id, interrupt, status, created_at, expires_at, reason) \
     SELECT id, $1, run_id, tool_call_id, interrupt, 'pending', $2, \
       CASE WHEN expires_at IS NULL THEN NULL ELSE $2 + (expires_at - created_at) END, reason \
     FROM interrupts WHERE session_id = $3 AND run_id = $4";
/// The state a branch that parts where its run waits starts in: run, branch.
pub(crate) const BRANCH_WAITS: &str =
    "UPDATE sessions SET status = 'awaiting_input', active_run_id = $1 WHERE id = $2";

/// Records a run's end: id (`session:seq`), session, run (else the lease's), outcome,
/// error, time.
pub(crate) const INSERT_RUN_END: &str = "INSERT INTO run_ends \
     (id, session_id, run_id, outcome, error, created_at) \
     VALUES ($1, $2, coalesce($3, (SELECT run_id FROM run_leases WHERE session_id = $2)), \
       $4, $5, $6) \
     ON CONFLICT (id) DO NOTHING";

/// Defines `insert_interrupts`, `insert_run_ends` and `add_spending` for a backend that runs them through
/// sqlx (`$conn`: its connection type; SQLite's writer runs the same constants through
/// rusqlite, `sqlite/raised.rs`); see [`super`] for why a macro.
macro_rules! interrupts_on {
    ($conn:ty) => {
        /// Records the interrupts a command raised.
        pub(super) async fn insert_interrupts(
            conn: &mut $conn,
            session: &str,
            interrupts: &[(String, shared::Interrupt)],
            now_ms: i64,
        ) -> Result<(), crate::store::StoreError> {
            for (run_id, interrupt) in interrupts {
                let json = serde_json::to_string(interrupt).expect("interrupts serialise");
                sqlx::query(crate::store::sql::interrupts::INSERT_INTERRUPT)
                    .bind(&interrupt.id)
                    .bind(session)
                    .bind(run_id)
                    .bind(interrupt.tool_call_id.as_deref().unwrap_or_default())
                    .bind(json)
                    .bind(now_ms)
                    .bind(crate::domain::deadline_ms(interrupt))
                    .bind(&interrupt.reason)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok(())
        }

        /// Records the runs a command ended (its entries got `first_seq`, …), so that a
        /// webhook announcing each is owed in the same transaction. A `RUN_ERROR` names
        /// no run: the run the session's lease was last taken for is the one it ends.
        pub(super) async fn insert_run_ends(
            conn: &mut $conn,
            session: &str,
            first_seq: i64,
            ends: &[crate::store::RunEnd],
            now_ms: i64,
        ) -> Result<(), crate::store::StoreError> {
            for end in ends {
                let seq = first_seq + end.index as i64;
                sqlx::query(crate::store::sql::interrupts::INSERT_RUN_END)
                    .bind(format!("{session}:{seq}"))
                    .bind(session)
                    .bind(end.run_id.as_deref())
                    .bind(end.outcome)
                    .bind(end.error.as_ref().map(|e| e.to_string()))
                    .bind(now_ms)
                    .execute(&mut *conn)
                    .await?;
                // A schedule's fire that started the run learns how it ended.
                sqlx::query(crate::store::sql::schedules::FIRE_OUTCOME)
                    .bind(end.outcome)
                    .bind(session)
                    .bind(end.run_id.as_deref())
                    .execute(&mut *conn)
                    .await?;
            }
            Ok(())
        }

        /// Adds what a command's model calls cost to its session owner's day.
        pub(super) async fn add_spending(
            conn: &mut $conn,
            session: &str,
            spending: Option<crate::store::Spending>,
            now_ms: i64,
        ) -> Result<(), crate::store::StoreError> {
            let Some(spending) = spending else {
                return Ok(());
            };
            sqlx::query(crate::store::sql::budgets::ADD_SPENDING)
                .bind(crate::store::day_of(now_ms))
                .bind(spending.cost_usd)
                .bind(spending.tokens as i64)
                .bind(i64::from(spending.calls))
                .bind(session)
                .execute(&mut *conn)
                .await?;
            Ok(())
        }
    };
}

pub(crate) use interrupts_on;
