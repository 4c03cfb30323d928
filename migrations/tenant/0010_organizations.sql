-- Issue 11: organizations, their enabled connections, members, member roles and invitations (SPEC §2.6,
-- §2.7, §4.2 "Organizations"). Times are integer epoch milliseconds.

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  -- Unique, URL-safe (lowercase letters, digits, `_` and `-`): what a user types in the organization prompt.
  name TEXT NOT NULL UNIQUE,
  display_name TEXT,
  branding TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  token_quota TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX organizations_by_created ON organizations (created_at DESC, id DESC);

-- The connections members of an organization may log in with. Deleting either side removes the link.
CREATE TABLE organization_connections (
  organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
  assign_membership_on_login INTEGER NOT NULL DEFAULT 0,
  show_as_button INTEGER NOT NULL DEFAULT 1,
  is_signup_enabled INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (organization_id, connection_id)
);
CREATE INDEX organization_connections_by_connection ON organization_connections (connection_id);

-- Membership; deleting the organization removes it, and so does deleting the user (the trigger at the end:
-- no foreign key to users, which a later migration may rebuild, and DROP TABLE would cascade).
CREATE TABLE organization_members (
  organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX organization_members_by_user ON organization_members (user_id, organization_id);
CREATE INDEX organization_members_by_created ON organization_members (organization_id, created_at DESC, user_id DESC);

-- Roles a member holds in one organization (their permissions apply to logins in it); deleting the role or
-- the membership removes the row.
CREATE TABLE organization_member_roles (
  organization_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  role_id TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (organization_id, user_id, role_id),
  FOREIGN KEY (organization_id, user_id) REFERENCES organization_members (organization_id, user_id) ON DELETE CASCADE
);
CREATE INDEX organization_member_roles_by_role ON organization_member_roles (role_id);

-- Invitations (SPEC §2.7). ticket_id is what the invitation URL carries; accepting one deletes it (single use).
CREATE TABLE organization_invitations (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  ticket_id TEXT NOT NULL UNIQUE,
  inviter_name TEXT NOT NULL,
  invitee_email TEXT NOT NULL,
  client_id TEXT NOT NULL,
  connection_id TEXT,
  app_metadata TEXT,
  user_metadata TEXT,
  roles TEXT NOT NULL DEFAULT '[]',
  invitation_url TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX organization_invitations_by_org ON organization_invitations (organization_id, created_at DESC, id DESC);

-- A deleted user leaves every organization (with its roles there), whichever path deletes the row.
CREATE TRIGGER users_delete_organization_memberships AFTER DELETE ON users
BEGIN
  DELETE FROM organization_member_roles WHERE user_id = OLD.user_id;
  DELETE FROM organization_members WHERE user_id = OLD.user_id;
END;
