//! Users, API tokens and browser sign-ins, in SQL both backends run. Only hashes of
//! secrets are stored; a revoked user matches no token and no sign-in.

/// Implements [`crate::store::Users`] for a backend's store (the arguments are those
/// [`super`] describes, with `$announce`: the backend's `async fn(&mut Connection,
/// &Change) -> Result<(), StoreError>` that tells the other processes sharing the database
/// of a credential that ended, inside the transaction that ends it).
macro_rules! users_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $writes:ident, $reads:ident, $announce:path) => {
        impl<$($generics)*> crate::store::Users for $store {
            async fn create_user(
                &self,
                id: crate::domain::UserId,
                name: &crate::domain::UserName,
                token: crate::domain::TokenHash,
                now_ms: i64,
            ) -> Result<bool, crate::store::StoreError> {
                let mut tx = $keeper(self).$writes.begin().await?;
                let inserted = sqlx::query(
                    "INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (name) DO NOTHING",
                )
                .bind(id.to_string())
                .bind(name.as_str())
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
                if inserted.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query(
                    "INSERT INTO api_tokens (hash, user_id, created_at) VALUES ($1, $2, $3)",
                )
                .bind(&token.as_bytes()[..])
                .bind(id.to_string())
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn user(
                &self,
                id: crate::domain::UserId,
            ) -> Result<Option<crate::store::UserRow>, crate::store::StoreError> {
                use crate::store::sql::users::{user_from, UserTuple, USER_COLUMNS};
                let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
                let row: Option<UserTuple> = sqlx::query_as(&sql)
                    .bind(id.to_string())
                    .fetch_optional(&$keeper(self).$reads)
                    .await?;
                row.map(user_from).transpose()
            }

            async fn list_users(
                &self,
            ) -> Result<Vec<crate::store::UserRow>, crate::store::StoreError> {
                use crate::store::sql::users::{user_from, UserTuple, USER_COLUMNS};
                let sql = format!("SELECT {USER_COLUMNS} FROM users ORDER BY created_at, name");
                let rows: Vec<UserTuple> =
                    sqlx::query_as(&sql).fetch_all(&$keeper(self).$reads).await?;
                rows.into_iter().map(user_from).collect()
            }

            async fn revoke_user(
                &self,
                name: &crate::domain::UserName,
                now_ms: i64,
            ) -> Result<bool, crate::store::StoreError> {
                use crate::store::{Change, Ending, StoreError};
                let mut tx = $keeper(self).$writes.begin().await?;
                let revoked: Option<(String,)> = sqlx::query_as(
                    "UPDATE users SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL \
                     RETURNING id",
                )
                .bind(now_ms)
                .bind(name.as_str())
                .fetch_optional(&mut *tx)
                .await?;
                let Some((id,)) = revoked else {
                    return Ok(false);
                };
                for table in ["api_tokens", "sign_ins"] {
                    sqlx::query(&format!("DELETE FROM {table} WHERE user_id = $1"))
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                }
                let user = crate::domain::UserId::parse(&id)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                $announce(&mut *tx, &Change::Ended(Ending::UserRevoked(user))).await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn user_for_token(
                &self,
                token: crate::domain::TokenHash,
            ) -> crate::store::sql::users::MatchResult {
                use crate::store::sql::users::{matched, USER_COLUMNS};
                let sql = format!(
                    "SELECT {USER_COLUMNS}, api_tokens.hash FROM api_tokens \
                     JOIN users ON users.id = api_tokens.user_id \
                     WHERE api_tokens.hash = $1 AND users.revoked_at IS NULL"
                );
                matched(
                    sqlx::query_as(&sql)
                        .bind(&token.as_bytes()[..])
                        .fetch_optional(&$keeper(self).$reads)
                        .await?,
                )
            }

            async fn create_sign_in(
                &self,
                cookie: crate::domain::TokenHash,
                user: crate::domain::UserId,
                now_ms: i64,
                expires_at_ms: i64,
            ) -> Result<(), crate::store::StoreError> {
                let mut tx = $keeper(self).$writes.begin().await?;
                sqlx::query("DELETE FROM sign_ins WHERE expires_at <= $1")
                    .bind(now_ms)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(
                    "INSERT INTO sign_ins (hash, user_id, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(&cookie.as_bytes()[..])
                .bind(user.to_string())
                .bind(now_ms)
                .bind(expires_at_ms)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn user_for_sign_in(
                &self,
                cookie: crate::domain::TokenHash,
                now_ms: i64,
            ) -> Result<Option<crate::store::SignInMatch>, crate::store::StoreError> {
                use crate::store::sql::users::{matched, USER_COLUMNS};
                let sql = format!(
                    "SELECT {USER_COLUMNS}, sign_ins.hash, sign_ins.expires_at FROM sign_ins \
                     JOIN users ON users.id = sign_ins.user_id \
                     WHERE sign_ins.hash = $1 AND sign_ins.expires_at > $2 \
                       AND users.revoked_at IS NULL"
                );
                let row: Option<(String, String, i64, Option<i64>, Vec<u8>, i64)> =
                    sqlx::query_as(&sql)
                        .bind(&cookie.as_bytes()[..])
                        .bind(now_ms)
                        .fetch_optional(&$keeper(self).$reads)
                        .await?;
                let Some((id, name, created_at, revoked_at, hash, expires_at_ms)) = row else {
                    return Ok(None);
                };
                let found = matched(Some((id, name, created_at, revoked_at, hash)))?;
                Ok(found.map(|(user, stored)| crate::store::SignInMatch {
                    user,
                    stored,
                    expires_at_ms,
                }))
            }

            async fn delete_sign_in(
                &self,
                cookie: crate::domain::TokenHash,
            ) -> Result<bool, crate::store::StoreError> {
                use crate::store::{Change, Ending};
                let mut tx = $keeper(self).$writes.begin().await?;
                let done = sqlx::query("DELETE FROM sign_ins WHERE hash = $1")
                    .bind(&cookie.as_bytes()[..])
                    .execute(&mut *tx)
                    .await?;
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                $announce(&mut *tx, &Change::Ended(Ending::SignedOut(cookie))).await?;
                tx.commit().await?;
                Ok(true)
            }
        }
    };
}

pub(crate) use users_on;

use crate::domain::{TokenHash, UserId, UserName};
use crate::store::{StoreError, UserRow};

/// A user row as its columns read.
pub(crate) type UserTuple = (String, String, i64, Option<i64>);
/// The columns a [`UserTuple`] reads, in its order.
pub(crate) const USER_COLUMNS: &str = "users.id, users.name, users.created_at, users.revoked_at";

/// A user row with the hash that found it.
pub(crate) type MatchedTuple = (String, String, i64, Option<i64>, Vec<u8>);

/// The user a secret matched, with the stored hash that matched.
pub(crate) type MatchResult = Result<Option<(UserRow, TokenHash)>, StoreError>;

/// A user from its columns.
pub(crate) fn user_from(
    (id, name, created_at, revoked_at): UserTuple,
) -> Result<UserRow, StoreError> {
    let corrupt = |e: &dyn std::fmt::Display| StoreError::Corrupt(e.to_string());
    Ok(UserRow {
        id: UserId::parse(&id).map_err(|e| corrupt(&e))?,
        name: UserName::parse_any(&name).map_err(|e| corrupt(&e))?,
        created_at,
        revoked_at,
    })
}

/// The user of a matched row, if one matched.
pub(crate) fn matched(row: Option<MatchedTuple>) -> MatchResult {
    let Some((id, name, created_at, revoked_at, hash)) = row else {
        return Ok(None);
    };
    let hash = TokenHash::from_bytes(&hash)
        .ok_or_else(|| StoreError::Corrupt("a stored hash is not 32 bytes".into()))?;
    Ok(Some((user_from((id, name, created_at, revoked_at))?, hash)))
}
