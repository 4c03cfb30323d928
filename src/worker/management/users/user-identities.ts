import { unwrap } from "../../../shared/errors";
import { linkIdentityBody } from "../../../shared/schemas/users";
import { auditContext } from "../../http/audit";
import { presentIdentity } from "../../users/present";
import { linkTarget } from "../../users/link";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/** Account linking (SPEC §2.12, §4.2): the secondary becomes an identity of the primary, and back. */
export const userIdentityRoutes = [
  defineRoute({
    method: "post",
    path: "/users/{id}/identities",
    scope: "update:users",
    currentUser: { scope: "update:current_user_identities", param: "id" },
    summary:
      "Link an account to the user: {provider, user_id} (bare or provider-prefixed id) with update:users, or {link_with: <ID token>} with update:current_user_identities on the own user; answers the primary's identities",
    body: linkIdentityBody,
    status: 201,
    async handler(c, { params, body }) {
      const ref = await linkTarget(c, body);
      const linked = unwrap(await targetTenant(c).users(auditContext(c)).link(params.id, ref));
      return c.json(linked.identities.map(presentIdentity), 201);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}/identities/{provider}/{user_id}",
    scope: "update:users",
    currentUser: { scope: "update:current_user_identities", param: "id" },
    summary: "Unlink an identity (provider and bare user id) from the user; it becomes a user of its own again. Answers the remaining identities",
    status: 200,
    async handler(c, { params }) {
      const unlinked = unwrap(await targetTenant(c).users(auditContext(c)).unlink(params.id, params.provider, params.user_id));
      return c.json(unlinked.identities.map(presentIdentity));
    },
  }),
];
