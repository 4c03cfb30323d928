import { z } from "zod";
import { randomId } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import { luceneToSql } from "../../../shared/lucene";
import { checkpointPage, offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import {
  addOrganizationConnectionBody,
  createOrganizationBody,
  ORGANIZATION_SORTS,
  ORGANIZATIONS_SEARCH,
  updateOrganizationBody,
  updateOrganizationConnectionBody,
} from "../../../shared/schemas/organizations";
import type { OrganizationRecord } from "../../../shared/schemas/organizations";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { LIST_QUERY } from "../list-response";
import { invitationRoutes } from "./organization-invitations";
import { memberRoutes } from "./organization-members";
import { presentConnection, presentOrganization } from "./organization-present";
import { each, relationListRoute } from "../relation-routes";
import { targetTenant } from "../tenant-scoped";

/** SPEC §8: GET /organizations pages 10 by default (checkpoint `take` keeps the common 50). */
export const ORGANIZATIONS_PER_PAGE = 10;

const orgs = (c: AppContext) => targetTenant(c).organizations(auditContext(c));

async function loadOrganization(c: AppContext, id: string): Promise<OrganizationRecord> {
  const org = await targetTenant(c).organizations().get(id);
  if (!org) throw problem("inexistent_organization");
  return org;
}

const ORGANIZATION_QUERY = LIST_QUERY.extend({
  per_page: z.string().optional().describe(`1-100, default ${ORGANIZATIONS_PER_PAGE}`),
  sort: z.string().optional().describe("name:1|-1, display_name:1|-1 or created_at:1|-1 (offset mode; default created_at:-1)"),
  q: z.string().optional().describe("Lucene syntax on id, name, display_name, created_at, metadata.<key>; a bare term matches name or display_name"),
});

/** GET /organizations in either paging mode (SPEC §4.2, §4.3). */
async function listOrganizations(c: AppContext): Promise<Response> {
  const query = c.req.query();
  const isCheckpoint = query.from !== undefined || query.take !== undefined;
  const page = parseListQuery(query, {
    checkpoint: true,
    defaultPerPage: isCheckpoint ? 50 : ORGANIZATIONS_PER_PAGE,
    sorts: ["created_at:-1", ...Object.keys(ORGANIZATION_SORTS).filter((s) => s !== "created_at:-1")],
  });
  // Parsed here so a bad query is a 400 before the object is asked; the object compiles the same text.
  const q = query.q;
  luceneToSql(q, ORGANIZATIONS_SEARCH);
  const tenant = targetTenant(c).organizations();
  if (page.mode === "offset") {
    const { items, total } = await tenant.list(q, { offset: page.page * page.perPage, limit: page.perPage, sort: page.sort });
    return c.json(offsetPage("organizations", items.map(presentOrganization), page, total ?? items.length));
  }
  // SPEC §4.3 rule 2: checkpoint pages keep the fixed order (newest first), whatever the sort.
  const createdAt = Number(page.after?.key);
  if (page.after && !Number.isSafeInteger(createdAt)) throw problem("invalid_cursor");
  const after = page.after ? { createdAt, id: page.after.id } : null;
  const { items } = await tenant.list(q, { after, limit: page.take + 1 });
  return c.json(checkpointPage("organizations", items.map(presentOrganization), page, (o) => ({ key: Date.parse(o.created_at), id: o.id })));
}

const organizationRoutes = [
  defineRoute({
    method: "get",
    path: "/organizations",
    scope: "read:organizations",
    summary: "List organizations: offset (page, per_page default 10, include_totals, sort, q) or checkpoint (from, take)",
    query: ORGANIZATION_QUERY,
    status: 200,
    handler: (c) => listOrganizations(c),
  }),
  defineRoute({
    method: "post",
    path: "/organizations",
    scope: "create:organizations",
    summary: "Create an organization (name unique, lowercase URL-safe), optionally with enabled connections",
    body: createOrganizationBody,
    status: 201,
    async handler(c, { body }) {
      const { enabled_connections = [], metadata = {}, created_at: _created, updated_at: _updated, ...fields } = body;
      const created = unwrap(await orgs(c).create({ id: randomId("org_", 16), ...fields, metadata, enabled_connections }));
      const { enabled_connections: links, ...org } = created;
      return c.json({ ...presentOrganization(org), ...(links ? { enabled_connections: links.map(presentConnection) } : {}) }, 201);
    },
  }),
  // Registered before /organizations/{id}/...: `/organizations/name/x` is a name lookup, never an id.
  defineRoute({
    method: "get",
    path: "/organizations/name/{name}",
    scope: "read:organizations",
    summary: "Get an organization by its name",
    status: 200,
    async handler(c, { params }) {
      const org = await targetTenant(c).organizations().getByName(params.name);
      if (!org) throw problem("inexistent_organization");
      return c.json(presentOrganization(org));
    },
  }),
  defineRoute({
    method: "get",
    path: "/organizations/{id}",
    scope: "read:organizations",
    summary: "Get one organization",
    status: 200,
    async handler(c, { params }) {
      return c.json(presentOrganization(await loadOrganization(c, params.id)));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/organizations/{id}",
    scope: "update:organizations",
    summary: "Update an organization; metadata is merged (null removes a key); null clears display_name, branding, token_quota",
    body: updateOrganizationBody,
    status: 200,
    async handler(c, { params, body }) {
      const { created_at: _created, updated_at: _updated, ...patch } = body;
      return c.json(presentOrganization(unwrap(await orgs(c).update(params.id, patch))));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/organizations/{id}",
    scope: "delete:organizations",
    summary: "Delete an organization with its members, member roles, invitations and connection links (unknown id: 404)",
    status: 204,
    async handler(c, { params }) {
      unwrap(await orgs(c).delete(params.id));
      return c.body(null, 204);
    },
  }),
];

/** The list of enabled connections under either name; the include_totals envelope's key is the path's own. */
const connectionList = (name: "enabled_connections" | "connections") =>
  relationListRoute({
    path: `/organizations/{id}/${name}`,
    scope: "read:organization_connections",
    summary: `The organization's enabled connections (page, per_page, include_totals: {${name}, start, limit, total})`,
    field: name,
    present: each(presentConnection),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).organizations().listConnections(params.id, window)),
  });

const connectionRoutes = [
  connectionList("enabled_connections"),
  defineRoute({
    method: "post",
    path: "/organizations/{id}/enabled_connections",
    scope: "create:organization_connections",
    summary: "Enable a connection for the organization (assign_membership_on_login, show_as_button, is_signup_enabled)",
    body: addOrganizationConnectionBody,
    status: 201,
    async handler(c, { params, body }) {
      return c.json(presentConnection(unwrap(await orgs(c).addConnection(params.id, body))), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/organizations/{id}/enabled_connections/{connection_id}",
    scope: "read:organization_connections",
    summary: "One enabled connection of the organization",
    status: 200,
    async handler(c, { params }) {
      return c.json(presentConnection(unwrap(await targetTenant(c).organizations().getConnection(params.id, params.connection_id))));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/organizations/{id}/enabled_connections/{connection_id}",
    scope: "update:organization_connections",
    summary: "Change an enabled connection's settings",
    body: updateOrganizationConnectionBody,
    status: 200,
    async handler(c, { params, body }) {
      return c.json(presentConnection(unwrap(await orgs(c).updateConnection(params.id, params.connection_id, body))));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/organizations/{id}/enabled_connections/{connection_id}",
    scope: "delete:organization_connections",
    summary: "Disable a connection for the organization",
    status: 204,
    async handler(c, { params }) {
      unwrap(await orgs(c).removeConnection(params.id, params.connection_id));
      return c.body(null, 204);
    },
  }),
];

/**
 * `/organizations/{id}/connections[/{connection_id}]`: the reference platform's newer name for the same five
 * operations (issue 28 point 1; auth0-deploy-cli reads it on export and drops an organization whose read
 * fails). Same scopes, bodies and answers as `enabled_connections`.
 */
// The SDK reads the newer list's include_totals page under `connections` (auth0 v5+ `getItems`), so that list is
// its own route; the other four are the same routes under the newer path.
const connectionAliasRoutes = [
  connectionList("connections"),
  ...connectionRoutes.slice(1).map((route) => ({ ...route, path: route.path.replace("/enabled_connections", "/connections") })),
];

/** Every organization route (SPEC §4.2 "Organizations"), plus GET /users/{id}/organizations. */
export const organizationsRoutes = [...organizationRoutes, ...connectionRoutes, ...connectionAliasRoutes, ...memberRoutes, ...invitationRoutes];
