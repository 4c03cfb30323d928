/** Roles and permissions (SPEC §4.2 "Clients, connections, roles, resource servers"): RPC DTOs. */
import type { UserRecord } from "./auth";

/** A role as stored; the API shows `{id, name, description}`. */
export interface RoleRecord {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export type NewRole = Pick<RoleRecord, "id" | "name" | "description">;

/** PATCH /roles/{id}: a null description removes it. */
export type RolePatch = Partial<Pick<RoleRecord, "name" | "description">>;

/** A permission: one scope value of one API (resource server), as requests name it. */
export interface PermissionRef {
  resource_server_identifier: string;
  permission_name: string;
}

/** A permission as lists show it: the API's name and the scope's description joined in. */
export interface PermissionRecord extends PermissionRef {
  resource_server_name: string;
  description: string | null;
}

/** Where a user's permission comes from (GET /users/{id}/permissions `sources`). */
export interface PermissionSource {
  /** The role's id; empty for a direct assignment. */
  source_id: string;
  /** The role's name; empty for a direct assignment. */
  source_name: string;
  source_type: "DIRECT" | "ROLE";
}

export interface UserPermissionRecord extends PermissionRecord {
  sources: PermissionSource[];
}

/** A member of a role (GET /roles/{id}/users); `created_at` is when the role was assigned (the list order). */
export interface RoleMemberRecord {
  user_id: string;
  email: string | null;
  picture: string | null;
  name: string | null;
  created_at: string;
}

/**
 * A page of permissions (GET /roles/{id}/permissions): an offset window, or the position (identifier, then
 * name, ascending) after which a checkpoint page starts.
 */
export type PermissionWindow = { offset: number; limit: number } | { after: PermissionRef | null; limit: number };

/**
 * What a user-facing grant needs to mint a user's access token, in the one read it already makes: the user
 * (null if deleted) and, for every API that enforces RBAC, the names of the permissions the user holds there
 * directly or through roles.
 */
export interface TokenSubject {
  user: UserRecord | null;
  permissions: Record<string, string[]>;
}
