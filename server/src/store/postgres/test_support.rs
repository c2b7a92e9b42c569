//! What the PostgreSQL store's unit tests share: a store on a scratch database.

use super::scratch::ScratchDatabase;
use super::PostgresStore;

/// A migrated store on a fresh database; keep the guard alive as long as the store.
pub async fn temp_store() -> (ScratchDatabase, PostgresStore) {
    let database = ScratchDatabase::create()
        .expect("PostgreSQL must be reachable for these tests (scripts/test.sh starts it)");
    let store = PostgresStore::connect(database.url(), &Default::default())
        .await
        .unwrap();
    (database, store)
}
