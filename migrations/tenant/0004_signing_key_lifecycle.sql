-- Issue 14: signing-key lifecycle (SPEC §2.9, §4.2 "Signing keys").
-- Each key carries its X.509 certificate; which key signs and which keys are published are derived from
-- these times (activation, end of grace, certificate expiry), never from a flag that must be flipped.
ALTER TABLE signing_keys ADD COLUMN cert TEXT;
ALTER TABLE signing_keys ADD COLUMN activates_at INTEGER;
ALTER TABLE signing_keys ADD COLUMN retire_at INTEGER;
ALTER TABLE signing_keys ADD COLUMN inherited INTEGER NOT NULL DEFAULT 0;
UPDATE signing_keys SET activates_at = created_at WHERE activates_at IS NULL;
CREATE INDEX signing_keys_by_type ON signing_keys (type, created_at);
