-- Issue 9: roles and permissions (SPEC §4.2 "Clients, connections, roles, resource servers", §4.3). Times are
-- integer epoch milliseconds. A permission is a (resource server identifier, scope value) pair; it exists only
-- while the API defines that scope (the object prunes assignments when a scope or an API goes away).

-- Access-token dialect of an API (the reference platform's token_dialect): `access_token_authz` adds the
-- user's permissions as a `permissions` claim when RBAC (enforce_policies) is on.
ALTER TABLE resource_servers ADD COLUMN token_dialect TEXT NOT NULL DEFAULT 'access_token';

CREATE TABLE roles (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- Keyset listing newest first (SPEC §4.3 rule 2).
CREATE INDEX roles_by_created ON roles (created_at DESC, id DESC);

CREATE TABLE role_permissions (
  role_id TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  resource_server_identifier TEXT NOT NULL,
  permission_name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  -- Also the listing order of GET /roles/{id}/permissions (identifier, then name, ascending).
  PRIMARY KEY (role_id, resource_server_identifier, permission_name)
);
-- Pruning when an API or one of its scopes goes away.
CREATE INDEX role_permissions_by_api ON role_permissions (resource_server_identifier, permission_name);

-- A user's roles. No foreign key to users: the users table may be rebuilt by a migration (DROP TABLE would
-- cascade); the trigger below removes a deleted user's assignments instead.
CREATE TABLE user_roles (
  user_id TEXT NOT NULL,
  role_id TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, role_id)
);
-- GET /roles/{id}/users: members of a role, newest assignment first.
CREATE INDEX user_roles_by_role ON user_roles (role_id, created_at DESC, user_id DESC);

-- Permissions assigned to a user directly (not through a role).
CREATE TABLE user_permissions (
  user_id TEXT NOT NULL,
  resource_server_identifier TEXT NOT NULL,
  permission_name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, resource_server_identifier, permission_name)
);
CREATE INDEX user_permissions_by_api ON user_permissions (resource_server_identifier, permission_name);

-- A deleted user takes its role assignments and direct permissions with it, whichever path deletes the row.
CREATE TRIGGER users_delete_authorization AFTER DELETE ON users
BEGIN
  DELETE FROM user_roles WHERE user_id = OLD.user_id;
  DELETE FROM user_permissions WHERE user_id = OLD.user_id;
END;
