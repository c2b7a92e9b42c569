//! A person's own tools in SQL both backends run.

/// Implements [`crate::store::UserTools`] for a backend (the arguments [`super`]
/// describes).
macro_rules! user_tools_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $writes:ident, $reads:ident) => {
        impl<$($generics)*> crate::store::UserTools for $store {
            async fn user_tools(
                &self,
                user: crate::domain::UserId,
            ) -> Result<Vec<crate::store::UserToolRow>, crate::store::StoreError> {
                let rows: Vec<(String, String, String, i64, i64)> = sqlx::query_as(
                    "SELECT name, manifest, digest, module_bytes, updated_at FROM user_tools \
                     WHERE user_id = $1 ORDER BY name",
                )
                .bind(user.to_string())
                .fetch_all(&$keeper(self).$reads)
                .await?;
                Ok(rows
                    .into_iter()
                    .map(|(name, manifest, digest, module_bytes, updated_at)| {
                        crate::store::UserToolRow {
                            name,
                            manifest,
                            digest,
                            module_bytes,
                            updated_at,
                        }
                    })
                    .collect())
            }

            async fn user_tool_module(
                &self,
                user: crate::domain::UserId,
                name: &str,
                digest: &str,
            ) -> Result<Option<Vec<u8>>, crate::store::StoreError> {
                Ok(sqlx::query_scalar(
                    "SELECT module FROM user_tools \
                     WHERE user_id = $1 AND name = $2 AND digest = $3",
                )
                .bind(user.to_string())
                .bind(name)
                .bind(digest)
                .fetch_optional(&$keeper(self).$reads)
                .await?)
            }

            async fn put_user_tool(
                &self,
                user: crate::domain::UserId,
                tool: &crate::store::UserToolRow,
                module: &[u8],
            ) -> Result<bool, crate::store::StoreError> {
                let mut tx = $keeper(self).$writes.begin().await?;
                let existed: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM user_tools WHERE user_id = $1 AND name = $2",
                )
                .bind(user.to_string())
                .bind(&tool.name)
                .fetch_one(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO user_tools \
                       (user_id, name, manifest, module, digest, module_bytes, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) \
                     ON CONFLICT (user_id, name) DO UPDATE SET manifest = excluded.manifest, \
                       module = excluded.module, digest = excluded.digest, \
                       module_bytes = excluded.module_bytes, updated_at = excluded.updated_at",
                )
                .bind(user.to_string())
                .bind(&tool.name)
                .bind(&tool.manifest)
                .bind(module)
                .bind(&tool.digest)
                .bind(tool.module_bytes)
                .bind(tool.updated_at)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(existed == 0)
            }

            async fn delete_user_tool(
                &self,
                user: crate::domain::UserId,
                name: &str,
            ) -> Result<bool, crate::store::StoreError> {
                let deleted = sqlx::query("DELETE FROM user_tools WHERE user_id = $1 AND name = $2")
                    .bind(user.to_string())
                    .bind(name)
                    .execute(&$keeper(self).$writes)
                    .await?;
                Ok(deleted.rows_affected() > 0)
            }
        }
    };
}

pub(crate) use user_tools_on;
