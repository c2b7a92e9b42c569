-- A person's own WebAssembly tools (PUT /api/tools/{name}): the manifest as sent and the
-- module's bytes, so every instance has them.
CREATE TABLE user_tools (
    user_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    manifest     TEXT NOT NULL,
    module       BYTEA NOT NULL,
    digest       TEXT NOT NULL,
    module_bytes BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, name)
);
