-- Messages a person sent while a run worked, waiting for their turn. The row goes in the
-- transaction that starts its run (or, for a steering message, appends it to the active
-- run as the person's message), or when it is withdrawn: a queued message runs once. Its
-- words enter the event log only then (AG-UI allows no event between runs, where a queued
-- message may wait through a pause).
CREATE TABLE queued_messages (
    session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id                TEXT NOT NULL,
    -- The order they run in, lowest first (an interrupting message goes before the rest).
    position          BIGINT NOT NULL,
    -- The run it starts (its RUN_STARTED.runId).
    run_id            TEXT NOT NULL,
    -- 'queue' | 'steer'
    kind              TEXT NOT NULL,
    client_message_id TEXT,
    text              TEXT NOT NULL,
    -- JSON: {model?, input?}: what else starts its run.
    extra             TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE INDEX queued_messages_in_order ON queued_messages (session_id, position);
