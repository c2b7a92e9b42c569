-- Webhook deliveries: one per pending interrupt and configured URL, created from the
-- interrupts table (which is written in the same transaction as the event that makes a
-- session wait), so a delivery owed is never lost to a crash. The id stays the same on
-- every attempt; receivers use it to drop repeats.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY NOT NULL,
    interrupt_id    TEXT NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    url             TEXT NOT NULL,
    -- pending | delivered | failed (gave up)
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_status     INTEGER,
    last_error      TEXT,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    delivered_at    INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_by_session ON webhook_deliveries (session_id, created_at);
