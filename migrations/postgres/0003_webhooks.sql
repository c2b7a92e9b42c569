-- Webhook deliveries: one per pending interrupt and configured URL, created from the
-- interrupts table (written in the same transaction as the event that makes a session
-- wait), so a delivery owed is never lost to a crash. The id stays the same on every
-- attempt; receivers use it to drop repeats.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    interrupt_id    TEXT NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    url             TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_status     INTEGER,
    last_error      TEXT,
    next_attempt_at BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_by_session ON webhook_deliveries (session_id, created_at);
