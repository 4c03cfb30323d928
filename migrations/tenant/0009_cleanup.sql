-- Issue 10: revocation cascades, back-channel logout and alarm cleanup (SPEC §3.3, §8).

-- The issuer a session's tokens carry (the host the user logged in through: apex, tenant subdomain or custom
-- domain), so a back-channel logout token names the same `iss` as the ID tokens the client holds.
ALTER TABLE sessions ADD COLUMN issuer TEXT;

-- Cleanup (SPEC §8) finds the earliest expiry of each table in one index step and deletes in bounded batches.
CREATE INDEX sessions_by_expiry ON sessions (expires_at);
CREATE INDEX authorization_codes_by_expiry ON authorization_codes (expires_at);
CREATE INDEX login_tickets_by_expiry ON login_tickets (expires_at);
CREATE INDEX client_assertion_jtis_by_expiry ON client_assertion_jtis (expires_at);
CREATE INDEX revoked_access_tokens_by_expiry ON revoked_access_tokens (expires_at);
