-- Refresh-token rotation (SPEC §2.8, §3.3; issue 10). One row per token; a family is one login's chain of
-- rotations. Only a hash of each token's secret is stored; the token carries its own route (tenant, user).
ALTER TABLE refresh_tokens ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
-- The login facts the refresh grant reads (organization, connection, strategy, auth_time), as JSON.
ALTER TABLE refresh_tokens ADD COLUMN login TEXT NOT NULL DEFAULT '{}';
-- Idle window in milliseconds (NULL: no idle expiry); each rotation slides idle_expires_at by it.
ALTER TABLE refresh_tokens ADD COLUMN idle_lifetime_ms INTEGER;
ALTER TABLE refresh_tokens ADD COLUMN last_exchanged_at INTEGER;
-- Device facts of the reference platform's shape (initial/last ip and user agent), as JSON.
ALTER TABLE refresh_tokens ADD COLUMN device TEXT NOT NULL DEFAULT '{}';
CREATE INDEX refresh_tokens_by_client ON refresh_tokens (client_id, created_at);
CREATE INDEX refresh_tokens_by_session ON refresh_tokens (session_id);
CREATE INDEX refresh_tokens_by_created ON refresh_tokens (created_at DESC, id DESC);
