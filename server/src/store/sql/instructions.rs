//! A person's own instructions in SQL both backends run.

/// Implements [`crate::store::Instructions`] for a backend (the arguments [`super`]
/// describes).
macro_rules! instructions_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $writes:ident, $reads:ident) => {
        impl<$($generics)*> crate::store::Instructions for $store {
            async fn user_instructions(
                &self,
                user: crate::domain::UserId,
            ) -> Result<String, crate::store::StoreError> {
                let text: Option<String> =
                    sqlx::query_scalar("SELECT text FROM instructions WHERE user_id = $1")
                        .bind(user.to_string())
                        .fetch_optional(&$keeper(self).$reads)
                        .await?;
                Ok(text.unwrap_or_default())
            }

            async fn set_user_instructions(
                &self,
                user: crate::domain::UserId,
                text: &str,
                now_ms: i64,
            ) -> Result<(), crate::store::StoreError> {
                if text.is_empty() {
                    sqlx::query("DELETE FROM instructions WHERE user_id = $1")
                        .bind(user.to_string())
                        .execute(&$keeper(self).$writes)
                        .await?;
                    return Ok(());
                }
                sqlx::query(
                    "INSERT INTO instructions (user_id, text, updated_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (user_id) DO UPDATE SET text = excluded.text, \
                       updated_at = excluded.updated_at",
                )
                .bind(user.to_string())
                .bind(text)
                .bind(now_ms)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(())
            }
        }
    };
}

pub(crate) use instructions_on;
