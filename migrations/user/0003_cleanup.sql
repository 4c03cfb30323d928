-- Issue 10: the user object's alarm removes refresh-token families whose head has expired (SPEC §8).
-- The head (rotated_to IS NULL) carries the family's absolute expiry and its sliding idle expiry.
CREATE INDEX refresh_heads_by_expiry ON refresh_tokens (expires_at) WHERE rotated_to IS NULL AND expires_at IS NOT NULL;
CREATE INDEX refresh_heads_by_idle_expiry ON refresh_tokens (idle_expires_at) WHERE rotated_to IS NULL AND idle_expires_at IS NOT NULL;
