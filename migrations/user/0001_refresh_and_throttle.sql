-- Per-user state (ARCHITECTURE.md §2): refresh-token families and the failed-login throttle.
CREATE TABLE refresh_tokens (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
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
  created_at INTEGER NOT NULL
);
CREATE INDEX refresh_tokens_by_family ON refresh_tokens (family_id);

CREATE TABLE login_failures (
  id INTEGER PRIMARY KEY,
  failed_at INTEGER NOT NULL
);
