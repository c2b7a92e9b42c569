-- Evals (POST /api/evals): the same replay over many conversations; `spec` the request
-- as given (JSON), its replays name it.
CREATE TABLE evals (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL,
    spec       TEXT NOT NULL,
    skipped    TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX evals_by_owner ON evals (owner_id, created_at);

-- Replays (POST /api/sessions/{id}/replays): a recorded run sent again, k times per
-- variant, on its own or as one conversation of an eval (`eval_id`). `spec` is the
-- request as given (JSON, defaults filled in); `record` where the run lies in its session's log and what it said (JSON). The instance that drives a
-- replay's trials claims it until `claimed_until`; another takes it over after that.
CREATE TABLE replays (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    eval_id       TEXT,
    spec          TEXT NOT NULL,
    record        TEXT NOT NULL,
    status        TEXT NOT NULL,
    claimed_by    TEXT,
    claimed_until BIGINT,
    created_at    BIGINT NOT NULL,
    finished_at   BIGINT
);
CREATE INDEX replays_by_session ON replays (owner_id, session_id, created_at);
CREATE INDEX replays_running ON replays (status) WHERE status = 'running';
CREATE INDEX replays_by_eval ON replays (eval_id) WHERE eval_id IS NOT NULL;

-- Each trial of a replay: `queued` until it starts, `started` with its branch, then
-- `ended` with its result (the trial as scored, JSON), or `skipped`.
CREATE TABLE replay_trials (
    replay_id  TEXT NOT NULL REFERENCES replays (id) ON DELETE CASCADE,
    variant    BIGINT NOT NULL,
    trial      BIGINT NOT NULL,
    session_id TEXT,
    state      TEXT NOT NULL,
    result     TEXT,
    PRIMARY KEY (replay_id, variant, trial)
);
CREATE INDEX replay_trials_by_session ON replay_trials (session_id) WHERE session_id IS NOT NULL;
