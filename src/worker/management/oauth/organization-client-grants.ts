import { z } from "zod";
import { unwrap } from "../../../shared/errors";
import { problem } from "../../../shared/errors";
import { organizationClientGrantBody } from "../../../shared/schemas/client-grants";
import type { OrganizationRecord } from "../../../shared/schemas/organizations";
import { parseListQuery } from "../../../shared/pagination/list-query";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { LIST_QUERY } from "../list-response";
import { each, relationListRoute } from "../relation-routes";
import { targetTenant } from "../tenant-scoped";
import { presentClientGrant } from "./client-grants";

const GRANTS_QUERY = LIST_QUERY.extend({
  audience: z.string().max(600).optional().describe("only grants for this audience"),
  client_id: z.string().max(64).optional().describe("only grants of this client"),
  grant_ids: z.string().max(2000).optional().describe("comma-separated grant ids"),
});

/** An organization as GET /organizations/{id} shows it (the association time is internal). */
const presentOrganization = ({ associated_at: _at, ...org }: OrganizationRecord & { associated_at: number }) => org;

/**
 * Which client grants an organization's tokens may use (issue 28 point 2): auth0-deploy-cli reads these for
 * every organization and drops the organization from its export when the read fails; Terraform's
 * auth0_organization_client_grant manages one association.
 */
export const organizationClientGrantRoutes = [
  relationListRoute({
    path: "/organizations/{id}/client-grants",
    scope: "read:organization_client_grants",
    summary: "The client grants associated with the organization (offset paging; audience, client_id, grant_ids filters)",
    query: GRANTS_QUERY,
    field: "client_grants",
    present: each(presentClientGrant),
    fetch: async (c, params, window) => {
      const grantIds = c.req.query("grant_ids")?.split(",").map((id) => id.trim()).filter(Boolean);
      const filter = { audience: c.req.query("audience"), client_id: c.req.query("client_id"), grant_ids: grantIds };
      return unwrap(await targetTenant(c).organizationClientGrants().list(params.id, filter, window as { offset: number; limit: number }));
    },
  }),
  defineRoute({
    method: "post",
    path: "/organizations/{id}/client-grants",
    scope: "create:organization_client_grants",
    summary: "Associate a client grant (organization_usage allow or require) with the organization: {grant_id}",
    body: organizationClientGrantBody,
    status: 201,
    async handler(c, { params, body }) {
      const grant = unwrap(await targetTenant(c).organizationClientGrants(auditContext(c)).associate(params.id, body.grant_id));
      return c.json(presentClientGrant(grant), 201);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/organizations/{id}/client-grants/{grant_id}",
    scope: "delete:organization_client_grants",
    summary: "Remove a client grant's association with the organization",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).organizationClientGrants(auditContext(c)).dissociate(params.id, params.grant_id));
      return c.body(null, 204);
    },
  }),
  relationListRoute({
    path: "/client-grants/{id}/organizations",
    scope: "read:organization_client_grants",
    summary: "The organizations a client grant is associated with: checkpoint (from, take: {organizations, next}) or offset",
    field: "organizations",
    checkpoint: {
      parse: (c) => parseListQuery(c.req.query(), { checkpoint: true }),
      after(cursor) {
        const createdAt = Number(cursor.key);
        if (!Number.isSafeInteger(createdAt)) throw problem("invalid_cursor");
        return { createdAt, id: cursor.id };
      },
      position: (org: OrganizationRecord & { associated_at: number }) => ({ key: org.associated_at, id: org.id }),
    },
    present: each(presentOrganization),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).organizationClientGrants().organizations(params.id, window)),
  }),
];
