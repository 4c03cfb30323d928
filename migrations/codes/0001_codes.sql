-- Sealed authorization codes (issue 31): a code carries its own content, sealed by the worker; what must be
-- serialized is its single use. One row per redeemed code, kept past the code's expiry so a replay is still
-- told apart (RFC 6749 §4.1.2: it revokes what the code issued), then removed by the shard's alarm.
CREATE TABLE redeemed_codes (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  access_jti TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  redeemed_at INTEGER NOT NULL
);
CREATE INDEX redeemed_codes_by_expiry ON redeemed_codes (expires_at);

-- The `seacft` log events of redemptions, written in the redemption's transaction and carried to the
-- tenant's logs in batches by the alarm (by id: a batch delivered twice writes each row once). A row leaves
-- only once the tenant object has committed it.
CREATE TABLE pending_logs (
  id TEXT PRIMARY KEY,
  entry TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX pending_logs_by_time ON pending_logs (at);
