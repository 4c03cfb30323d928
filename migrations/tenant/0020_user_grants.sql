-- User consent (issue 29 point 2): the scopes a user granted a client for one audience (the reference
-- platform's /api/v2/grants), one row per (user, client, audience); a new consent adds to the row's scopes.
-- Rows go with their user and with their client. Expand-only.
CREATE TABLE user_grants (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  audience TEXT NOT NULL,
  scope TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (user_id, client_id, audience)
);
CREATE INDEX user_grants_by_client ON user_grants (client_id);
CREATE TRIGGER user_grants_user_deleted AFTER DELETE ON users BEGIN
  DELETE FROM user_grants WHERE user_id = OLD.user_id;
END;
CREATE TRIGGER user_grants_client_deleted AFTER DELETE ON clients BEGIN
  DELETE FROM user_grants WHERE client_id = OLD.client_id;
END;
