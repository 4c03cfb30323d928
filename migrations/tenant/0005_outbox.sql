-- Transactional outbox, audit logs and webhook hooks (SPEC §2.10-2.11, §3.2, §6; ARCHITECTURE.md §3).
-- Times are integer epoch milliseconds.

-- One row per event recorded by a write in the same transaction as its entity rows.
-- Due = processed_at IS NULL AND next_retry_at <= now. A claim sets lease_until and pushes next_retry_at to it,
-- so an event held by a relay pass that crashed becomes due again when its lease ends.
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

-- Audit log rows in the reference platform's shape; log_id is the outbox event id (duplicates ignored).
CREATE TABLE logs (
  log_id TEXT PRIMARY KEY,
  date INTEGER NOT NULL,
  type TEXT NOT NULL,
  event_type TEXT NOT NULL,
  description TEXT,
  client_id TEXT,
  user_id TEXT,
  ip TEXT,
  user_agent TEXT,
  details TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX logs_by_date ON logs (date DESC, log_id DESC);
CREATE INDEX logs_by_user ON logs (user_id, date DESC);

-- Webhook hooks (SPEC §6.1): POSTed to for hook.* events, or called blocking in the prepare phase.
CREATE TABLE hooks (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  trigger_id TEXT NOT NULL,
  url TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX hooks_by_trigger ON hooks (trigger_id, enabled);

-- Set by the registration finalizer once every post-user-registration destination succeeded (SPEC §6.2).
ALTER TABLE users ADD COLUMN registration_completed_at INTEGER;
