import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { checkpointPage, offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import { organizationMemberRolesBody, organizationMembersBody } from "../../../shared/schemas/organizations";
import type { OrganizationMemberRecord, OrganizationRoleRecord } from "../../../shared/schemas/organizations";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { LIST_QUERY, projection } from "../list-response";
import { offsetQuery, presentOrganization } from "./organization-present";
import { targetTenant } from "../tenant-scoped";

/** Listing members' roles (`fields=roles`) needs this scope too, as on the reference platform. */
const MEMBER_ROLES_SCOPE = "read:organization_member_roles";

const orgs = (c: AppContext) => targetTenant(c).organizations(auditContext(c));

/** A member in the reference platform's shape (OrganizationMember): absent profile fields are omitted. */
function presentMember(member: OrganizationMemberRecord, roles?: OrganizationRoleRecord[]) {
  const { created_at: _at, ...fields } = member;
  const shown = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
  return roles ? { ...shown, roles: roles.map(({ id, name }) => ({ id, name })) } : shown;
}

const presentRole = (role: OrganizationRoleRecord) => ({ id: role.id, name: role.name, ...(role.description === null ? {} : { description: role.description }) });

const MEMBER_QUERY = LIST_QUERY.extend({
  fields: z.string().optional().describe("comma-separated fields (user_id, email, name, picture, roles); roles needs read:organization_member_roles"),
  include_fields: z.string().optional().describe("true (default): only the fields listed; false: all but them"),
});

/** GET /organizations/{id}/members in either paging mode (checkpoint: {members, next}). */
async function listMembers(c: AppContext, orgId: string): Promise<Response> {
  const page = parseListQuery(c.req.query(), { checkpoint: true });
  const project = projection(c);
  const fields = (c.req.query("fields") ?? "").split(",").map((f) => f.trim());
  const withRoles = fields.includes("roles") && c.req.query("include_fields") !== "false";
  if (withRoles && !c.var.auth.scopes.has(MEMBER_ROLES_SCOPE)) throw problem("insufficient_scope", { scope: MEMBER_ROLES_SCOPE });
  const tenant = targetTenant(c).organizations();
  const present = async (members: OrganizationMemberRecord[]) => {
    const roles = withRoles ? await tenant.rolesOfMembers(orgId, members.map((m) => m.user_id)) : null;
    return members.map((m) => project(presentMember(m, roles ? (roles[m.user_id] ?? []) : undefined)));
  };
  if (page.mode === "offset") {
    const { items, total } = unwrap(await tenant.listMembers(orgId, { offset: page.page * page.perPage, limit: page.perPage }));
    return c.json(offsetPage("members", await present(items), page, total ?? items.length));
  }
  const createdAt = Number(page.after?.key);
  if (page.after && !Number.isSafeInteger(createdAt)) throw problem("invalid_cursor");
  const after = page.after ? { createdAt, id: page.after.id } : null;
  const { items } = unwrap(await tenant.listMembers(orgId, { after, limit: page.take + 1 }));
  const body = checkpointPage("members", items, page, (m) => ({ key: Date.parse(m.created_at), id: m.user_id }));
  body.members = await present(body.members as OrganizationMemberRecord[]);
  return c.json(body);
}

export const memberRoutes = [
  defineRoute({
    method: "get",
    path: "/organizations/{id}/members",
    scope: "read:organization_members",
    summary: "List members: offset (page, per_page, include_totals) or checkpoint (from, take: {members, next})",
    query: MEMBER_QUERY,
    status: 200,
    handler: (c, { params }) => listMembers(c, params.id),
  }),
  defineRoute({
    method: "post",
    path: "/organizations/{id}/members",
    scope: "create:organization_members",
    summary: "Add users to the organization (existing members are kept)",
    body: organizationMembersBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await orgs(c).addMembers(params.id, body.members));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/organizations/{id}/members",
    scope: "delete:organization_members",
    summary: "Remove users from the organization, with their roles in it",
    body: organizationMembersBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await orgs(c).removeMembers(params.id, body.members));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/organizations/{id}/members/{user_id}/roles",
    scope: "read:organization_member_roles",
    summary: "A member's roles in the organization (page, per_page, include_totals: {roles, start, limit, total})",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const q = offsetQuery(c);
      const window = { offset: q.page * q.perPage, limit: q.perPage };
      const { items, total } = unwrap(await targetTenant(c).organizations().memberRoles(params.id, params.user_id, window));
      return c.json(offsetPage("roles", items.map(presentRole), q, total ?? items.length));
    },
  }),
  defineRoute({
    method: "post",
    path: "/organizations/{id}/members/{user_id}/roles",
    scope: "create:organization_member_roles",
    summary: "Give a member roles in the organization",
    body: organizationMemberRolesBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await orgs(c).assignMemberRoles(params.id, params.user_id, body.roles));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/organizations/{id}/members/{user_id}/roles",
    scope: "delete:organization_member_roles",
    summary: "Take roles from a member in the organization",
    body: organizationMemberRolesBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await orgs(c).removeMemberRoles(params.id, params.user_id, body.roles));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}/organizations",
    scope: "read:users",
    summary: "The organizations a user belongs to (page, per_page, include_totals: {organizations, start, limit, total})",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const q = offsetQuery(c);
      const page = await targetTenant(c).organizations().userOrganizations(params.id, { offset: q.page * q.perPage, limit: q.perPage });
      if (!page) throw problem("inexistent_user");
      return c.json(offsetPage("organizations", page.items.map(presentOrganization), q, page.total ?? page.items.length));
    },
  }),
];
