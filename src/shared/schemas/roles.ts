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
