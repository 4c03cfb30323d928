import { fail, ok, type Result } from "../../../shared/errors";
import { normalizeEmail } from "../../../shared/schemas/users";
import type { Json, PendingInvitation } from "../../../shared/types";
import type { InvitationRecord, NewInvitation } from "../../../shared/schemas/organizations";
import { iso, json, type Sql } from "../../sql";
import { grantMemberRoles, isMember, missingRoles } from "./organization-members";
import { findOrganization, getOrganization } from "./organizations";

/**
 * Organization invitations (SPEC §2.7). An invitation is a single-use ticket: accepting it deletes the row
 * in the same transaction that adds the membership and its roles, so it is consumed exactly once.
 */

type Row = Record<string, unknown>;
const time = (v: unknown) => iso(v as number) as string;

export function toInvitation(r: Row): InvitationRecord {
  const appMetadata = json<Record<string, Json> | null>(r.app_metadata as string | null, null);
  const userMetadata = json<Record<string, Json> | null>(r.user_metadata as string | null, null);
  return {
    id: String(r.id),
    organization_id: String(r.organization_id),
    inviter: { name: String(r.inviter_name) },
    invitee: { email: String(r.invitee_email) },
    invitation_url: String(r.invitation_url),
    ticket_id: String(r.ticket_id),
    client_id: String(r.client_id),
    ...(r.connection_id ? { connection_id: String(r.connection_id) } : {}),
    ...(appMetadata ? { app_metadata: appMetadata } : {}),
    ...(userMetadata ? { user_metadata: userMetadata } : {}),
    roles: json(r.roles as string, []),
    created_at: time(r.created_at),
    expires_at: time(r.expires_at),
  };
}

export function getInvitation(sql: Sql, orgId: string, id: string): InvitationRecord | null {
  const row = sql.first<Row>`SELECT * FROM organization_invitations WHERE organization_id = ${orgId} AND id = ${id}`;
  return row ? toInvitation(row) : null;
}

/** Stores an invitation; its organization, client, connection and roles must exist. */
export function createInvitation(sql: Sql, inv: NewInvitation, now: number): Result<InvitationRecord> {
  if (!getOrganization(sql, inv.organization_id)) return fail("inexistent_organization");
  if (!sql.first`SELECT 1 FROM clients WHERE client_id = ${inv.client_id}`) return fail("inexistent_client");
  if (inv.connection_id && !sql.first`SELECT 1 FROM connections WHERE id = ${inv.connection_id}`) return fail("inexistent_connection");
  if (missingRoles(sql, inv.roles).length) return fail("inexistent_role");
  sql.run`INSERT INTO organization_invitations (id, organization_id, ticket_id, inviter_name, invitee_email, client_id,
      connection_id, app_metadata, user_metadata, roles, invitation_url, created_at, expires_at)
    VALUES (${inv.id}, ${inv.organization_id}, ${inv.ticket_id}, ${inv.inviter_name}, ${normalizeEmail(inv.invitee_email)},
      ${inv.client_id}, ${inv.connection_id}, ${inv.app_metadata}, ${inv.user_metadata}, ${inv.roles}, ${inv.invitation_url},
      ${now}, ${now + inv.ttl_ms})`;
  return ok(getInvitation(sql, inv.organization_id, inv.id) as InvitationRecord);
}

/** Sort columns of GET /organizations/{id}/invitations (`field:1|-1`, default `created_at:-1`). */
export const INVITATION_SORT_COLUMNS = ["created_at", "expires_at"] as const;
export type InvitationSort = { column: (typeof INVITATION_SORT_COLUMNS)[number]; descending: boolean };

export function listInvitations(
  sql: Sql,
  orgId: string,
  window: { offset: number; limit: number; sort: InvitationSort },
): Result<{ items: InvitationRecord[]; total: number }> {
  if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
  // The column comes from the closed list above, never from input.
  const column = INVITATION_SORT_COLUMNS.includes(window.sort.column) ? window.sort.column : "created_at";
  const direction = window.sort.descending ? "DESC" : "ASC";
  const rows = sql.exec<Row>(
    `SELECT * FROM organization_invitations WHERE organization_id = ? ORDER BY ${column} ${direction}, id ${direction} LIMIT ? OFFSET ?`,
    orgId,
    window.limit,
    window.offset,
  );
  const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM organization_invitations WHERE organization_id = ${orgId}`?.n ?? 0;
  return ok({ items: rows.map(toInvitation), total });
}

export function deleteInvitation(sql: Sql, orgId: string, id: string): Result<true> {
  if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
  const deleted = sql.run`DELETE FROM organization_invitations WHERE organization_id = ${orgId} AND id = ${id}`;
  return deleted ? ok(true) : fail("inexistent_invitation");
}

/** Why an invitation cannot be used. */
export type InvitationRefusal = "unknown" | "expired" | "email_mismatch";

/**
 * The invitation a ticket names, for /authorize: it must exist, belong to the organization given (id or
 * name) and not have expired.
 */
export function peekInvitation(
  sql: Sql,
  ticketId: string,
  organization: string,
  now: number,
): { ok: true; invitation: PendingInvitation } | { ok: false; reason: InvitationRefusal } {
  const row = sql.first<Row>`SELECT * FROM organization_invitations WHERE ticket_id = ${ticketId}`;
  const org = findOrganization(sql, organization);
  if (!row || !org || row.organization_id !== org.id) return { ok: false, reason: "unknown" };
  if (Number(row.expires_at) <= now) return { ok: false, reason: "expired" };
  return {
    ok: true,
    invitation: {
      ticket_id: String(row.ticket_id),
      organization_id: org.id,
      client_id: String(row.client_id),
      invitee_email: String(row.invitee_email),
      inviter_name: String(row.inviter_name),
      connection_id: (row.connection_id as string | null) ?? null,
      expires_at: time(row.expires_at),
      has_account: Boolean(sql.first`SELECT 1 FROM users WHERE email = ${String(row.invitee_email)}`),
    },
  };
}

/**
 * Accepts an invitation for a user who just logged in or signed up: the user's email must be the
 * invitee's; the invitation is deleted (consumed) and the membership with the invitation's roles added, in
 * the caller's transaction. A second acceptance finds nothing ("unknown").
 */
export function acceptInvitation(
  sql: Sql,
  input: { ticket_id: string; organization_id: string; user_id: string; email: string | null },
  now: number,
): { ok: true; invitation: InvitationRecord; added: boolean } | { ok: false; reason: InvitationRefusal } {
  const row = sql.first<Row>`SELECT * FROM organization_invitations WHERE ticket_id = ${input.ticket_id}
    AND organization_id = ${input.organization_id}`;
  if (!row) return { ok: false, reason: "unknown" };
  if (Number(row.expires_at) <= now) return { ok: false, reason: "expired" };
  if (!input.email || normalizeEmail(input.email) !== row.invitee_email) return { ok: false, reason: "email_mismatch" };
  if (!sql.run`DELETE FROM organization_invitations WHERE id = ${String(row.id)}`) return { ok: false, reason: "unknown" };
  const invitation = toInvitation(row);
  const added = !isMember(sql, input.organization_id, input.user_id);
  if (added) {
    sql.run`INSERT INTO organization_members (organization_id, user_id, created_at) VALUES (${input.organization_id}, ${input.user_id}, ${now})`;
  }
  // Roles deleted since the invitation was made are skipped rather than failing the acceptance.
  const missing = new Set(missingRoles(sql, invitation.roles));
  grantMemberRoles(sql, input.organization_id, input.user_id, invitation.roles.filter((r) => !missing.has(r)), now);
  return { ok: true, invitation, added };
}
