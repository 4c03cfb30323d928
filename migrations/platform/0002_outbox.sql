-- Transactional outbox of the registry (issue 8): tenant writes record their audit events here, in the
-- same transaction; the relay forwards them to the acting tenant's logs (an internal destination).
-- Same columns and meaning as migrations/tenant/0004_outbox.sql.
CREATE TABLE outbox (
  id TEXT PRIMARY KEY,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  retry_count INTEGER NOT NULL DEFAULT 0,
  next_retry_at INTEGER NOT NULL,
  error TEXT,
  processed_at INTEGER,
  dead_lettered_at INTEGER,
  final_error TEXT,
  -- local: delivered inside one transaction (logs); network: claimed with a lease, delivered by fetch.
  lane TEXT NOT NULL DEFAULT 'local',
  -- Claim: the relay pass that holds the event and until when (a crashed pass's claim expires).
  claim_id TEXT,
  lease_until INTEGER
);
-- (lane, next_retry_at, id) is exactly the relay's ORDER BY, so a claim reads only the rows it takes.
CREATE INDEX outbox_due ON outbox (lane, next_retry_at, id) WHERE processed_at IS NULL;
CREATE INDEX outbox_retention ON outbox (processed_at) WHERE processed_at IS NOT NULL AND dead_lettered_at IS NULL;
CREATE INDEX outbox_dead ON outbox (dead_lettered_at DESC, id DESC) WHERE dead_lettered_at IS NOT NULL;
