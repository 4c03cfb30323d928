-- Device authorization grant (RFC 8628): one row per device authorization request. Only the SHA-256 of the
-- device_code and of the user_code are stored. `status` moves pending -> approved | denied, and approved ->
-- consumed when the device redeems it; `grant` (JSON) is the approved login's scope, audience and auth_time.
CREATE TABLE device_codes (
  id TEXT PRIMARY KEY,
  device_code_hash TEXT NOT NULL UNIQUE,
  user_code_hash TEXT NOT NULL UNIQUE,
  client_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  audience TEXT,
  status TEXT NOT NULL DEFAULT 'pending',
  user_id TEXT,
  session_id TEXT,
  grant TEXT,
  interval_s INTEGER NOT NULL,
  last_polled_at INTEGER,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX device_codes_expires_at ON device_codes (expires_at);

-- Attempts at the user-code entry page (RFC 8628 §5.1: brute force of user codes), per key (`ip:<ip>`,
-- `code:<user code hash>`), in fixed windows.
CREATE TABLE device_code_attempts (
  key TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  window_ends_at INTEGER NOT NULL
);

-- Pushed authorization requests (RFC 9126): the SHA-256 of the request_uri's random part, the client it is
-- bound to and the pushed parameters (JSON); consumed once by /authorize.
CREATE TABLE pushed_authorization_requests (
  request_uri_hash TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  params TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  consumed_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX pushed_authorization_requests_expires_at ON pushed_authorization_requests (expires_at);
