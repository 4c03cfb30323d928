-- Multi-factor authentication, passkeys and passwordless login (SPEC §2.4-2.5, §3.4-3.5; issues 9 and 12).
-- Times are integer epoch milliseconds. Guardian settings (factors, policies, SMS provider) live in _settings.

-- A user's authentication methods (SPEC §2.4): the management API's data and what the login pages enroll.
-- The TOTP secret is an AES-GCM ciphertext (context totp_secret:<id>) and never leaves the worker in clear.
-- WebAuthn and passkey methods keep the credential's public data only (the private key stays on the device).
CREATE TABLE authentication_methods (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('totp', 'phone', 'webauthn-roaming', 'webauthn-platform', 'passkey')),
  confirmed INTEGER NOT NULL DEFAULT 1,
  name TEXT,
  totp_secret_enc TEXT,
  phone_number TEXT,
  preferred_authentication_method TEXT,
  credential_id TEXT,
  public_key TEXT,
  sign_count INTEGER,
  credential_backed_up INTEGER,
  credential_device_type TEXT,
  transports TEXT,
  aaguid TEXT,
  relying_party_identifier TEXT,
  user_handle TEXT,
  user_agent TEXT,
  created_at INTEGER NOT NULL,
  enrolled_at INTEGER,
  last_auth_at INTEGER
);
CREATE INDEX authentication_methods_by_user ON authentication_methods (user_id, created_at, id);
-- A credential id names one authenticator of one tenant (WebAuthn §6.1: at most one account per credential).
CREATE UNIQUE INDEX authentication_methods_by_credential ON authentication_methods (credential_id)
  WHERE credential_id IS NOT NULL;

-- Recovery codes (issue 12 point 3): shown once at enrollment; only SHA-256 of each is kept; used once.
CREATE TABLE recovery_codes (
  user_id TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  used_at INTEGER,
  PRIMARY KEY (user_id, code_hash)
);

-- Enrollment tickets (SPEC §3.4): the ticket id in the URL is the bearer secret, stored as a hash; redeemed
-- once by a conditional UPDATE, expired after 5 days.
CREATE TABLE enrollment_tickets (
  ticket_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  redeemed_at INTEGER
);
CREATE INDEX enrollment_tickets_by_expiry ON enrollment_tickets (expires_at);

-- One browser's MFA step (enrollment from a ticket, or the second factor of a login waiting in state
-- awaiting_mfa): bound to the browser by a cookie whose secret is stored as a hash. `pending` holds the
-- enrollment in progress (factor, encrypted TOTP secret, phone number, WebAuthn options).
CREATE TABLE mfa_transactions (
  id TEXT PRIMARY KEY,
  secret_hash TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('login', 'ticket')),
  user_id TEXT NOT NULL,
  login_session_id TEXT,
  csrf_token TEXT NOT NULL,
  pending TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  completed_at INTEGER
);
CREATE INDEX mfa_transactions_by_expiry ON mfa_transactions (expires_at);

-- Short-lived single-use challenges: SMS and email one-time codes (MFA, enrollment, passwordless) and
-- WebAuthn challenges. Only a hash of the secret is stored; each is consumed by one conditional UPDATE,
-- and wrong guesses are counted on the row (attempt-limited).
CREATE TABLE auth_challenges (
  id TEXT PRIMARY KEY,
  purpose TEXT NOT NULL,
  subject TEXT NOT NULL,
  client_id TEXT,
  secret_hash TEXT NOT NULL,
  data TEXT NOT NULL DEFAULT '{}',
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  consumed_at INTEGER
);
CREATE INDEX auth_challenges_by_subject ON auth_challenges (purpose, subject, created_at);
CREATE INDEX auth_challenges_by_expiry ON auth_challenges (expires_at);

-- The development message sink (SMS and email providers selected as "development"): what would have been
-- sent, for a developer to read locally. Never used by the Twilio or other real providers.
CREATE TABLE dev_messages (
  id TEXT PRIMARY KEY,
  channel TEXT NOT NULL CHECK (channel IN ('sms', 'email')),
  recipient TEXT NOT NULL,
  subject TEXT,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX dev_messages_by_created ON dev_messages (created_at DESC);

-- Authentication methods references of a browser session (RFC 8176 `amr`, e.g. ["pwd", "mfa"]), so that SSO
-- reuses a session for an application that requires MFA only when the session itself passed MFA.
ALTER TABLE sessions ADD COLUMN amr TEXT NOT NULL DEFAULT '[]';
