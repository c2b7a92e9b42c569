-- Webhooks beyond a waiting session: a run's end (`--webhook-events run-ended`), claims so
-- that one instance attempts a due delivery at a time, and what lets the deliverer skip
-- waits that are not a person's (an AG-UI client's own tools).

-- Why an interrupt waits (its `reason`: input_required, tool_approval, client_tools),
-- written with it; older rows get theirs from the JSON.
ALTER TABLE interrupts ADD COLUMN reason TEXT;
UPDATE interrupts SET reason = json_extract(interrupt, '$.reason');
-- The deliverer's scan for interrupts owed a delivery, and the waiting gauge.
CREATE INDEX interrupts_pending ON interrupts (created_at) WHERE status = 'pending';

-- Runs that ended (RUN_FINISHED or RUN_ERROR), recorded in the transaction of the event
-- that ends them. The deliverer turns each into deliveries (when run ends are announced)
-- and deletes it; without a deliverer they go with their session.
CREATE TABLE run_ends (
    -- <session id>:<seq of the ending event>
    id         TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id     TEXT,
    -- success | interrupt | cancelled | error
    outcome    TEXT NOT NULL,
    -- RUN_ERROR's {message, code} as JSON
    error      TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX run_ends_by_time ON run_ends (created_at);

-- session.waiting (about `interrupt_id`) or run.ended (about the run end `interrupt_id`
-- names, described by `payload`).
ALTER TABLE webhook_deliveries ADD COLUMN event TEXT NOT NULL DEFAULT 'session.waiting';
ALTER TABLE webhook_deliveries ADD COLUMN payload TEXT;
-- The instance attempting the delivery now; `next_attempt_at` then says when its claim
-- lapses (another instance may then attempt it).
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT;
