//! What a command raised besides its events, written in its transaction on the log
//! writer's connection: the interrupts it pauses on, the runs it ends (the webhook
//! outbox's sources) and what its model calls spent. The statements are the ones
//! PostgreSQL runs ([`crate::store::sql::interrupts`]).

use rusqlite::{params, Connection};

use crate::store::sql::budgets::ADD_SPENDING;
use crate::store::sql::interrupts::{INSERT_INTERRUPT, INSERT_RUN_END};
use crate::store::{day_of, RunEnd, Spending, StoreError};

/// Records the interrupts a command raised.
pub(super) fn insert_interrupts(
    conn: &Connection,
    session: &str,
    interrupts: &[(String, shared::Interrupt)],
    now_ms: i64,
) -> Result<(), StoreError> {
    for (run_id, interrupt) in interrupts {
        let json = serde_json::to_string(interrupt).expect("interrupts serialise");
        conn.prepare_cached(INSERT_INTERRUPT)?.execute(params![
            interrupt.id,
            session,
            run_id,
            interrupt.tool_call_id.as_deref().unwrap_or_default(),
            json,
            now_ms,
            crate::domain::deadline_ms(interrupt),
            interrupt.reason,
        ])?;
    }
    Ok(())
}

/// Records the runs a command ended (its entries got `first_seq`, …), so that a webhook
/// announcing each is owed in the same transaction.
pub(super) fn insert_run_ends(
    conn: &Connection,
    session: &str,
    first_seq: i64,
    ends: &[RunEnd],
    now_ms: i64,
) -> Result<(), StoreError> {
    for end in ends {
        let seq = first_seq + end.index as i64;
        conn.prepare_cached(INSERT_RUN_END)?.execute(params![
            format!("{session}:{seq}"),
            session,
            end.run_id,
            end.outcome,
            end.error.as_ref().map(|e| e.to_string()),
            now_ms,
        ])?;
        // A schedule's fire that started the run learns how it ended.
        conn.prepare_cached(crate::store::sql::schedules::FIRE_OUTCOME)?
            .execute(params![end.outcome, session, end.run_id])?;
    }
    Ok(())
}

/// Adds what a command's model calls cost to its session owner's day.
pub(super) fn add_spending(
    conn: &Connection,
    session: &str,
    spending: Option<Spending>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let Some(spending) = spending else {
        return Ok(());
    };
    conn.prepare_cached(ADD_SPENDING)?.execute(params![
        day_of(now_ms),
        spending.cost_usd,
        spending.tokens as i64,
        spending.calls,
        session,
    ])?;
    Ok(())
}
