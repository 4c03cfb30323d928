-- Issue 32 point 3: logins suspended by a post-login action's api.redirect.sendUserTo until /continue.
-- state_hash is the SHA-256 of the `state` the external site sends back; binding_hash that of the browser's
-- continue cookie (a state from another browser is refused); resume is the suspended dispatch (JSON).
CREATE TABLE login_redirects (
  state_hash TEXT PRIMARY KEY,
  binding_hash TEXT NOT NULL,
  resume TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX login_redirects_expiry ON login_redirects (expires_at);
-- api.cache of actions: per trigger, bounded entries with a lifetime (the reference's Actions cache limits).
CREATE TABLE action_cache (
  trigger_id TEXT NOT NULL,
  cache_key TEXT NOT NULL,
  value TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (trigger_id, cache_key)
);
