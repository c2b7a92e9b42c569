-- A user's turn to call the model while a budget cap applies to them: at most one row per
-- user, held by one run's model call (`holder`) until its usage is committed, or until
-- `expires_at` (ms) when the instance that held it died. Every instance takes turns here,
-- so a user's calls never overspend their budget by more than one call.
CREATE TABLE model_call_turns (
    user_id    TEXT PRIMARY KEY NOT NULL,
    holder     TEXT NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
