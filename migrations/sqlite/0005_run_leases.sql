-- Who executes a session's current run: an instance holds its lease until it expires
-- (renewed by heartbeat). Taking a lease over raises the epoch; a run's appends are
-- accepted only from the lease's owner, so an instance that lost its lease is fenced off.
CREATE TABLE run_leases (
    session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id     TEXT NOT NULL,
    owner      TEXT NOT NULL,
    epoch      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX run_leases_by_owner ON run_leases (owner);
