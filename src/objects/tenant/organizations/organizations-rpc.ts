import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage, ListWindow, LoginOrganization, PendingInvitation } from "../../../shared/types";
import type { InvitationRecord, NewInvitation, NewOrganization, OrganizationConnectionRecord, OrganizationConnectionSettings, OrganizationMemberRecord, OrganizationPatch, OrganizationRecord, OrganizationRoleRecord } from "../../../shared/schemas/organizations";
import { LOG_TYPES } from "../core/audit";
import { audited, emitAudit, type WriteTx } from "../core/events";
import {
  createInvitation,
  deleteInvitation,
  getInvitation,
  type InvitationRefusal,
  type InvitationSort,
  listInvitations,
  peekInvitation,
} from "./organization-invitations";
import { type AdmissionInput, type AdmissionOutcome, admitLogin, chooseOrganization, holdForOrganization } from "./organization-login";
import {
  addMembers,
  assignMemberRoles,
  isMember,
  listMemberRoles,
  listRoleMembers,
  listMembers,
  listUserOrganizations,
  removeMemberRoles,
  removeMembers,
  rolesOfMembers,
} from "./organization-members";
import {
  addOrganizationConnection,
  createOrganization,
  deleteOrganization,
  findOrganization,
  getOrganization,
  getOrganizationByName,
  getOrganizationConnection,
  listOrganizationConnections,
  listOrganizations,
  loginOrganization,
  type OrganizationWindow,
  removeOrganizationConnection,
  updateOrganization,
  updateOrganizationConnection,
} from "./organizations";
import { TenantRpc } from "../core/rpc";

/** An invitation as audit events record it: its ticket is a bearer capability, never logged. */
const withoutTicket = ({ ticket_id: _ticket, invitation_url: _url, ...rest }: InvitationRecord) => rest;

/**
 * The organizations facade (`stub.organizations(audit)`): management writes record `sapi` / `fapi` with the
 * caller's audit context in their commit; login steps (admission, invitation acceptance) are one commit each.
 * Organizations are not in the token snapshot (TenantConfig), so writes leave the configuration version alone.
 */
export class Organizations extends TenantRpc {
  list(q: string | undefined, window: OrganizationWindow): ListPage<OrganizationRecord> {
    return this.read((sql) => listOrganizations(sql, q, window));
  }

  get(id: string): OrganizationRecord | null {
    return this.read((sql) => getOrganization(sql, id));
  }

  getByName(name: string): OrganizationRecord | null {
    return this.read((sql) => getOrganizationByName(sql, name));
  }

  create(org: NewOrganization) {
    return this.commit((tx) => audited(tx, this.audit, createOrganization(tx.sql, org, tx.now), { entity: "organization", action: "created", id: org.id, after: (o) => o }));
  }

  update(id: string, patch: OrganizationPatch): Result<OrganizationRecord> {
    return this.commit((tx) => {
      const before = getOrganization(tx.sql, id);
      return audited(tx, this.audit, updateOrganization(tx.sql, id, patch, tx.now), { entity: "organization", action: "updated", id, before, after: (o) => o });
    });
  }

  delete(id: string): Result<true> {
    return this.commit((tx) => {
      const before = getOrganization(tx.sql, id);
      return audited(tx, this.audit, deleteOrganization(tx.sql, id), { entity: "organization", action: "deleted", id, before });
    });
  }

  // Enabled connections

  listConnections(orgId: string, window: { offset: number; limit: number }): Result<ListPage<OrganizationConnectionRecord>> {
    return this.read((sql) => (getOrganization(sql, orgId) ? ok(listOrganizationConnections(sql, orgId, window)) : fail("inexistent_organization")));
  }

  getConnection(orgId: string, connectionId: string): Result<OrganizationConnectionRecord> {
    return this.read((sql) => {
      if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
      const link = getOrganizationConnection(sql, orgId, connectionId);
      return link ? ok(link) : fail("inexistent_organization_connection");
    });
  }

  addConnection(orgId: string, input: { connection_id: string } & Partial<OrganizationConnectionSettings>) {
    return this.commit((tx) => audited(tx, this.audit, addOrganizationConnection(tx.sql, orgId, input, tx.now), { entity: "organization_connection", action: "created", id: orgId, after: (c) => c }));
  }

  updateConnection(orgId: string, connectionId: string, patch: Partial<OrganizationConnectionSettings>) {
    return this.commit((tx) => {
      const before = getOrganizationConnection(tx.sql, orgId, connectionId);
      return audited(tx, this.audit, updateOrganizationConnection(tx.sql, orgId, connectionId, patch), { entity: "organization_connection", action: "updated", id: orgId, before, after: (c) => c });
    });
  }

  removeConnection(orgId: string, connectionId: string): Result<true> {
    return this.commit((tx) => {
      const before = getOrganizationConnection(tx.sql, orgId, connectionId);
      return audited(tx, this.audit, removeOrganizationConnection(tx.sql, orgId, connectionId), { entity: "organization_connection", action: "deleted", id: orgId, before });
    });
  }

  // Members and their roles

  listMembers(orgId: string, window: ListWindow): Result<ListPage<OrganizationMemberRecord>> {
    return this.read((sql) => listMembers(sql, orgId, window));
  }

  addMembers(orgId: string, userIds: string[]): Result<string[]> {
    return this.commit((tx) => audited(tx, this.audit, addMembers(tx.sql, orgId, userIds, tx.now), { entity: "organization_member", action: "created", id: orgId, after: (added) => ({ members: added }) }));
  }

  removeMembers(orgId: string, userIds: string[]): Result<string[]> {
    return this.commit((tx) => audited(tx, this.audit, removeMembers(tx.sql, orgId, userIds), { entity: "organization_member", action: "deleted", id: orgId, before: { members: userIds } }));
  }

  userOrganizations(userId: string, window: { offset: number; limit: number }): ListPage<OrganizationRecord> | null {
    return this.read((sql) => listUserOrganizations(sql, userId, window));
  }

  memberRoles(orgId: string, userId: string, window: { offset: number; limit: number }): Result<ListPage<OrganizationRoleRecord>> {
    return this.read((sql) => listMemberRoles(sql, orgId, userId, window));
  }

  roleMembers(orgId: string, roleId: string, window: { offset: number; limit: number }) {
    return this.read((sql) => listRoleMembers(sql, orgId, roleId, window));
  }

  rolesOfMembers(orgId: string, userIds: string[]): Record<string, OrganizationRoleRecord[]> {
    return this.read((sql) => rolesOfMembers(sql, orgId, userIds));
  }

  assignMemberRoles(orgId: string, userId: string, roleIds: string[]): Result<true> {
    return this.commit((tx) => audited(tx, this.audit, assignMemberRoles(tx.sql, orgId, userId, roleIds, tx.now), { entity: "organization_member_role", action: "created", id: orgId, after: () => ({ user_id: userId, roles: roleIds }) }));
  }

  removeMemberRoles(orgId: string, userId: string, roleIds: string[]): Result<true> {
    return this.commit((tx) => audited(tx, this.audit, removeMemberRoles(tx.sql, orgId, userId, roleIds), { entity: "organization_member_role", action: "deleted", id: orgId, before: { user_id: userId, roles: roleIds } }));
  }

  // Invitations

  createInvitation(invitation: NewInvitation): Result<InvitationRecord> {
    return this.commit((tx) => audited(tx, this.audit, createInvitation(tx.sql, invitation, tx.now), { entity: "organization_invitation", action: "created", id: invitation.id, after: withoutTicket }));
  }

  listInvitations(orgId: string, window: { offset: number; limit: number; sort: InvitationSort }) {
    return this.read((sql) => listInvitations(sql, orgId, window));
  }

  getInvitation(orgId: string, id: string): Result<InvitationRecord> {
    return this.read((sql) => {
      if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
      const invitation = getInvitation(sql, orgId, id);
      return invitation ? ok(invitation) : fail("inexistent_invitation");
    });
  }

  deleteInvitation(orgId: string, id: string): Result<true> {
    return this.commit((tx) => {
      const found = getInvitation(tx.sql, orgId, id);
      const before = found ? withoutTicket(found) : null;
      return audited(tx, this.audit, deleteInvitation(tx.sql, orgId, id), { entity: "organization_invitation", action: "deleted", id, before });
    });
  }

  // Login (src/worker/login/organization.ts)

  /** The organization a login names (id or name) with its enabled connections. */
  forLogin(idOrName: string): LoginOrganization | null {
    return this.read((sql) => loginOrganization(sql, idOrName));
  }

  /** The organization (id or name) when the user is its member: the refresh and token-exchange switch. */
  membership(idOrName: string, userId: string): { id: string; name: string } | null {
    return this.read((sql) => {
      const org = findOrganization(sql, idOrName);
      return org && isMember(sql, org.id, userId) ? { id: org.id, name: org.name } : null;
    });
  }

  /** The membership rule of an organization login (invitation acceptance included), in one commit. */
  admitLogin(input: AdmissionInput): AdmissionOutcome {
    return this.commit((tx) => {
      const outcome = admitLogin(tx.sql, input, tx.now);
      if (outcome.ok && outcome.added) {
        const how = outcome.invitation ? `invitation ${outcome.invitation.id}` : "assign_membership_on_login";
        this.memberAdded(tx, input.organization_id, input.user_id, how);
      }
      return outcome;
    });
  }

  peekInvitation(ticketId: string, organization: string): { ok: true; invitation: PendingInvitation } | { ok: false; reason: InvitationRefusal } {
    return this.read((sql, now) => peekInvitation(sql, ticketId, organization, now));
  }

  /** Records the organization chosen at the organization prompt (false: the login session is gone). */
  chooseForLogin(loginSessionId: string, organization: { id: string; name: string }): boolean {
    return this.commit(({ sql, now }) => chooseOrganization(sql, loginSessionId, organization, now));
  }

  /** Records who authenticated while the organization is still to be chosen (post-login prompt). */
  holdForChoice(loginSessionId: string, userId: string): boolean {
    return this.commit(({ sql, now }) => holdForOrganization(sql, loginSessionId, userId, now));
  }

  private memberAdded(tx: WriteTx, orgId: string, userId: string, how: string): void {
    emitAudit(tx, this.audit, {
      event_type: "organization_member.created",
      log_type: LOG_TYPES.api,
      category: "user_action",
      description: `Organization member added (${how})`,
      target: { type: "organization_member", id: orgId, after: { members: [userId] } },
      user_id: userId,
      client_id: this.audit.actor.client_id ?? null,
    });
  }
}
