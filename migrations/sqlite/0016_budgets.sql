-- Spending: what each user's model calls cost, per UTC day (days since 1970-01-01). Added to
-- in the same transaction as each CUSTOM tandem.usage event (one per model call), so a
-- budget is checked against exactly the usage the log holds; deleting a session does not
-- give its spending back.
CREATE TABLE spending (
    user_id  TEXT NOT NULL,
    day      INTEGER NOT NULL,
    cost_usd REAL NOT NULL DEFAULT 0,
    -- Input plus output tokens.
    tokens   INTEGER NOT NULL DEFAULT 0,
    calls    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
) WITHOUT ROWID;

-- What the log already holds, so budgets count the calls made before this table was.
INSERT INTO spending (user_id, day, cost_usd, tokens, calls)
SELECT s.owner_id,
       CAST(json_extract(e.event, '$.timestamp') / 86400000 AS INTEGER),
       sum(coalesce(json_extract(e.event, '$.value.costUsd'), 0.0)),
       sum(coalesce(json_extract(e.event, '$.value.inputTokens'), 0)
           + coalesce(json_extract(e.event, '$.value.outputTokens'), 0)),
       count(*)
FROM (SELECT session_id, seq, event FROM events
      UNION SELECT session_id, seq, event FROM events_tail) e
JOIN sessions s ON s.id = e.session_id
WHERE e.event LIKE '%"tandem.usage"%'
  AND json_extract(e.event, '$.type') = 'CUSTOM'
  AND json_extract(e.event, '$.name') = 'tandem.usage'
  AND json_extract(e.event, '$.timestamp') IS NOT NULL
GROUP BY 1, 2;

-- A user's own budget (`tandem users budget`). A NULL limit is the server's default (its
-- --budget-* flag); a negative one is no limit for this user.
CREATE TABLE budgets (
    user_id        TEXT PRIMARY KEY NOT NULL,
    daily_usd      REAL,
    monthly_usd    REAL,
    daily_tokens   INTEGER,
    monthly_tokens INTEGER,
    updated_at     INTEGER NOT NULL
);
