-- The event log and what is written with it in the same transaction.
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY NOT NULL,
    title         TEXT NOT NULL,
    -- 1 while the title is the default; the first message then names the session.
    auto_title    INTEGER NOT NULL DEFAULT 0,
    -- Derived from the log by the writer: idle | running | awaiting_input.
    status        TEXT NOT NULL DEFAULT 'idle',
    active_run_id TEXT,
    last_seq      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX sessions_by_status ON sessions (status);

-- Append-only: one AG-UI event (JSON) per row, seq 1, 2, 3, ... per session without gaps.
CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    event      TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- Questions for a person; inserted with the RUN_FINISHED that raised them.
CREATE TABLE interrupts (
    id           TEXT PRIMARY KEY NOT NULL,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id       TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    -- The AG-UI Interrupt object as sent in RUN_FINISHED.
    interrupt    TEXT NOT NULL,
    -- pending | resolved | cancelled
    status       TEXT NOT NULL DEFAULT 'pending',
    -- The answer {status, payload?} once given.
    response     TEXT,
    -- The run the answer started.
    resumed_run_id TEXT,
    created_at   INTEGER NOT NULL,
    resolved_at  INTEGER
);
CREATE INDEX interrupts_by_session ON interrupts (session_id, status);

-- clientMessageId de-duplication: a repeated id maps to the run it started.
CREATE TABLE client_messages (
    session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    client_message_id TEXT NOT NULL,
    run_id            TEXT NOT NULL,
    PRIMARY KEY (session_id, client_message_id)
) WITHOUT ROWID;
