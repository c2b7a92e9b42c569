//! Users, API tokens and browser sign-ins, in SQL both backends run. Only hashes of
//! secrets are stored; a revoked user matches no token and no sign-in.

/// Defines this module's functions for one backend: `$conn` is its pool or connection
/// type, `$announce` its `async fn(&mut Connection, &Change) -> Result<(), StoreError>`
/// that tells the other processes sharing the database of a credential that ended, inside
/// the transaction that ends it. The SQL is the same on SQLite and PostgreSQL (`$1` placeholders, `TRUE` and
/// `FALSE`, `ON CONFLICT`, `RETURNING`); a macro rather than functions generic over
/// sqlx's `Database`, whose executor, encode and decode bounds would spread to every
/// caller.
macro_rules! users_on {
    ($conn:ty, $announce:path) => {

        use crate::domain::{TokenHash, UserId, UserName};
        use crate::store::{Change, Ending, SignInMatch, StoreError, UserRow};

        type UserTuple = (String, String, i64, Option<i64>);
        const USER_COLUMNS: &str = "users.id, users.name, users.created_at, users.revoked_at";

        fn user_from((id, name, created_at, revoked_at): UserTuple) -> Result<UserRow, StoreError> {
            let corrupt = |e: &dyn std::fmt::Display| StoreError::Corrupt(e.to_string());
            Ok(UserRow {
                id: UserId::parse(&id).map_err(|e| corrupt(&e))?,
                name: UserName::parse_any(&name).map_err(|e| corrupt(&e))?,
                created_at,
                revoked_at,
            })
        }

        /// A user row with the hash that found it.
        type MatchedTuple = (String, String, i64, Option<i64>, Vec<u8>);

        fn matched(row: Option<MatchedTuple>) -> MatchResult {
            let Some((id, name, created_at, revoked_at, hash)) = row else {
                return Ok(None);
            };
            let hash = TokenHash::from_bytes(&hash)
                .ok_or_else(|| StoreError::Corrupt("a stored hash is not 32 bytes".into()))?;
            Ok(Some((user_from((id, name, created_at, revoked_at))?, hash)))
        }

        type MatchResult = Result<Option<(UserRow, TokenHash)>, StoreError>;

        pub(super) async fn create_user(
            pool: &$conn,
            id: UserId,
            name: &UserName,
            token: TokenHash,
            now_ms: i64,
        ) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
            let inserted = sqlx::query(
                "INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
            )
            .bind(id.to_string())
            .bind(name.as_str())
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
            if inserted.rows_affected() == 0 {
                return Ok(false);
            }
            sqlx::query("INSERT INTO api_tokens (hash, user_id, created_at) VALUES ($1, $2, $3)")
                .bind(&token.as_bytes()[..])
                .bind(id.to_string())
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(true)
        }

        pub(super) async fn user(pool: &$conn, id: UserId) -> Result<Option<UserRow>, StoreError> {
            let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
            let row: Option<UserTuple> = sqlx::query_as(&sql)
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?;
            row.map(user_from).transpose()
        }

        pub(super) async fn list_users(pool: &$conn) -> Result<Vec<UserRow>, StoreError> {
            let sql = format!("SELECT {USER_COLUMNS} FROM users ORDER BY created_at, name");
            let rows: Vec<UserTuple> = sqlx::query_as(&sql).fetch_all(pool).await?;
            rows.into_iter().map(user_from).collect()
        }

        pub(super) async fn revoke_user(
            pool: &$conn,
            name: &UserName,
            now_ms: i64,
        ) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
            let revoked: Option<(String,)> = sqlx::query_as(
                "UPDATE users SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL RETURNING id",
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
            let user = UserId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            $announce(&mut *tx, &Change::Ended(Ending::UserRevoked(user))).await?;
            tx.commit().await?;
            Ok(true)
        }

        pub(super) async fn user_for_token(pool: &$conn, token: TokenHash) -> MatchResult {
            let sql = format!(
                "SELECT {USER_COLUMNS}, api_tokens.hash FROM api_tokens \
                 JOIN users ON users.id = api_tokens.user_id \
                 WHERE api_tokens.hash = $1 AND users.revoked_at IS NULL"
            );
            matched(
                sqlx::query_as(&sql)
                    .bind(&token.as_bytes()[..])
                    .fetch_optional(pool)
                    .await?,
            )
        }

        pub(super) async fn create_sign_in(
            pool: &$conn,
            cookie: TokenHash,
            user: UserId,
            now_ms: i64,
            expires_at_ms: i64,
        ) -> Result<(), StoreError> {
            let mut tx = pool.begin().await?;
            sqlx::query("DELETE FROM sign_ins WHERE expires_at <= $1")
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "INSERT INTO sign_ins (hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
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

        pub(super) async fn user_for_sign_in(
            pool: &$conn,
            cookie: TokenHash,
            now_ms: i64,
        ) -> Result<Option<SignInMatch>, StoreError> {
            let sql = format!(
                "SELECT {USER_COLUMNS}, sign_ins.hash, sign_ins.expires_at FROM sign_ins \
                 JOIN users ON users.id = sign_ins.user_id \
                 WHERE sign_ins.hash = $1 AND sign_ins.expires_at > $2 AND users.revoked_at IS NULL"
            );
            let row: Option<(String, String, i64, Option<i64>, Vec<u8>, i64)> = sqlx::query_as(&sql)
                .bind(&cookie.as_bytes()[..])
                .bind(now_ms)
                .fetch_optional(pool)
                .await?;
            let Some((id, name, created_at, revoked_at, hash, expires_at_ms)) = row else {
                return Ok(None);
            };
            let found = matched(Some((id, name, created_at, revoked_at, hash)))?;
            Ok(found.map(|(user, stored)| SignInMatch { user, stored, expires_at_ms }))
        }

        pub(super) async fn delete_sign_in(pool: &$conn, cookie: TokenHash) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
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
    };
}

pub(crate) use users_on;
