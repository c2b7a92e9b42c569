-- The whole schema as of the SQLite migrations 0001-0004, in PostgreSQL's types. Times
-- are milliseconds since the epoch (BIGINT), ids are the text of UUIDs, secrets are
-- stored only as SHA-256 hashes (BYTEA).

-- Users, their API tokens and browser sign-ins; every session belongs to a user.
CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    -- Set when revoked: the user can no longer sign in; their sessions stay.
    revoked_at BIGINT
);
-- The user every request acts for under `--auth none`.
INSERT INTO users (id, name, created_at) VALUES ('00000000-0000-0000-0000-000000000000', 'local', 0);

CREATE TABLE api_tokens (
    hash       BYTEA PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);

CREATE TABLE sign_ins (
    hash       BYTEA PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sign_ins_by_user ON sign_ins (user_id);
CREATE INDEX sign_ins_by_expiry ON sign_ins (expires_at);

-- The event log and what is written with it in the same transaction.
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL REFERENCES users (id),
    title         TEXT NOT NULL,
    -- True while the title is the default; the first message then names the session.
    auto_title    BOOLEAN NOT NULL DEFAULT FALSE,
    -- Derived from the log by the writer: idle | running | awaiting_input.
    status        TEXT NOT NULL DEFAULT 'idle',
    active_run_id TEXT,
    last_seq      BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
-- Room on each page for the new version of a row, so that advancing `last_seq` (no
-- indexed column changes) is a heap-only update.
) WITH (fillfactor = 70);
CREATE INDEX sessions_by_status ON sessions (status, updated_at);
CREATE INDEX sessions_by_owner ON sessions (owner_id, updated_at);

-- Append-only: one AG-UI event (its JSON text, byte for byte) per row, seq 1, 2, 3, ...
-- per session without gaps.
CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    event      TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

-- Questions for a person; inserted with the RUN_FINISHED that raised them.
CREATE TABLE interrupts (
    id             TEXT PRIMARY KEY,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id         TEXT NOT NULL,
    tool_call_id   TEXT NOT NULL,
    -- The AG-UI Interrupt object as sent in RUN_FINISHED.
    interrupt      TEXT NOT NULL,
    -- pending | resolved | cancelled | expired
    status         TEXT NOT NULL DEFAULT 'pending',
    -- The answer {status, payload?} once given.
    response       TEXT,
    -- The run the answer started.
    resumed_run_id TEXT,
    created_at     BIGINT NOT NULL,
    resolved_at    BIGINT,
    -- The interrupt's `expiresAt` in ms, enforced by the server.
    expires_at     BIGINT
);
CREATE INDEX interrupts_by_session ON interrupts (session_id, status);
CREATE INDEX interrupts_expiring ON interrupts (expires_at) WHERE status = 'pending';

-- clientMessageId de-duplication: a repeated id maps to the run it started.
CREATE TABLE client_messages (
    session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    client_message_id TEXT NOT NULL,
    run_id            TEXT NOT NULL,
    PRIMARY KEY (session_id, client_message_id)
);

-- Read-only share links of a session (only the SHA-256 of each link's token).
CREATE TABLE shares (
    id                  TEXT PRIMARY KEY,
    session_id          TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    hash                BYTEA NOT NULL UNIQUE,
    hide_reasoning      BOOLEAN NOT NULL,
    hide_tool_arguments BOOLEAN NOT NULL,
    created_at          BIGINT NOT NULL
);
CREATE INDEX shares_by_session ON shares (session_id, created_at);
