-- A person's own instructions to the model, for all their conversations (each
-- conversation's own are in its log, CUSTOM tandem.instructions).
CREATE TABLE instructions (
    user_id    TEXT PRIMARY KEY NOT NULL,
    text       TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
-- A share link shows the instructions only when it says so.
ALTER TABLE shares ADD COLUMN show_instructions INTEGER NOT NULL DEFAULT 0;
