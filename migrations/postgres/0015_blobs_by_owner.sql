-- What one user's blobs take (complete and being uploaded), read in the transaction that
-- stores each chunk of an upload (the quota check), from this index alone.
CREATE INDEX blobs_by_owner ON blobs (owner_id, bytes);
