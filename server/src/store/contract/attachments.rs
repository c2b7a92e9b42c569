//! The store's contract for attachments: stored once per user and content, freed when
//! nothing refers to them.

use super::user;
use crate::domain::{SessionId, UserId};
use crate::store::{ChunkStored, Store};

/// A quota no test here reaches.
const QUOTA: u64 = 1 << 20;

/// An upload of `text` by `owner` into `session`, finished: the blob its attachment names.
async fn attach<S: Store>(
    store: &S,
    owner: UserId,
    session: SessionId,
    id: &str,
    text: &[u8],
) -> String {
    use sha2::Digest;
    let blob = format!("blb_{id}");
    store
        .begin_blob(owner, &blob, "text/plain", 0)
        .await
        .unwrap();
    for (n, chunk) in text.chunks(4).enumerate() {
        let stored = store.put_chunk(owner, &blob, n as u32, chunk, QUOTA, 0);
        assert_eq!(stored.await.unwrap(), ChunkStored::Stored);
    }
    let upload = crate::store::FinishedUpload {
        blob,
        sha256: format!("{:x}", sha2::Sha256::digest(text)),
        bytes: text.len() as u64,
        attachment: crate::store::AttachmentRow {
            id: id.into(),
            owner,
            session,
            name: format!("{id}.txt"),
            blob: String::new(),
            media_type: String::new(),
            bytes: 0,
            sha256: String::new(),
            created_at: 0,
        },
    };
    store.finish_upload(&upload).await.unwrap()
}

/// The same bytes of one user are stored once; another user's are their own; a blob goes
/// when its last attachment's session does, and an upload that stopped moving goes too.
pub async fn attachments_are_stored_once_and_freed<S: Store>(store: &S) {
    let (alice, bob) = (user(store, "alice").await, user(store, "bob").await);
    let (first, second, theirs) = (
        SessionId::generate(),
        SessionId::generate(),
        SessionId::generate(),
    );
    for (owner, session) in [(alice, first), (alice, second), (bob, theirs)] {
        store.create_session(owner, session, None, 0).await.unwrap();
    }
    let text = b"the same bytes, twice";
    let one = attach(store, alice, first, "att_1", text).await;
    let two = attach(store, alice, second, "att_2", text).await;
    let other = attach(store, bob, theirs, "att_3", text).await;
    assert_eq!(one, two, "one blob for the same bytes of one user");
    assert_ne!(one, other, "another user's bytes are their own");
    assert_eq!(store.stored_bytes(alice).await.unwrap(), text.len() as u64);
    let row = store.attachment("att_2").await.unwrap().unwrap();
    assert_eq!(
        (row.owner, row.session, row.bytes),
        (alice, second, text.len() as u64)
    );
    let chunks = store.blob_chunks(&row.blob, 1, 2).await.unwrap();
    assert_eq!(
        chunks.concat(),
        text[4..12].to_vec(),
        "chunks read back in order from the one asked"
    );

    store
        .begin_blob(alice, "blb_cut", "text/plain", 0)
        .await
        .unwrap();
    let used = text.len() as u64;
    let stored = store.put_chunk(alice, "blb_cut", 0, b"half", used + 3, 10);
    assert_eq!(
        stored.await.unwrap(),
        ChunkStored::OverQuota { used },
        "a chunk that would pass the quota is not stored"
    );
    let stored = store.put_chunk(alice, "blb_cut", 0, b"half", used + 4, 10);
    assert_eq!(
        stored.await.unwrap(),
        ChunkStored::Stored,
        "one that fills it is"
    );
    assert_eq!(
        store.stored_bytes(alice).await.unwrap(),
        used + 4,
        "an upload's chunks count as they are stored"
    );
    store.delete_session(first).await.unwrap();
    assert_eq!(
        store.purge_blobs(1_000, 5).await.unwrap(),
        0,
        "the second session still refers to it; the upload moved at 10"
    );
    store.delete_session(second).await.unwrap();
    assert_eq!(
        store.purge_blobs(1_000, 11).await.unwrap(),
        2,
        "the unreferenced blob and the stalled upload"
    );
    assert_eq!(store.stored_bytes(alice).await.unwrap(), 0);
    assert!(store.attachment("att_1").await.unwrap().is_none());
    assert!(
        store.attachment("att_3").await.unwrap().is_some(),
        "bob's stays"
    );
}
