import { z } from "zod";

/** Role names: unique per tenant (409), trimmed, never empty. */
const roleName = z.string().trim().min(1, "name must not be empty").max(200);
const description = z.string().max(1000);

/** POST /api/v2/roles. `type` accepts only the reference platform's default (organization roles do not exist). */
export const createRoleBody = z.strictObject({
  name: roleName,
  description: description.optional(),
  type: z.literal("tenant", { message: 'type must be "tenant" (organization roles are not offered)' }).optional(),
});

/** PATCH /api/v2/roles/{id}: name and description; a null description removes it. */
export const updateRoleBody = z.strictObject({ name: roleName, description: description.nullable() }).partial();

/** One permission in a request body: an API identifier and one of that API's scope values. */
const permissionRef = z.strictObject({
  resource_server_identifier: z.string().min(1).max(600),
  permission_name: z.string().min(1).max(280),
});

/** Bodies of POST/DELETE /roles/{id}/permissions and /users/{id}/permissions. */
export const permissionsBody = z.strictObject({ permissions: z.array(permissionRef).min(1).max(1000) });

const userId = z.string().min(1).max(600);
const roleId = z.string().min(1).max(100);

/** POST /roles/{id}/users. */
export const roleUsersBody = z.strictObject({ users: z.array(userId).min(1).max(1000) });

/** POST/DELETE /users/{id}/roles. */
export const userRolesBody = z.strictObject({ roles: z.array(roleId).min(1).max(1000) });

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
