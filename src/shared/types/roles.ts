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

/**
 * Where a user stands behind its management token now (issue 25 finding 5), read at each request: whether
 * it exists and is not blocked, and, for a token issued through an organization, whether it is still a
 * member and which permissions it holds on the management API there (directly, through its roles, and
 * through its member roles in that organization).
 */
export interface ManagementStanding {
  user: "active" | "blocked" | "missing";
  member: boolean;
  permissions: string[];
}
