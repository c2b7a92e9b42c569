//! Schedules and their fires in SQL both backends run.

/// A schedule's columns, in [`ScheduleRow`](crate::store::ScheduleRow)'s order.
pub(crate) const SCHEDULE_COLUMNS: &str =
    "id, owner_id, name, spec, enabled, next_fire_at, version, created_at, updated_at";

/// A fire's columns, its outcome as read: the run's end (a pause: what became of its
/// question), or what its session is doing.
pub(crate) const FIRE_COLUMNS: &str = "f.schedule_id, f.scheduled_for, f.status, f.fired_at, \
     f.session_id, f.run_id, \
     CASE WHEN f.status <> 'fired' THEN NULL \
          WHEN f.outcome = 'interrupt' THEN coalesce((SELECT CASE i.status \
              WHEN 'pending' THEN 'waiting' WHEN 'resolved' THEN 'answered' ELSE i.status END \
            FROM interrupts i WHERE i.session_id = f.session_id AND i.run_id = f.run_id \
            ORDER BY i.created_at DESC LIMIT 1), 'waiting') \
          WHEN f.outcome = 'success' THEN 'succeeded' \
          WHEN f.outcome = 'error' THEN 'failed' \
          WHEN f.outcome = 'cancelled' THEN 'cancelled' \
          WHEN s.status IS NOT NULL AND s.status <> 'idle' THEN 'running' \
          ELSE NULL END, \
     f.reason, f.manual";

/// Records the outcome of a run a fire started, with the run's terminal event: outcome,
/// session, run (else the run the session's lease was taken for).
pub(crate) const FIRE_OUTCOME: &str = "UPDATE schedule_fires SET outcome = $1 \
     WHERE session_id = $2 \
       AND run_id = coalesce($3, (SELECT run_id FROM run_leases WHERE session_id = $2)) \
       AND outcome IS NULL";

/// A schedule's row as selected.
pub(crate) type ScheduleTuple = (
    String,
    String,
    String,
    String,
    bool,
    Option<i64>,
    i64,
    i64,
    i64,
);
/// A fire's row as selected.
pub(crate) type FireTuple = (
    String,
    i64,
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
);

/// A schedule from its row.
pub(crate) fn schedule_row(
    (id, owner, name, spec, enabled, next_fire_at, version, created_at, updated_at): ScheduleTuple,
) -> Result<crate::store::ScheduleRow, crate::store::StoreError> {
    let owner = crate::domain::UserId::parse(&owner)
        .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?;
    Ok(crate::store::ScheduleRow {
        id,
        owner,
        name,
        spec,
        enabled,
        next_fire_at,
        version,
        created_at,
        updated_at,
    })
}

/// A fire from its row.
pub(crate) fn fire_row(
    (schedule_id, scheduled_for, status, fired_at, session_id, run_id, outcome, reason, manual): FireTuple,
) -> Result<crate::store::FireRow, crate::store::StoreError> {
    Ok(crate::store::FireRow {
        schedule_id,
        scheduled_for,
        status,
        fired_at,
        session_id,
        run_id,
        outcome,
        reason,
        manual,
    })
}

/// Implements [`crate::store::Schedules`] for a backend (the arguments [`super`]
/// describes, with `$announce` as `users_on` takes it and `$skip_locked` as the webhook
/// claim does).
macro_rules! schedules_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $writes:ident, $reads:ident, $announce:path,
     $skip_locked:literal) => {
        impl<$($generics)*> crate::store::Schedules for $store {
            async fn schedules(
                &self,
                owner: crate::domain::UserId,
            ) -> Result<Vec<crate::store::ScheduleRow>, crate::store::StoreError> {
                use crate::store::sql::schedules::{schedule_row, SCHEDULE_COLUMNS};
                crate::store::sql::rows_of!(
                    &$keeper(self).$reads,
                    &format!("SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE owner_id = $1 \
                              ORDER BY created_at, id"),
                    schedule_row,
                    owner.to_string(),
                )
            }

            async fn schedule(
                &self,
                owner: crate::domain::UserId,
                id: &str,
            ) -> Result<Option<crate::store::ScheduleRow>, crate::store::StoreError> {
                use crate::store::sql::schedules::{schedule_row, SCHEDULE_COLUMNS, ScheduleTuple};
                let row: Option<ScheduleTuple> = sqlx::query_as(&format!(
                    "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE id = $1 AND owner_id = $2"
                ))
                .bind(id)
                .bind(owner.to_string())
                .fetch_optional(&$keeper(self).$writes)
                .await?;
                row.map(schedule_row).transpose()
            }

            async fn add_schedule(
                &self,
                row: &crate::store::ScheduleRow,
            ) -> Result<(), crate::store::StoreError> {
                let mut tx = $keeper(self).$writes.begin().await?;
                sqlx::query(
                    "INSERT INTO schedules (id, owner_id, name, spec, enabled, next_fire_at, \
                       version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(&row.id)
                .bind(row.owner.to_string())
                .bind(&row.name)
                .bind(&row.spec)
                .bind(row.enabled)
                .bind(row.next_fire_at)
                .bind(row.version)
                .bind(row.created_at)
                .bind(row.updated_at)
                .execute(&mut *tx)
                .await?;
                $announce(&mut *tx, &crate::store::Change::Schedules).await?;
                tx.commit().await?;
                Ok(())
            }

            async fn change_schedule(
                &self,
                owner: crate::domain::UserId,
                id: &str,
                change: &crate::store::ScheduleChange,
                now_ms: i64,
            ) -> Result<Option<crate::store::ScheduleRow>, crate::store::StoreError> {
                use crate::store::sql::schedules::{schedule_row, SCHEDULE_COLUMNS, ScheduleTuple};
                let mut tx = $keeper(self).$writes.begin().await?;
                let row: Option<ScheduleTuple> = sqlx::query_as(&format!(
                    "UPDATE schedules SET name = $1, spec = $2, enabled = $3, next_fire_at = $4, \
                       version = version + 1, updated_at = $5 \
                     WHERE id = $6 AND owner_id = $7 RETURNING {SCHEDULE_COLUMNS}"
                ))
                .bind(&change.name)
                .bind(&change.spec)
                .bind(change.enabled)
                .bind(change.next_fire_at)
                .bind(now_ms)
                .bind(id)
                .bind(owner.to_string())
                .fetch_optional(&mut *tx)
                .await?;
                $announce(&mut *tx, &crate::store::Change::Schedules).await?;
                tx.commit().await?;
                row.map(schedule_row).transpose()
            }

            async fn delete_schedule(
                &self,
                owner: crate::domain::UserId,
                id: &str,
            ) -> Result<bool, crate::store::StoreError> {
                let mut tx = $keeper(self).$writes.begin().await?;
                sqlx::query(
                    "DELETE FROM schedule_fires WHERE schedule_id = \
                       (SELECT id FROM schedules WHERE id = $1 AND owner_id = $2)",
                )
                .bind(id)
                .bind(owner.to_string())
                .execute(&mut *tx)
                .await?;
                let deleted = sqlx::query("DELETE FROM schedules WHERE id = $1 AND owner_id = $2")
                    .bind(id)
                    .bind(owner.to_string())
                    .execute(&mut *tx)
                    .await?;
                $announce(&mut *tx, &crate::store::Change::Schedules).await?;
                tx.commit().await?;
                Ok(deleted.rows_affected() > 0)
            }

            async fn claim_due_schedules(
                &self,
                instance: &str,
                now_ms: i64,
                until_ms: i64,
                limit: i64,
            ) -> Result<Vec<crate::store::ScheduleRow>, crate::store::StoreError> {
                use crate::store::sql::schedules::{schedule_row, SCHEDULE_COLUMNS};
                let rows: Result<Vec<crate::store::ScheduleRow>, crate::store::StoreError> = crate::store::sql::rows_of!(
                    &$keeper(self).$writes,
                    &format!(
                        "UPDATE schedules SET claimed_by = $1, claimed_until = $2 \
                         WHERE id IN (SELECT id FROM schedules \
                           WHERE enabled AND next_fire_at <= $3 \
                             AND (claimed_until IS NULL OR claimed_until < $3) \
                             AND owner_id IN (SELECT id FROM users WHERE revoked_at IS NULL) \
                           ORDER BY next_fire_at LIMIT $4 {}) \
                         RETURNING {SCHEDULE_COLUMNS}",
                        $skip_locked
                    ),
                    schedule_row,
                    instance,
                    until_ms,
                    now_ms,
                    limit,
                );
                let mut rows = rows?;
                rows.sort_by_key(|row| row.next_fire_at);
                Ok(rows)
            }

            async fn settle_schedule(
                &self,
                id: &str,
                instance: &str,
                version: i64,
                next: Option<i64>,
            ) -> Result<(), crate::store::StoreError> {
                sqlx::query(
                    "UPDATE schedules SET \
                       next_fire_at = CASE WHEN version = $1 THEN $2 ELSE next_fire_at END, \
                       claimed_by = NULL, claimed_until = NULL \
                     WHERE id = $3 AND claimed_by = $4",
                )
                .bind(version)
                .bind(next)
                .bind(id)
                .bind(instance)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(())
            }

            async fn next_schedule_due(&self) -> Result<Option<i64>, crate::store::StoreError> {
                Ok(sqlx::query_scalar(
                    "SELECT min(CASE WHEN claimed_until IS NOT NULL AND claimed_until > next_fire_at \
                                THEN claimed_until ELSE next_fire_at END) \
                     FROM schedules WHERE enabled AND next_fire_at IS NOT NULL \
                       AND owner_id IN (SELECT id FROM users WHERE revoked_at IS NULL)",
                )
                .fetch_one(&$keeper(self).$writes)
                .await?)
            }

            async fn record_fire(
                &self,
                fire: &crate::store::FireRow,
            ) -> Result<bool, crate::store::StoreError> {
                let inserted = sqlx::query(
                    "INSERT INTO schedule_fires (schedule_id, scheduled_for, status, fired_at, \
                       session_id, run_id, reason, manual) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (schedule_id, scheduled_for) DO NOTHING",
                )
                .bind(&fire.schedule_id)
                .bind(fire.scheduled_for)
                .bind(&fire.status)
                .bind(fire.fired_at)
                .bind(fire.session_id.as_deref())
                .bind(fire.run_id.as_deref())
                .bind(fire.reason.as_deref())
                .bind(fire.manual)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(inserted.rows_affected() > 0)
            }

            async fn fires(
                &self,
                id: &str,
                limit: i64,
            ) -> Result<Vec<crate::store::FireRow>, crate::store::StoreError> {
                use crate::store::sql::schedules::{fire_row, FIRE_COLUMNS};
                crate::store::sql::rows_of!(
                    &$keeper(self).$writes,
                    &format!(
                        "SELECT {FIRE_COLUMNS} FROM schedule_fires f \
                         LEFT JOIN sessions s ON s.id = f.session_id AND NOT s.deleted \
                         WHERE f.schedule_id = $1 ORDER BY f.scheduled_for DESC LIMIT $2"
                    ),
                    fire_row,
                    id,
                    limit,
                )
            }

            async fn last_fired(
                &self,
                id: &str,
            ) -> Result<Option<crate::store::FireRow>, crate::store::StoreError> {
                use crate::store::sql::schedules::{fire_row, FireTuple, FIRE_COLUMNS};
                let row: Option<FireTuple> = sqlx::query_as(&format!(
                    "SELECT {FIRE_COLUMNS} FROM schedule_fires f \
                     LEFT JOIN sessions s ON s.id = f.session_id AND NOT s.deleted \
                     WHERE f.schedule_id = $1 AND f.status = 'fired' \
                     ORDER BY f.fired_at DESC, f.scheduled_for DESC LIMIT 1"
                ))
                .bind(id)
                .fetch_optional(&$keeper(self).$writes)
                .await?;
                row.map(fire_row).transpose()
            }
        }
    };
}

pub(crate) use schedules_on;
