-- Interrupt deadlines, enforced by the server: the `expiresAt` of the interrupt in ms.
ALTER TABLE interrupts ADD COLUMN expires_at INTEGER;
CREATE INDEX interrupts_expiring ON interrupts (expires_at) WHERE status = 'pending';
-- Retention looks for idle sessions by age.
CREATE INDEX sessions_by_update ON sessions (status, updated_at);
