import { problem } from "../../shared/errors";
import type { UserRecord } from "../../shared/types";
import { defineRoute } from "./define";
import { targetTenant } from "./tenant-scoped";

/**
 * A user in the reference platform's shape: the identities array names the connection and the bare id
 * (without the `auth0|` provider prefix, SPEC §2.12).
 */
export function presentUser(user: UserRecord) {
  const [provider, ...rest] = user.user_id.split("|");
  const bareId = rest.length ? rest.join("|") : user.user_id;
  return {
    ...user,
    identities: [{ provider: rest.length ? provider : "auth0", connection: user.connection, user_id: bareId, isSocial: false }],
  };
}

export const userRoutes = [
  defineRoute({
    method: "get",
    path: "/users/{id}",
    scope: "read:users",
    // The reference platform's current-user token: a user reads their own record, and nobody else's.
    currentUser: { scope: "read:current_user", param: "id" },
    summary: "One user by id (read:users, or read:current_user on the token's own user)",
    status: 200,
    async handler(c, { params }) {
      const user = await targetTenant(c).users().get(params.id);
      if (!user) throw problem("inexistent_user");
      return c.json(presentUser(user));
    },
  }),
];
