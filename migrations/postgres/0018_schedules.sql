-- Schedules (POST /api/schedules): runs nobody starts by hand. `spec` is the schedule as
-- its person wrote it (JSON, defaults filled in); `next_fire_at` its next time not yet
-- handled (ms; NULL once none is left). An instance that handles a schedule's due times
-- claims it until `claimed_until` (another takes it over after that); `version` moves
-- with every change its person makes, so a claim never writes over one.
CREATE TABLE schedules (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL REFERENCES users (id),
    name          TEXT NOT NULL,
    spec          TEXT NOT NULL,
    enabled       BOOLEAN NOT NULL,
    next_fire_at  BIGINT,
    version       BIGINT NOT NULL DEFAULT 1,
    claimed_by    TEXT,
    claimed_until BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE enabled AND next_fire_at IS NOT NULL;
CREATE INDEX schedules_by_owner ON schedules (owner_id, created_at);

-- Each scheduled time of a schedule, once: fired (its row is written in the same
-- transaction as the events that start its run, or as its queued message), missed or
-- skipped. `outcome` is its run's end, written with the run's terminal event.
CREATE TABLE schedule_fires (
    schedule_id   TEXT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    scheduled_for BIGINT NOT NULL,
    status        TEXT NOT NULL,
    fired_at      BIGINT,
    session_id    TEXT,
    run_id        TEXT,
    outcome       TEXT,
    reason        TEXT,
    manual        BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (schedule_id, scheduled_for)
);
CREATE INDEX schedule_fires_by_run ON schedule_fires (session_id, run_id) WHERE run_id IS NOT NULL;
