import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { createUserBody, updateUserBody } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { userObject } from "../../tenant/stubs";
import { createManagedUser } from "../../users/create";
import { runUserHooks } from "../../users/hooks";
import { fieldSelector, presentUser } from "../../users/present";
import { updateManagedUser } from "../../users/update";
import { deleteThroughScript } from "../../actions/custom-db";
import { configOf } from "../../login/connection";
import { defineRoute } from "../define";
import { userIdentityRoutes } from "./user-identities";
import { userListRoutes } from "./user-lists";
import { requireUser, targetTenant } from "../tenant-scoped";

export { presentUser } from "../../users/present";

const FIELDS_QUERY = z.looseObject({
  fields: z.string().optional().describe("comma-separated fields to include (or exclude with include_fields=false)"),
  include_fields: z.string().optional().describe("true (default) or false"),
});

/**
 * DELETE /users/{id}: the tenant's commit first (the user, its linked accounts, identities and sessions,
 * `user.deleted`, the post-user-deletion hook), then each removed account's user object is wiped (refresh
 * tokens, throttles ...). A wipe is idempotent, so a retry after a failure here converges.
 */
export async function deleteUser(c: AppContext, userId: string): Promise<void> {
  const tenant = targetTenant(c);
  const user = await requireUser(c, userId);
  await runUserHooks(c, "pre-user-deletion", { user_id: userId });
  // Issue 32: a custom database's delete script goes first; its failure leaves the user in place.
  const scriptFailure = await deleteThroughScript(c, await configOf(c), user);
  if (scriptFailure) throw problem("custom_db_script_failed", { script: "delete", detail: scriptFailure });
  const removed = unwrap(await tenant.users(auditContext(c)).delete(userId));
  await Promise.all(removed.map((id) => userObject(c.env, c.var.tenant.id, id).wipe()));
}

export const userRoutes = [
  ...userListRoutes,
  defineRoute({
    method: "post",
    path: "/users",
    scope: "create:users",
    summary: "Create a user in a database or passwordless connection (password hashed, rules of the connection)",
    body: createUserBody,
    status: 201,
    async handler(c, { body }) {
      return c.json(presentUser(await createManagedUser(c, body)), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}",
    scope: "read:users",
    // The reference platform's current-user token: a user reads their own record, and nobody else's.
    currentUser: { scope: "read:current_user", param: "id" },
    summary: "One user by id (read:users, or read:current_user on the token's own user)",
    query: FIELDS_QUERY,
    status: 200,
    async handler(c, { params, query }) {
      const select = fieldSelector(query);
      return c.json(select(presentUser(await requireUser(c, params.id))));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/users/{id}",
    scope: "update:users",
    alsoScopes: ["update:users_app_metadata"],
    currentUser: { scope: "update:current_user_metadata", param: "id" },
    summary:
      "Update a user; metadata merged at the top level (null removes a key); with connection, a linked identity (update:users, update:users_app_metadata for metadata, update:current_user_metadata for the own user_metadata)",
    body: updateUserBody,
    status: 200,
    async handler(c, { params, body }) {
      return c.json(presentUser(await updateManagedUser(c, params.id, body)));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}",
    scope: "delete:users",
    summary: "Delete a user with its linked accounts, identities, sessions and per-user data",
    status: 204,
    async handler(c, { params }) {
      await deleteUser(c, params.id);
      return c.body(null, 204);
    },
  }),
  ...userIdentityRoutes,
];
