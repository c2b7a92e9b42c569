-- Spending: what each user's model calls cost, per UTC day (days since 1970-01-01). Added to
-- in the same transaction as each CUSTOM tandem.usage event (one per model call), so a
-- budget is checked against exactly the usage the log holds, on every instance; deleting
-- a session does not give its spending back.
CREATE TABLE spending (
    user_id  TEXT NOT NULL,
    day      BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    -- Input plus output tokens.
    tokens   BIGINT NOT NULL DEFAULT 0,
    calls    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
);

-- What the log already holds, so budgets count the calls made before this table was.
INSERT INTO spending (user_id, day, cost_usd, tokens, calls)
SELECT s.owner_id,
       (e.j ->> 'timestamp')::bigint / 86400000,
       sum(coalesce((e.j -> 'value' ->> 'costUsd')::double precision, 0)),
       sum(coalesce((e.j -> 'value' ->> 'inputTokens')::bigint, 0)
           + coalesce((e.j -> 'value' ->> 'outputTokens')::bigint, 0)),
       count(*)
FROM (SELECT session_id, event::jsonb AS j FROM events
      WHERE event LIKE '%"tandem.usage"%') e
JOIN sessions s ON s.id = e.session_id
WHERE e.j ->> 'type' = 'CUSTOM'
  AND e.j ->> 'name' = 'tandem.usage'
  AND e.j ->> 'timestamp' IS NOT NULL
GROUP BY 1, 2;

-- A user's own budget (`tandem users budget`). A NULL limit is the server's default (its
-- --budget-* flag); a negative one is no limit for this user.
CREATE TABLE budgets (
    user_id        TEXT PRIMARY KEY NOT NULL,
    daily_usd      DOUBLE PRECISION,
    monthly_usd    DOUBLE PRECISION,
    daily_tokens   BIGINT,
    monthly_tokens BIGINT,
    updated_at     BIGINT NOT NULL
);
