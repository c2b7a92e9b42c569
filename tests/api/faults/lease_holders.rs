//! Who executes each session's run, read from the lease table (PostgreSQL): under load a
//! restart can take longer than a lease, and then another instance executes the runs the
//! kill harness posted to the restarted one, so the harness asks instead of assuming.

use std::collections::HashMap;

/// A reader of the shared database's `run_leases` (nothing on SQLite, where one
/// instance executes every run).
pub struct LeaseHolders(Option<sqlx::PgConnection>);

impl LeaseHolders {
    /// Connects to the database at `url` when the suite runs on PostgreSQL.
    pub async fn connect(url: &str) -> Self {
        if !crate::helpers::on_postgres() {
            return Self(None);
        }
        let connection = <sqlx::PgConnection as sqlx::Connection>::connect(url);
        Self(Some(connection.await.expect("the test database answers")))
    }

    /// For each of `sessions`, the instance slot holding its running run's lease, by the
    /// name its owner starts with (`harness-<slot>/…`); `None` on SQLite or when no
    /// lease names one.
    pub async fn of<'a>(&mut self, sessions: impl Iterator<Item = &'a str>) -> Vec<Option<usize>> {
        let Some(connection) = self.0.as_mut() else {
            return sessions.map(|_| None).collect();
        };
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT l.session_id, l.owner FROM run_leases l \
             JOIN sessions s ON s.id = l.session_id WHERE s.status = 'running'",
        )
        .fetch_all(connection)
        .await
        .expect("the lease table reads");
        let owners: HashMap<String, String> = rows.into_iter().collect();
        sessions
            .map(|session| {
                let owner = owners.get(session)?;
                let (name, _) = owner.split_once('/')?;
                name.strip_prefix("harness-")?.parse().ok()
            })
            .collect()
    }
}
