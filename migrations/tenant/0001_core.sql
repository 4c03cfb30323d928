-- One tenant's configuration and users (ARCHITECTURE.md §2). Times are integer epoch milliseconds.
-- Columns ending in _enc hold AES-GCM ciphertexts (src/shared/crypto/encryption.ts), never plaintext.

-- Key/value settings: config_version (bumped by every configuration write), tenant settings, branding.
CREATE TABLE _settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
INSERT INTO _settings (key, value) VALUES ('config_version', '1');

CREATE TABLE signing_keys (
  kid TEXT PRIMARY KEY,
  type TEXT NOT NULL DEFAULT 'jwt_signing',
  alg TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  private_jwk_enc TEXT NOT NULL,
  is_current INTEGER NOT NULL DEFAULT 0,
  revoked_at INTEGER,
  expires_at INTEGER,
  created_at INTEGER NOT NULL
);

CREATE TABLE resource_servers (
  id TEXT PRIMARY KEY,
  identifier TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL DEFAULT '[]',
  signing_alg TEXT NOT NULL DEFAULT 'RS256',
  token_lifetime INTEGER NOT NULL DEFAULT 86400,
  allow_offline_access INTEGER NOT NULL DEFAULT 0,
  is_system INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE clients (
  client_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT,
  app_type TEXT NOT NULL DEFAULT 'regular_web',
  client_secret_enc TEXT,
  token_endpoint_auth_method TEXT NOT NULL DEFAULT 'client_secret_post',
  grant_types TEXT NOT NULL DEFAULT '[]',
  callbacks TEXT NOT NULL DEFAULT '[]',
  allowed_logout_urls TEXT NOT NULL DEFAULT '[]',
  web_origins TEXT NOT NULL DEFAULT '[]',
  jwks TEXT,
  is_first_party INTEGER NOT NULL DEFAULT 1,
  oidc_conformant INTEGER NOT NULL DEFAULT 1,
  client_metadata TEXT NOT NULL DEFAULT '{}',
  extra TEXT NOT NULL DEFAULT '{}',
  is_system INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE client_grants (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  audience TEXT NOT NULL,
  scope TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (client_id, audience)
);

CREATE TABLE connections (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  strategy TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '{}',
  secrets_enc TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE users (
  user_id TEXT PRIMARY KEY,
  connection TEXT NOT NULL,
  email TEXT,
  email_verified INTEGER NOT NULL DEFAULT 0,
  password_hash TEXT,
  name TEXT,
  nickname TEXT,
  picture TEXT,
  blocked INTEGER NOT NULL DEFAULT 0,
  app_metadata TEXT NOT NULL DEFAULT '{}',
  user_metadata TEXT NOT NULL DEFAULT '{}',
  last_login INTEGER,
  logins_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX users_by_connection_email ON users (connection, email);
CREATE INDEX users_by_created ON users (created_at DESC, user_id DESC);
