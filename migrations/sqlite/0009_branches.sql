-- Branches: a session may start as a fork of another at a seq. Its history is the parent's
-- events 1..fork_seq (read from the parent's rows, never copied), then its own rows from
-- fork_seq + 1. A parent with branches cannot be deleted from under them (the reference).
ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions (id);
ALTER TABLE sessions ADD COLUMN fork_seq INTEGER;
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;
-- The conversation a branch belongs to: its first line's id (NULL on that first line).
ALTER TABLE sessions ADD COLUMN root_id TEXT;
CREATE INDEX sessions_by_root ON sessions (root_id) WHERE root_id IS NOT NULL;
-- A deleted session that branches still read from: hidden everywhere, its rows kept until
-- its last branch goes (then it goes too).
ALTER TABLE sessions ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_hidden ON sessions (id) WHERE deleted;

-- A branch that parts where a run waits for its person holds its own copy of the question
-- (the same interrupt id, answered apart): interrupts are keyed by session and id.
CREATE TABLE interrupts_keyed (
    id             TEXT NOT NULL,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id         TEXT NOT NULL,
    tool_call_id   TEXT NOT NULL,
    interrupt      TEXT NOT NULL,
    status         TEXT NOT NULL DEFAULT 'pending',
    response       TEXT,
    resumed_run_id TEXT,
    created_at     INTEGER NOT NULL,
    resolved_at    INTEGER,
    expires_at     INTEGER,
    reason         TEXT,
    PRIMARY KEY (session_id, id)
);
INSERT INTO interrupts_keyed (id, session_id, run_id, tool_call_id, interrupt, status, response,
    resumed_run_id, created_at, resolved_at, expires_at, reason)
  SELECT id, session_id, run_id, tool_call_id, interrupt, status, response, resumed_run_id,
    created_at, resolved_at, expires_at, reason FROM interrupts;
DROP TABLE interrupts;
ALTER TABLE interrupts_keyed RENAME TO interrupts;
CREATE INDEX interrupts_by_session ON interrupts (session_id, status);
CREATE INDEX interrupts_expiring ON interrupts (expires_at) WHERE status = 'pending';
CREATE INDEX interrupts_pending ON interrupts (created_at) WHERE status = 'pending';
CREATE INDEX interrupts_by_id ON interrupts (id);
