-- Feedback on answers: one row per user and run, changed in place; written in the same
-- transaction as its CUSTOM tandem.feedback event.
CREATE TABLE feedback (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    -- up | down
    rating     TEXT NOT NULL,
    comment    TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, run_id, user_id)
);
CREATE INDEX feedback_by_time ON feedback (updated_at);
