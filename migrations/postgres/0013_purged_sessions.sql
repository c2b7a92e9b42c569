-- A run's tokens are bare inserts after the head its writer knows, without a lock on the
-- session's row (the token path, store/postgres/tokens.rs), so an append that began just
-- before its session was purged may commit just after the purge deleted the session's
-- events. Every purge is remembered here for a while; the log writers' upkeep deletes
-- what such appends left once no append that began before the purge can still commit.
CREATE TABLE purged_sessions (
    id        TEXT PRIMARY KEY,
    purged_at BIGINT NOT NULL
);

CREATE OR REPLACE FUNCTION delete_events_of_deleted_sessions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM events WHERE session_id IN (SELECT id FROM deleted_sessions);
    INSERT INTO purged_sessions (id, purged_at)
        SELECT id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM deleted_sessions
        ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END
$$;
