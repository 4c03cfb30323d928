-- Issue 31: a rotation writes one row and marks another, and every index of refresh_tokens is written with it.
-- The table had nine b-trees (the rows, the id and token_hash uniqueness indexes, four indexes and two partial
-- ones), so a rotation in this object cost 83-92 µs, of which about 50 were index upkeep (measured in the
-- object, 3,000 rotations a loop). This table is one user's tokens only: the paths those indexes served are
-- rare (a management listing, a session's revocation cascade, the expiry alarm, a family's start) and scan the
-- user's rows instead, which costs about as much as the index walks they did: every one of them also filters
-- out rotated predecessors, which the indexes held too (the listing read 1.7 ms over 3,000 rows with its
-- index, 1.2 ms without). What stays: the primary key (each rotation's read) and the family (reuse detection
-- revokes a whole family at once). token_hash loses its UNIQUE: it is compared, never looked up, and a
-- 256-bit digest needs no index to stay unique. The rows are copied as they are, in one transaction.
CREATE TABLE refresh_tokens_rebuilt (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL,
  family_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  session_id TEXT,
  scope TEXT NOT NULL DEFAULT '',
  audience TEXT,
  rotated_to TEXT,
  rotated_at INTEGER,
  revoked_at INTEGER,
  expires_at INTEGER,
  idle_expires_at INTEGER,
  created_at INTEGER NOT NULL,
  user_id TEXT NOT NULL DEFAULT '',
  login TEXT NOT NULL DEFAULT '{}',
  idle_lifetime_ms INTEGER,
  last_exchanged_at INTEGER,
  device TEXT NOT NULL DEFAULT '{}',
  metadata TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO refresh_tokens_rebuilt (id, token_hash, family_id, client_id, session_id, scope, audience, rotated_to, rotated_at,
    revoked_at, expires_at, idle_expires_at, created_at, user_id, login, idle_lifetime_ms, last_exchanged_at, device, metadata)
  SELECT id, token_hash, family_id, client_id, session_id, scope, audience, rotated_to, rotated_at,
    revoked_at, expires_at, idle_expires_at, created_at, user_id, login, idle_lifetime_ms, last_exchanged_at, device, metadata
  FROM refresh_tokens;
DROP TABLE refresh_tokens;
ALTER TABLE refresh_tokens_rebuilt RENAME TO refresh_tokens;
CREATE INDEX refresh_tokens_by_family ON refresh_tokens (family_id);
