-- The shared state. Its document is folded from the log's STATE_SNAPSHOT / STATE_DELTA
-- events; the session row keeps only the seq of the last one in its own rows (NULL: none),
-- written with it, so a change made from an older state is refused in the transaction.
ALTER TABLE sessions ADD COLUMN state_seq INTEGER;
-- A share link may leave out the shared state (shown unless it says so).
ALTER TABLE shares ADD COLUMN hide_state INTEGER NOT NULL DEFAULT 0;
