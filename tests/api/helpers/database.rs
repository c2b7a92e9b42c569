//! Test databases: a SQLite file in the test's folder or a scratch PostgreSQL database
//! (`TANDEM_TEST_BACKEND=postgres`), and users created directly in them.

use std::path::{Path, PathBuf};

/// The file name of a test's SQLite database inside its folder.
pub const DATABASE_FILE: &str = "tandem.db";

/// Whether the suite runs on PostgreSQL (`TANDEM_TEST_BACKEND=postgres`): every test then
/// gets a scratch database of its own on the server `TANDEM_TEST_POSTGRES` names.
/// Otherwise each test gets a SQLite file in its folder.
pub fn on_postgres() -> bool {
    match std::env::var("TANDEM_TEST_BACKEND").as_deref() {
        Ok("postgres") => true,
        Ok("sqlite") | Err(_) => false,
        Ok(other) => panic!("TANDEM_TEST_BACKEND must be sqlite or postgres, not {other}"),
    }
}

/// A test's folder (scripts, workspaces, the SQLite file) and, on PostgreSQL, its scratch
/// database: both exist as long as this does.
pub struct TestDir {
    dir: tempfile::TempDir,
    database: Option<tandem::store::ScratchDatabase>,
}

impl TestDir {
    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The SQLite file, when the test runs on SQLite.
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        self.database
            .is_none()
            .then(|| self.dir.path().join(DATABASE_FILE))
    }

    /// Everything the database holds, as bytes to search: the SQLite file with its WAL,
    /// or a `pg_dump` of the scratch database.
    pub fn database_contents(&self) -> Vec<(String, Vec<u8>)> {
        match &self.database {
            Some(database) => {
                let dump = std::process::Command::new("pg_dump")
                    .args(["--data-only", database.url()])
                    .output()
                    .expect("pg_dump runs");
                assert!(dump.status.success(), "pg_dump: {dump:?}");
                vec![(format!("a dump of {}", database.name()), dump.stdout)]
            }
            None => std::fs::read_dir(self.dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .filter(|path| {
                    path.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with(DATABASE_FILE)
                })
                .map(|path| (path.display().to_string(), std::fs::read(&path).unwrap()))
                .collect(),
        }
    }
}

/// A fresh, empty database for one test (on the backend the suite runs on), and a folder
/// for the test's other files; both live as long as the returned [`TestDir`]. The one
/// place tests get a database URL from.
pub fn fresh_database() -> (TestDir, String) {
    if on_postgres() {
        return fresh_postgres();
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join(DATABASE_FILE).display());
    (
        TestDir {
            dir,
            database: None,
        },
        url,
    )
}

/// A fresh PostgreSQL database whichever backend the suite runs on (for what only a
/// shared database can do: several instances), and a folder.
pub fn fresh_postgres() -> (TestDir, String) {
    let database = tandem::store::ScratchDatabase::create().unwrap();
    let url = database.url().to_string();
    let dir = TestDir {
        dir: tempfile::tempdir().unwrap(),
        database: Some(database),
    };
    (dir, url)
}

/// Creates users in the database at `url`; returns their API tokens.
pub async fn add_users(url: &str, names: &[&str]) -> Vec<String> {
    let names = names.iter().map(|name| name.to_string()).collect();
    tandem::store::open(url, &Default::default(), AddUsers(names))
        .await
        .unwrap()
}

/// Creates users on whichever backend the URL names; gives their API tokens.
struct AddUsers(Vec<String>);

impl tandem::store::UseStore for AddUsers {
    type Output = Vec<String>;

    async fn with<S: tandem::store::Store>(self, store: std::sync::Arc<S>) -> Vec<String> {
        use tandem::auth::SecretToken;
        use tandem::domain::{UserId, UserName};
        let mut tokens = Vec::new();
        for name in self.0 {
            let token = SecretToken::api_token();
            let name = UserName::parse(&name).unwrap();
            let now = tandem::domain::now_ms();
            let created = store.create_user(UserId::generate(), &name, token.hash(), now);
            assert!(created.await.unwrap());
            tokens.push(token.expose().to_string());
        }
        tokens
    }
}

/// What a `SELECT COUNT(*) …` (or another query of one `BIGINT`) finds in the database at
/// `url`, read directly, past the app.
pub async fn count_in_database(url: &str, query: &str) -> i64 {
    use sqlx::Connection;
    let (count,): (i64,) = match url.strip_prefix("sqlite://") {
        Some(file) => {
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(file);
            let mut connection = sqlx::ConnectOptions::connect(&options).await.unwrap();
            sqlx::query_as(query)
                .fetch_one(&mut connection)
                .await
                .unwrap()
        }
        None => {
            let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query_as(query)
                .fetch_one(&mut connection)
                .await
                .unwrap()
        }
    };
    count
}
