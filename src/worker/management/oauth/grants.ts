import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import type { UserGrantRecord } from "../../../shared/schemas/client-grants";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { LIST_QUERY, listResponse } from "../list-response";
import { targetTenant } from "../tenant-scoped";

/** The reference platform's grant shape (its `clientID` spelling included; no timestamps). */
function present(grant: UserGrantRecord) {
  return { id: grant.id, clientID: grant.client_id, user_id: grant.user_id, audience: grant.audience, scope: grant.scope };
}

/** Users' consents (issue 29 point 2): what the consent page recorded; deleting one brings the page back. */
export const grantRoutes = [
  defineRoute({
    method: "get",
    path: "/grants",
    scope: "read:grants",
    summary: "List the grants (consents) users gave applications, optionally for one user, client and/or audience",
    query: LIST_QUERY.extend({
      user_id: z.string().optional().describe("only this user's grants"),
      client_id: z.string().optional().describe("only grants to this application"),
      audience: z.string().optional().describe("only grants for this audience"),
    }),
    status: 200,
    handler(c) {
      const filter = { user_id: c.req.query("user_id"), client_id: c.req.query("client_id"), audience: c.req.query("audience") };
      return listResponse(c, "grants", (window) => targetTenant(c).userGrants().list(window, filter), (grant) => grant.id, present, { checkpoint: false });
    },
  }),
  defineRoute({
    method: "delete",
    path: "/grants/{id}",
    scope: "delete:grants",
    summary: "Delete a grant: the application asks the user for consent again",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).userGrants(auditContext(c)).delete(params.id));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/grants",
    scope: "delete:grants",
    summary: "Delete every grant of one user (user_id is required)",
    query: z.looseObject({ user_id: z.string().optional().describe("the user whose grants go") }),
    status: 204,
    async handler(c) {
      const userId = c.req.query("user_id");
      if (!userId) throw problem("invalid_query_string", { detail: "user_id is required" });
      await targetTenant(c).userGrants(auditContext(c)).deleteAllOf(userId);
      return c.body(null, 204);
    },
  }),
];
