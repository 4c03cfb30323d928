import { z } from "zod";
import { randomId } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import { createClientGrantBody, updateClientGrantBody } from "../../../shared/schemas/client-grants";
import type { ClientGrantRecord } from "../../../shared/schemas/client-grants";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { LIST_QUERY, listResponse } from "../list-response";
import { targetTenant } from "../tenant-scoped";
import { refuseGrantBeyondOperator, refuseGrantChangeBeyondOperator } from "../operator-authority";

/** The reference platform's shape (no timestamps; the organization settings once set). */
export function presentClientGrant(grant: ClientGrantRecord) {
  return {
    id: grant.id,
    client_id: grant.client_id,
    audience: grant.audience,
    scope: grant.scope,
    ...(grant.organization_usage === null ? {} : { organization_usage: grant.organization_usage }),
    ...(grant.allow_any_organization === null ? {} : { allow_any_organization: grant.allow_any_organization }),
  };
}
const present = presentClientGrant;

export const clientGrantRoutes = [
  defineRoute({
    method: "post",
    path: "/client-grants",
    scope: "create:client_grants",
    summary: "Grant an application scopes of an API for client_credentials (one grant per client and audience: 409)",
    body: createClientGrantBody,
    status: 201,
    invalidatesConfig: true,
    async handler(c, { body }) {
      refuseGrantBeyondOperator(c, body.audience, body.scope);
      const grant = unwrap(await targetTenant(c).clientGrants(auditContext(c)).create({ id: randomId("cgr_"), ...body }));
      return c.json(present(grant), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/client-grants",
    scope: "read:client_grants",
    summary: "List client grants, newest first, optionally for one audience and/or client_id",
    query: LIST_QUERY.extend({ audience: z.string().optional().describe("only grants for this audience"), client_id: z.string().optional().describe("only grants of this client") }),
    status: 200,
    handler(c) {
      const filter = { audience: c.req.query("audience"), client_id: c.req.query("client_id") };
      return listResponse(
        c,
        "client_grants",
        (window) => targetTenant(c).clientGrants().list(window, filter),
        (grant) => grant.id,
        present,
      );
    },
  }),
  defineRoute({
    method: "get",
    path: "/client-grants/{id}",
    scope: "read:client_grants",
    summary: "Get one client grant (what Terraform's auth0_client_grant reads on every plan)",
    status: 200,
    async handler(c, { params }) {
      const grant = await targetTenant(c).clientGrants().get(params.id);
      if (!grant) throw problem("inexistent_client_grant");
      return c.json(present(grant));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/client-grants/{id}",
    scope: "update:client_grants",
    summary: "Replace a client grant's scopes (each must be defined on its API) and/or set its organization settings",
    body: updateClientGrantBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      await refuseGrantChangeBeyondOperator(c, params.id, body.scope);
      const grant = unwrap(await targetTenant(c).clientGrants(auditContext(c)).update(params.id, body));
      return c.json(present(grant));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/client-grants/{id}",
    scope: "delete:client_grants",
    summary: "Delete a client grant",
    status: 204,
    invalidatesConfig: true,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).clientGrants(auditContext(c)).delete(params.id));
      return c.body(null, 204);
    },
  }),
];
