-- Chunks in a rowid table. In a WITHOUT ROWID table the rows are the primary key's b-tree,
-- and SQLite reads an overflowing cell whole to compare it with a key: every insert and
-- every lookup read the 256 KiB chunks it passed on the way down. Here the primary key is
-- an index of (blob_id, n) alone, and a chunk is read only when it is the one asked for.
CREATE TABLE blob_chunks_by_rowid (
    blob_id TEXT NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
    n       INTEGER NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (blob_id, n)
);
INSERT INTO blob_chunks_by_rowid (blob_id, n, data) SELECT blob_id, n, data FROM blob_chunks;
DROP TABLE blob_chunks;
ALTER TABLE blob_chunks_by_rowid RENAME TO blob_chunks;
