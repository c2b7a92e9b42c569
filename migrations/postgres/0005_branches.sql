-- Branches: a session may start as a fork of another at a seq. Its history is the parent's
-- events 1..fork_seq (read from the parent's rows, never copied), then its own rows from
-- fork_seq + 1. A parent with branches cannot be deleted from under them (the reference).
ALTER TABLE sessions
    ADD COLUMN parent_id TEXT REFERENCES sessions (id),
    ADD COLUMN fork_seq BIGINT;
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;
-- The conversation a branch belongs to: its first line's id (NULL on that first line).
ALTER TABLE sessions ADD COLUMN root_id TEXT;
CREATE INDEX sessions_by_root ON sessions (root_id) WHERE root_id IS NOT NULL;
-- A deleted session that branches still read from: hidden everywhere, its rows kept until
-- its last branch goes (then it goes too).
ALTER TABLE sessions ADD COLUMN deleted BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX sessions_hidden ON sessions (id) WHERE deleted;

-- A branch that parts where a run waits for its person holds its own copy of the question
-- (the same interrupt id, answered apart): interrupts are keyed by session and id.
ALTER TABLE interrupts DROP CONSTRAINT interrupts_pkey;
ALTER TABLE interrupts ADD PRIMARY KEY (session_id, id);
CREATE INDEX interrupts_by_id ON interrupts (id);
