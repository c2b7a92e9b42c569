-- The token path paid for a foreign key check per event row: a lookup and a share lock of
-- the session's row, which the very statement inserting the rows has just locked and
-- advanced. Every writer inserts rows only for sessions it holds locked in the same
-- transaction, so the check could never fail. What the key also did, deleting a session's
-- events with it, a trigger does once per DELETE statement.
ALTER TABLE events DROP CONSTRAINT events_session_id_fkey;

CREATE FUNCTION delete_events_of_deleted_sessions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM events WHERE session_id IN (SELECT id FROM deleted_sessions);
    RETURN NULL;
END
$$;

CREATE TRIGGER sessions_delete_events AFTER DELETE ON sessions
    REFERENCING OLD TABLE AS deleted_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION delete_events_of_deleted_sessions();
