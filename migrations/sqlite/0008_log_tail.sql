-- The log's tail. Every event is appended here first, in commit order, and moved into
-- `events` (clustered by session) later, many of a session's events at once: a commit then
-- writes a page or two at the end of this table instead of about a page per session in
-- `events`. Rows here are committed like any other; the store reads both tables (it keeps
-- the tail's rows in memory too, `store/sqlite/tail.rs`) and moves them with
-- `INSERT OR IGNORE`, so a row in both is one event.
CREATE TABLE events_tail (
    -- Commit order; rows leave from the lowest.
    position   INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    event      TEXT NOT NULL
);

-- The one open store that appends to this file's log (SQLite serves one instance per file;
-- `store/sqlite/claim.rs`). A store takes the log over before its first write; one that
-- then finds another's mark stops writing, since its memory of the tail is no longer the
-- truth.
CREATE TABLE log_writer (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    owner TEXT NOT NULL
);
