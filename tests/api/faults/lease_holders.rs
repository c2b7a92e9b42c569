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

    /// For each of `sessions`, who executes its run, by the name its lease's owner starts
    /// with (`harness-<slot>/…`).
    pub async fn of<'a>(&mut self, sessions: impl Iterator<Item = &'a str>) -> Vec<Holder> {
        let Some(connection) = self.0.as_mut() else {
            return sessions.map(|_| Holder::Unknown).collect();
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
                let slot = owners.get(session).and_then(|owner| {
                    let (name, _) = owner.split_once('/')?;
                    name.strip_prefix("harness-")?.parse().ok()
                });
                slot.map_or(Holder::Nothing, Holder::Instance)
            })
            .collect()
    }
}

/// Who executes a session's run, as the lease table says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// The instance in this slot holds the lease of the session's running run.
    Instance(usize),
    /// The session runs nothing: no run was executing. (A run some instance is starting
    /// at this moment has not committed its start, and with it its lease, yet.)
    Nothing,
    /// Not known: on SQLite, where the one instance executes every run.
    Unknown,
}

impl Holder {
    /// The slot of the instance holding the lease, if one does.
    pub fn instance(self) -> Option<usize> {
        match self {
            Self::Instance(slot) => Some(slot),
            Self::Nothing | Self::Unknown => None,
        }
    }
}
