/** Permission pages and token subjects (role and permission records live in schemas/roles.ts). */
import type { UserRecord } from "../schemas/users";
import type { PermissionRef } from "../schemas/roles";

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
