-- Users, their API tokens and browser sign-ins; every session belongs to a user.
CREATE TABLE users (
    id         TEXT PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    -- Set when revoked: the user can no longer sign in; their sessions stay.
    revoked_at INTEGER
);
-- The user every request acts for under `--auth none`. Sessions from before users
-- existed are theirs.
INSERT INTO users (id, name, created_at) VALUES ('00000000-0000-0000-0000-000000000000', 'local', 0);

-- API tokens: only the SHA-256 of each 256-bit random token is kept.
CREATE TABLE api_tokens (
    hash       BLOB PRIMARY KEY NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);

-- Browser sign-ins behind the session cookie: only the SHA-256 of the cookie is kept.
CREATE TABLE sign_ins (
    hash       BLOB PRIMARY KEY NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sign_ins_by_user ON sign_ins (user_id);
CREATE INDEX sign_ins_by_expiry ON sign_ins (expires_at);

-- No REFERENCES here: SQLite cannot add a foreign key with a non-null default. Users
-- are never deleted (only revoked), so the owner always exists.
ALTER TABLE sessions ADD COLUMN owner_id TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
CREATE INDEX sessions_by_owner ON sessions (owner_id, updated_at);
