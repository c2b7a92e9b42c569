-- A share link may leave out the files and images attached (shown unless it says so).
ALTER TABLE shares ADD COLUMN hide_attachments BOOLEAN NOT NULL DEFAULT FALSE;
