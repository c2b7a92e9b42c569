-- Files and images people attach: the bytes once per user and content (a blob, in chunks, so
-- neither an upload nor a download holds a whole file in memory), and each upload's name in
-- its session (an attachment). A blob goes when no attachment refers to it; an upload a crash
-- cut short (never complete) goes once it stops moving.
CREATE TABLE blobs (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL,
    -- Hex SHA-256 of the bytes, set when the upload completes.
    sha256     TEXT,
    media_type TEXT NOT NULL,
    bytes      INTEGER NOT NULL DEFAULT 0,
    complete   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    -- When a chunk last arrived (an incomplete blob that stopped moving is abandoned).
    touched_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX blobs_by_content ON blobs (owner_id, sha256) WHERE complete;
CREATE INDEX blobs_incomplete ON blobs (touched_at) WHERE NOT complete;
CREATE TABLE blob_chunks (
    blob_id TEXT NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
    n       INTEGER NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (blob_id, n)
) WITHOUT ROWID;
CREATE TABLE attachments (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    blob_id    TEXT NOT NULL REFERENCES blobs (id),
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX attachments_by_session ON attachments (session_id);
CREATE INDEX attachments_by_blob ON attachments (blob_id);
