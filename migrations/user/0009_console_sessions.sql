-- Issue 30: the admin console's sessions (backend-for-frontend), kept in the operator's own user object on the
-- control plane. The browser holds only an opaque cookie; its secret's SHA-256 is the key. The operator's
-- access token is stored encrypted (AES-GCM bound to the session). Times are epoch milliseconds.
CREATE TABLE console_sessions (
  id_hash TEXT PRIMARY KEY,
  access_token_enc TEXT NOT NULL,
  token_expires_at INTEGER NOT NULL,
  csrf_token TEXT NOT NULL,
  profile TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
