-- Interactive login state (SPEC §3.5, §4.1, ARCHITECTURE.md §5). Times are epoch milliseconds.

-- One /authorize transaction: the validated request waiting for the user to log in.
CREATE TABLE login_sessions (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  request TEXT NOT NULL,
  csrf_token TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'awaiting_mfa', 'completed')),
  user_id TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX login_sessions_by_expiry ON login_sessions (expires_at);

-- A browser session (the SSO cookie names id and a secret; only the secret's hash is stored).
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  secret_hash TEXT NOT NULL,
  user_id TEXT NOT NULL,
  client_ids TEXT NOT NULL DEFAULT '[]',
  authenticated_at INTEGER NOT NULL,
  last_interaction_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX sessions_by_user ON sessions (user_id);

-- Authorization codes: stored by hash, consumed by one conditional UPDATE (exactly once).
CREATE TABLE authorization_codes (
  code_hash TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  session_id TEXT,
  redirect_uri TEXT NOT NULL,
  grant TEXT NOT NULL,
  code_challenge TEXT,
  code_challenge_method TEXT,
  expires_at INTEGER NOT NULL,
  consumed_at INTEGER,
  created_at INTEGER NOT NULL
);

-- Single-use client assertion ids (RFC 7523 §3, SPEC §4.1 rule 3), kept until the assertion expires.
CREATE TABLE client_assertion_jtis (
  client_id TEXT NOT NULL,
  jti TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (client_id, jti)
);

-- Cross-origin authentication tickets (/co/authenticate -> /authorize?login_ticket=).
CREATE TABLE login_tickets (
  ticket_hash TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  consumed_at INTEGER,
  created_at INTEGER NOT NULL
);

-- Access tokens revoked before expiry (RFC 7009), by jti, until they would have expired anyway.
CREATE TABLE revoked_access_tokens (
  jti TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
