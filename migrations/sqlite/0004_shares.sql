-- Read-only share links of a session. Only the SHA-256 of each link's 256-bit random
-- token is kept; what the link hides is decided here and enforced by the server.
CREATE TABLE shares (
    id                  TEXT PRIMARY KEY NOT NULL,
    session_id          TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    hash                BLOB NOT NULL UNIQUE,
    hide_reasoning      INTEGER NOT NULL,
    hide_tool_arguments INTEGER NOT NULL,
    created_at          INTEGER NOT NULL
);
CREATE INDEX shares_by_session ON shares (session_id, created_at);
