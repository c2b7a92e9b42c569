//! Recording the interrupts a command raised, in SQL both backends run.

/// Defines `insert_interrupts` for one backend (`$conn`: its connection type); see
/// [`super::users`] for why a macro.
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
                sqlx::query(
                    "INSERT INTO interrupts \
                     (id, session_id, run_id, tool_call_id, interrupt, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&interrupt.id)
                .bind(session)
                .bind(run_id)
                .bind(interrupt.tool_call_id.as_deref().unwrap_or_default())
                .bind(json)
                .bind(now_ms)
                .bind(crate::domain::deadline_ms(interrupt))
                .execute(&mut *conn)
                .await?;
            }
            Ok(())
        }
    };
}

pub(crate) use interrupts_on;
