//! Throwaway databases for tests and benchmarks: a fresh, empty PostgreSQL database for
//! each use, dropped (`WITH (FORCE)`, ending its connections) when the guard drops.
//!
//! Names start with `TANDEM_SCRATCH_PREFIX` (default `tandem_scratch`), so a test run can
//! drop whatever a killed test left behind without touching another run's databases.

use sqlx::{Connection, Executor, PgConnection};

/// The server scratch databases are created on unless `TANDEM_TEST_POSTGRES` names another.
pub const DEFAULT_SERVER: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A database that exists until this is dropped.
#[derive(Debug)]
pub struct ScratchDatabase {
    server: String,
    name: String,
    url: String,
}

impl ScratchDatabase {
    /// The URL of a database on the server to create scratch databases from.
    pub fn server() -> String {
        std::env::var("TANDEM_TEST_POSTGRES").unwrap_or_else(|_| DEFAULT_SERVER.to_string())
    }

    /// Creates a fresh database on [`Self::server`]. Blocking (on a thread of its own), so
    /// it may be called from synchronous and asynchronous code alike.
    pub fn create() -> Result<Self, String> {
        let server = Self::server();
        let prefix =
            std::env::var("TANDEM_SCRATCH_PREFIX").unwrap_or_else(|_| "tandem_scratch".into());
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let url = with_database(&server, &name)?;
        run_on_server(&server, format!("CREATE DATABASE \"{name}\""))?;
        Ok(Self { server, name, url })
    }

    /// The database's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let drop = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        if let Err(error) = run_on_server(&self.server, drop) {
            eprintln!("could not drop scratch database {}: {error}", self.name);
        }
    }
}

/// `server` with its database name replaced by `name`.
fn with_database(server: &str, name: &str) -> Result<String, String> {
    let authority = server
        .find("://")
        .map(|at| at + 3)
        .ok_or_else(|| format!("`{server}` is not a postgres:// URL"))?;
    let (base, query) = match server.find('?') {
        Some(at) => server.split_at(at),
        None => (server, ""),
    };
    let base = match base[authority..].find('/') {
        Some(slash) => &base[..authority + slash],
        None => base,
    };
    Ok(format!("{base}/{name}{query}"))
}

/// Runs one statement on the server, on a thread with a runtime of its own.
fn run_on_server(server: &str, statement: String) -> Result<(), String> {
    let server = server.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let mut conn = PgConnection::connect(&server)
                .await
                .map_err(|e| format!("cannot reach PostgreSQL at {server}: {e}"))?;
            conn.execute(statement.as_str())
                .await
                .map_err(|e| e.to_string())?;
            conn.close().await.map_err(|e| e.to_string())
        })
    })
    .join()
    .map_err(|_| "the scratch database thread panicked".to_string())?
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn the_database_name_is_replaced_and_options_kept() {
        let cases = [
            ("postgres://u@h:5432/postgres", "postgres://u@h:5432/x"),
            ("postgres://u@h", "postgres://u@h/x"),
            (
                "postgresql://h/db?sslmode=disable",
                "postgresql://h/x?sslmode=disable",
            ),
        ];
        for (server, expected) in cases {
            assert_eq!(with_database(server, "x").unwrap(), expected);
        }
    }
}
