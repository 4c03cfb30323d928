import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { parseListQuery } from "../../../shared/pagination/list-query";
import { organizationMemberRolesBody, organizationMembersBody } from "../../../shared/schemas/organizations";
import type { OrganizationMemberRecord, OrganizationRoleRecord } from "../../../shared/schemas/organizations";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { LIST_QUERY, projection } from "../list-response";
import { presentOrganization } from "./organization-present";
import { each, relationListRoute, relationWriteRoutes } from "../relation-routes";
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

/**
 * The presenter of a members page: with `fields=roles` (and the scope it needs, checked before anything is
 * read) each member carries its roles in the organization; the projection applies last.
 */
function presentMembers(c: AppContext, orgId: string) {
  const project = projection(c);
  const fields = (c.req.query("fields") ?? "").split(",").map((f) => f.trim());
  const withRoles = fields.includes("roles") && c.req.query("include_fields") !== "false";
  if (withRoles && !c.var.auth.scopes.has(MEMBER_ROLES_SCOPE)) throw problem("insufficient_scope", { scope: MEMBER_ROLES_SCOPE });
  return async (members: OrganizationMemberRecord[]) => {
    const roles = withRoles ? await targetTenant(c).organizations().rolesOfMembers(orgId, members.map((m) => m.user_id)) : null;
    return members.map((m) => project(presentMember(m, roles ? (roles[m.user_id] ?? []) : undefined)));
  };
}

export const memberRoutes = [
  relationListRoute({
    path: "/organizations/{id}/members",
    scope: "read:organization_members",
    summary: "List members: offset (page, per_page, include_totals) or checkpoint (from, take: {members, next})",
    query: MEMBER_QUERY,
    field: "members",
    checkpoint: {
      parse: (c) => parseListQuery(c.req.query(), { checkpoint: true }),
      after(cursor) {
        const createdAt = Number(cursor.key);
        if (!Number.isSafeInteger(createdAt)) throw problem("invalid_cursor");
        return { createdAt, id: cursor.id };
      },
      position: (m: OrganizationMemberRecord) => ({ key: Date.parse(m.created_at), id: m.user_id }),
    },
    present: (c, params) => presentMembers(c, params.id),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).organizations().listMembers(params.id, window)),
  }),
  ...relationWriteRoutes({
    path: "/organizations/{id}/members",
    body: organizationMembersBody,
    assign: {
      scope: "create:organization_members",
      summary: "Add users to the organization (existing members are kept)",
      status: 204,
      write: (c, params, body) => orgs(c).addMembers(params.id, body.members),
    },
    remove: {
      scope: "delete:organization_members",
      summary: "Remove users from the organization, with their roles in it",
      status: 204,
      write: (c, params, body) => orgs(c).removeMembers(params.id, body.members),
    },
  }),
  relationListRoute({
    path: "/organizations/{id}/members/{user_id}/roles",
    scope: "read:organization_member_roles",
    summary: "A member's roles in the organization (page, per_page, include_totals: {roles, start, limit, total})",
    field: "roles",
    present: each(presentRole),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).organizations().memberRoles(params.id, params.user_id, window)),
  }),
  ...relationWriteRoutes({
    path: "/organizations/{id}/members/{user_id}/roles",
    body: organizationMemberRolesBody,
    assign: {
      scope: "create:organization_member_roles",
      summary: "Give a member roles in the organization",
      status: 204,
      write: (c, params, body) => orgs(c).assignMemberRoles(params.id, params.user_id, body.roles),
    },
    remove: {
      scope: "delete:organization_member_roles",
      summary: "Take roles from a member in the organization",
      status: 204,
      write: (c, params, body) => orgs(c).removeMemberRoles(params.id, params.user_id, body.roles),
    },
  }),
  relationListRoute({
    path: "/users/{id}/organizations",
    scope: "read:users",
    summary: "The organizations a user belongs to (page, per_page, include_totals: {organizations, start, limit, total})",
    field: "organizations",
    present: each(presentOrganization),
    async fetch(c, params, window) {
      const page = await targetTenant(c).organizations().userOrganizations(params.id, window);
      if (!page) throw problem("inexistent_user");
      return page;
    },
  }),
];
