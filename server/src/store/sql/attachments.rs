//! Attachments and their blobs in SQL both backends run (`BLOB` on SQLite, `bytea` on
//! PostgreSQL, both bound as bytes).

/// The columns of an attachment with its blob, in the order [`attachments_on`]'s row
/// decoding reads them.
pub(crate) const ATTACHMENT_COLUMNS: &str = "a.id, a.owner_id, a.session_id, a.name, a.blob_id, \
     b.media_type, b.bytes, b.sha256, a.created_at";

/// Defines the attachment functions for one backend and implements
/// [`crate::store::Attachments`] with them (the arguments [`super`] describes, with
/// `$conn`: the backend's pool type, `$wrote`: what the keeper does after each write, a
/// function of it, `$hold_user`: the backend's statement that makes a transaction the only
/// one of a user (`$1`) until it ends).
macro_rules! attachments_on {
    (
        [$($generics:tt)*] $store:ty, $keeper:path,
        $conn:ty,
        $writes:ident,
        $reads:ident,
        $wrote:expr,
        $hold_user:expr
    ) => {
        impl<$($generics)*> crate::store::Attachments for $store {
            async fn begin_blob(
                &self,
                owner: crate::domain::UserId,
                blob: &str,
                media_type: &str,
                now_ms: i64,
            ) -> Result<(), crate::store::StoreError> {
                begin_blob(&$keeper(self).$writes, owner, blob, media_type, now_ms).await
            }

            async fn put_chunk(
                &self,
                owner: crate::domain::UserId,
                blob: &str,
                n: u32,
                data: &[u8],
                quota: u64,
                now_ms: i64,
            ) -> Result<crate::store::ChunkStored, crate::store::StoreError> {
                let chunk = Chunk { owner, blob, n, data, quota, now_ms };
                let stored = put_chunk(&$keeper(self).$writes, chunk).await?;
                ($wrote)($keeper(self));
                Ok(stored)
            }

            async fn finish_upload(
                &self,
                upload: &crate::store::FinishedUpload,
            ) -> Result<String, crate::store::StoreError> {
                let finished = finish_upload(&$keeper(self).$writes, upload).await?;
                ($wrote)($keeper(self));
                Ok(finished)
            }

            async fn drop_blob(&self, blob: &str) -> Result<(), crate::store::StoreError> {
                drop_blob(&$keeper(self).$writes, blob).await
            }

            async fn attachment(
                &self,
                id: &str,
            ) -> Result<Option<crate::store::AttachmentRow>, crate::store::StoreError> {
                attachment(&$keeper(self).$reads, id).await
            }

            async fn attachment_in_line(
                &self,
                session: crate::domain::SessionId,
                id: &str,
            ) -> Result<Option<crate::store::AttachmentRow>, crate::store::StoreError> {
                attachment_in_line(&$keeper(self).$reads, session, id).await
            }

            async fn blob_chunks(
                &self,
                blob: &str,
                from: u32,
                count: u32,
            ) -> Result<Vec<Vec<u8>>, crate::store::StoreError> {
                blob_chunks(&$keeper(self).$reads, blob, from, count).await
            }

            async fn stored_bytes(
                &self,
                owner: crate::domain::UserId,
            ) -> Result<u64, crate::store::StoreError> {
                stored_bytes(&$keeper(self).$reads, owner).await
            }

            async fn all_stored_bytes(&self) -> Result<u64, crate::store::StoreError> {
                let (bytes,): (i64,) = sqlx::query_as(
                    "SELECT CAST(coalesce(sum(bytes), 0) AS BIGINT) FROM blobs WHERE complete",
                )
                .fetch_one(&$keeper(self).$reads)
                .await?;
                Ok(bytes.max(0) as u64)
            }

            async fn purge_blobs(
                &self,
                unreferenced_before_ms: i64,
                stalled_before_ms: i64,
            ) -> Result<u64, crate::store::StoreError> {
                let pool = &$keeper(self).$writes;
                purge_blobs(pool, unreferenced_before_ms, stalled_before_ms).await
            }
        }

        type AttachmentTuple = (String, String, String, String, String, String, i64, Option<String>, i64);

        fn attachment_from(
            (id, owner, session, name, blob, media_type, bytes, sha256, created_at): AttachmentTuple,
        ) -> Result<crate::store::AttachmentRow, crate::store::StoreError> {
            let corrupt = |e: String| crate::store::StoreError::Corrupt(e);
            Ok(crate::store::AttachmentRow {
                owner: crate::domain::UserId::parse(&owner).map_err(|e| corrupt(e.to_string()))?,
                session: crate::domain::SessionId::parse(&session)
                    .map_err(|e| corrupt(e.to_string()))?,
                sha256: sha256.ok_or_else(|| corrupt(format!("attachment {id} names an unfinished blob")))?,
                bytes: bytes.max(0) as u64,
                id,
                name,
                blob,
                media_type,
                created_at,
            })
        }

        async fn begin_blob(
            pool: &$conn,
            owner: crate::domain::UserId,
            blob: &str,
            media_type: &str,
            now_ms: i64,
        ) -> Result<(), crate::store::StoreError> {
            sqlx::query(
                "INSERT INTO blobs (id, owner_id, media_type, created_at, touched_at) \
                 VALUES ($1, $2, $3, $4, $4)",
            )
            .bind(blob)
            .bind(owner.to_string())
            .bind(media_type)
            .bind(now_ms)
            .execute(pool)
            .await?;
            Ok(())
        }

        /// A chunk offered for storage, and what its owner may hold.
        struct Chunk<'a> {
            owner: crate::domain::UserId,
            blob: &'a str,
            n: u32,
            data: &'a [u8],
            quota: u64,
            now_ms: i64,
        }

        async fn put_chunk(
            pool: &$conn,
            chunk: Chunk<'_>,
        ) -> Result<crate::store::ChunkStored, crate::store::StoreError> {
            let owner = chunk.owner.to_string();
            let mut tx = pool.begin().await?;
            // The owner's transactions of this kind take turns from here to the commit,
            // so the sum read next counts every chunk another upload stored before.
            sqlx::query($hold_user).bind(&owner).execute(&mut *tx).await?;
            let (used,): (i64,) = sqlx::query_as(
                "SELECT CAST(coalesce(sum(bytes), 0) AS BIGINT) FROM blobs WHERE owner_id = $1",
            )
            .bind(&owner)
            .fetch_one(&mut *tx)
            .await?;
            let used = used.max(0) as u64;
            let bytes = chunk.data.len() as u64;
            if used + bytes > chunk.quota {
                tx.rollback().await?;
                return Ok(crate::store::ChunkStored::OverQuota { used });
            }
            sqlx::query("INSERT INTO blob_chunks (blob_id, n, data) VALUES ($1, $2, $3)")
                .bind(chunk.blob)
                .bind(i64::from(chunk.n))
                .bind(chunk.data)
                .execute(&mut *tx)
                .await?;
            sqlx::query("UPDATE blobs SET bytes = bytes + $1, touched_at = $2 WHERE id = $3")
                .bind(bytes as i64)
                .bind(chunk.now_ms)
                .bind(chunk.blob)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(crate::store::ChunkStored::Stored)
        }

        /// One attempt at [`crate::store::Attachments::finish_upload`]; a race with another
        /// upload of the same content or with a purge fails it, and it is tried again.
        async fn try_finish_upload(
            pool: &$conn,
            upload: &crate::store::FinishedUpload,
        ) -> Result<String, crate::store::StoreError> {
            let row = &upload.attachment;
            let owner = row.owner.to_string();
            let mut tx = pool.begin().await?;
            // A write first, so the transaction holds the write lock before it reads (on
            // SQLite a transaction that reads and then writes fails at once when another
            // wrote meanwhile, instead of waiting its turn).
            sqlx::query("UPDATE blobs SET touched_at = touched_at WHERE id = $1")
                .bind(&upload.blob)
                .execute(&mut *tx)
                .await?;
            let existing: Option<(String,)> = sqlx::query_as(
                "SELECT id FROM blobs WHERE owner_id = $1 AND sha256 = $2 AND complete AND id <> $3",
            )
            .bind(&owner)
            .bind(&upload.sha256)
            .bind(&upload.blob)
            .fetch_optional(&mut *tx)
            .await?;
            let blob = match existing {
                Some((existing,)) => {
                    sqlx::query("DELETE FROM blobs WHERE id = $1")
                        .bind(&upload.blob)
                        .execute(&mut *tx)
                        .await?;
                    existing
                }
                None => {
                    sqlx::query(
                        "UPDATE blobs SET sha256 = $1, bytes = $2, complete = TRUE WHERE id = $3",
                    )
                    .bind(&upload.sha256)
                    .bind(upload.bytes as i64)
                    .bind(&upload.blob)
                    .execute(&mut *tx)
                    .await?;
                    upload.blob.clone()
                }
            };
            sqlx::query(
                "INSERT INTO attachments (id, owner_id, session_id, blob_id, name, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&row.id)
            .bind(&owner)
            .bind(row.session.to_string())
            .bind(&blob)
            .bind(&row.name)
            .bind(row.created_at)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(blob)
        }

        async fn finish_upload(
            pool: &$conn,
            upload: &crate::store::FinishedUpload,
        ) -> Result<String, crate::store::StoreError> {
            let mut tries = 0;
            loop {
                match try_finish_upload(pool, upload).await {
                    Err(error) if tries < 3 => {
                        tracing::debug!(%error, "an upload's finish raced another; trying again");
                        tries += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(20 * tries)).await;
                    }
                    done => return done,
                }
            }
        }

        async fn drop_blob(
            pool: &$conn,
            blob: &str,
        ) -> Result<(), crate::store::StoreError> {
            sqlx::query("DELETE FROM blobs WHERE id = $1 AND NOT complete")
                .bind(blob)
                .execute(pool)
                .await?;
            Ok(())
        }

        async fn attachment(
            pool: &$conn,
            id: &str,
        ) -> Result<Option<crate::store::AttachmentRow>, crate::store::StoreError> {
            use crate::store::sql::attachments::ATTACHMENT_COLUMNS;
            let sql = format!(
                "SELECT {ATTACHMENT_COLUMNS} FROM attachments a JOIN blobs b ON b.id = a.blob_id \
                 WHERE a.id = $1"
            );
            let row: Option<AttachmentTuple> =
                sqlx::query_as(&sql).bind(id).fetch_optional(pool).await?;
            row.map(attachment_from).transpose()
        }

        async fn attachment_in_line(
            pool: &$conn,
            session: crate::domain::SessionId,
            id: &str,
        ) -> Result<Option<crate::store::AttachmentRow>, crate::store::StoreError> {
            use crate::store::sql::attachments::ATTACHMENT_COLUMNS;
            // The session and the lines it branched from, deleted ones included: a hidden
            // parent's rows stay while a branch reads them.
            let sql = format!(
                "WITH RECURSIVE line (id, parent_id) AS ( \
                   SELECT id, parent_id FROM sessions WHERE id = $1 \
                 UNION ALL \
                   SELECT s.id, s.parent_id FROM sessions s JOIN line l ON s.id = l.parent_id \
                 ) SELECT {ATTACHMENT_COLUMNS} FROM attachments a JOIN blobs b ON b.id = a.blob_id \
                 WHERE a.id = $2 AND a.session_id IN (SELECT id FROM line)"
            );
            let row: Option<AttachmentTuple> = sqlx::query_as(&sql)
                .bind(session.to_string())
                .bind(id)
                .fetch_optional(pool)
                .await?;
            row.map(attachment_from).transpose()
        }

        async fn blob_chunks(
            pool: &$conn,
            blob: &str,
            from: u32,
            count: u32,
        ) -> Result<Vec<Vec<u8>>, crate::store::StoreError> {
            let rows: Vec<(Vec<u8>,)> = sqlx::query_as(
                "SELECT data FROM blob_chunks WHERE blob_id = $1 AND n >= $2 ORDER BY n LIMIT $3",
            )
            .bind(blob)
            .bind(i64::from(from))
            .bind(i64::from(count))
            .fetch_all(pool)
            .await?;
            Ok(rows.into_iter().map(|(data,)| data).collect())
        }

        async fn stored_bytes(
            pool: &$conn,
            owner: crate::domain::UserId,
        ) -> Result<u64, crate::store::StoreError> {
            let (bytes,): (i64,) = sqlx::query_as(
                "SELECT CAST(coalesce(sum(bytes), 0) AS BIGINT) FROM blobs WHERE owner_id = $1",
            )
            .bind(owner.to_string())
            .fetch_one(pool)
            .await?;
            Ok(bytes.max(0) as u64)
        }

        async fn purge_blobs(
            pool: &$conn,
            unreferenced_before_ms: i64,
            stalled_before_ms: i64,
        ) -> Result<u64, crate::store::StoreError> {
            let done = sqlx::query(
                "DELETE FROM blobs WHERE (complete AND created_at < $1 \
                   AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.blob_id = blobs.id)) \
                 OR (NOT complete AND touched_at < $2)",
            )
            .bind(unreferenced_before_ms)
            .bind(stalled_before_ms)
            .execute(pool)
            .await?;
            Ok(done.rows_affected())
        }
    };
}

pub(crate) use attachments_on;
