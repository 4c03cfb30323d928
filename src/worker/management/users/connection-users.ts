import { z } from "zod";
import { problem } from "../../../shared/errors";
import { DATABASE_STRATEGY } from "../../../shared/strategies";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";
import { deleteUser } from "./users";

/** DELETE /connections/{id}/users: `email` is required and must look like an address. */
const EMAIL_QUERY = z.looseObject({
  email: z.string({ error: "email is required" }).trim().min(3, "email is required").max(512).regex(/^[^@\s]+@[^@\s]+$/, "email must be an email address").describe("the user's email"),
});

/**
 * DELETE /connections/{id}/users?email= (the reference platform's "delete a connection user"): removes the
 * database connection's account with that email exactly as DELETE /users/{id} does (its hooks, its linked
 * accounts, its per-user data). Other kinds of connection hold no accounts of their own: 400.
 */
export const connectionUserRoutes = [
  defineRoute({
    method: "delete",
    path: "/connections/{id}/users",
    scope: "delete:users",
    summary: "Delete the database connection's user with this email (?email=, required)",
    query: EMAIL_QUERY,
    status: 204,
    async handler(c, { params, query }) {
      const connection = await targetTenant(c).connections().get(params.id);
      if (!connection) throw problem("inexistent_connection");
      if (connection.strategy !== DATABASE_STRATEGY) throw problem("connection_users_unsupported");
      const user = await targetTenant(c).users().findByEmail(connection.name, query.email);
      if (!user) throw problem("connection_user_not_found");
      await deleteUser(c, user.user_id);
      return c.body(null, 204);
    },
  }),
];
