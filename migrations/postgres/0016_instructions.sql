-- A person's own instructions to the model, for all their conversations (each
-- conversation's own are in its log, CUSTOM tandem.instructions).
CREATE TABLE instructions (
    user_id    TEXT PRIMARY KEY NOT NULL,
    text       TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- A share link shows the instructions only when it says so.
ALTER TABLE shares ADD COLUMN show_instructions BOOLEAN NOT NULL DEFAULT FALSE;
