-- Issue 6 (security review).

-- RBAC switch of an API (the reference platform's enforce_policies): user tokens then carry only the
-- user's permissions for that API, never merely what was requested.
ALTER TABLE resource_servers ADD COLUMN enforce_policies INTEGER NOT NULL DEFAULT 0;

-- The jti of the access token issued when a code was redeemed, fixed at redemption inside the object, so a
-- replay of the code can revoke it (RFC 6749 §4.1.2).
ALTER TABLE authorization_codes ADD COLUMN access_jti TEXT;
