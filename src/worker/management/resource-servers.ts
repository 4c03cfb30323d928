import { randomId } from "../../shared/crypto/random";
import { problem, unwrap } from "../../shared/errors";
import {
  createResourceServerBody,
  DEFAULT_TOKEN_LIFETIME_S,
  updateResourceServerBody,
} from "../../shared/schemas/resource-servers";
import type { ResourceServerRecord } from "../../shared/types";
import { auditContext } from "../http/audit";
import { defineRoute } from "./define";
import { ensureSigningKey } from "./keys";
import { LIST_QUERY, listResponse } from "./list-response";
import { targetTenant } from "./tenant-scoped";

/** The reference platform's shape (no timestamps). */
function present(api: ResourceServerRecord) {
  const { created_at: _created, updated_at: _updated, ...shown } = api;
  return shown;
}

export const resourceServerRoutes = [
  defineRoute({
    method: "post",
    path: "/resource-servers",
    scope: "create:resource_servers",
    summary: "Create an API; its identifier is the audience of the access tokens it receives (unique: 409)",
    body: createResourceServerBody,
    status: 201,
    invalidatesConfig: true,
    async handler(c, { body }) {
      // The key comes first, so that no token request ever finds the API without a key of its algorithm.
      await ensureSigningKey(c, body.signing_alg ?? "RS256");
      const api = unwrap(
        await targetTenant(c).resourceServers(auditContext(c)).create({
          id: randomId("rs_"),
          identifier: body.identifier,
          name: body.name ?? body.identifier,
          scopes: body.scopes ?? [],
          signing_alg: body.signing_alg ?? "RS256",
          token_lifetime: body.token_lifetime ?? DEFAULT_TOKEN_LIFETIME_S,
          allow_offline_access: body.allow_offline_access ?? false,
          enforce_policies: body.enforce_policies ?? false,
          token_dialect: body.token_dialect ?? "access_token",
        }),
      );
      return c.json(present(api), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/resource-servers",
    scope: "read:resource_servers",
    summary: "List APIs, newest first",
    query: LIST_QUERY,
    status: 200,
    handler(c) {
      return listResponse(
        c,
        "resource_servers",
        (window) => targetTenant(c).resourceServers().list(window),
        (api) => api.id,
        present,
      );
    },
  }),
  defineRoute({
    method: "get",
    path: "/resource-servers/{id}",
    scope: "read:resource_servers",
    summary: "Get one API",
    status: 200,
    async handler(c, { params }) {
      const api = await targetTenant(c).resourceServers().get(params.id);
      if (!api) throw problem("inexistent_resource_server");
      return c.json(present(api));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/resource-servers/{id}",
    scope: "update:resource_servers",
    summary: "Update an API (the system management API cannot be modified: 400); removed scopes leave its grants",
    body: updateResourceServerBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      if (body.signing_alg) await ensureSigningKey(c, body.signing_alg);
      const api = unwrap(await targetTenant(c).resourceServers(auditContext(c)).update(params.id, body));
      return c.json(present(api));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/resource-servers/{id}",
    scope: "delete:resource_servers",
    summary: "Delete an API and its client grants (the system management API cannot be deleted: 400)",
    status: 204,
    invalidatesConfig: true,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).resourceServers(auditContext(c)).delete(params.id));
      return c.body(null, 204);
    },
  }),
];
