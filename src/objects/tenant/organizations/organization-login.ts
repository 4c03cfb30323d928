import type { AuthorizeRequest } from "../../../shared/types";
import type { InvitationRecord } from "../../../shared/schemas/organizations";
import type { Sql } from "../../sql";
import { acceptInvitation, type InvitationRefusal } from "./organization-invitations";
import { isMember } from "./organization-members";
import { getOrganization } from "./organizations";

/**
 * The organization steps of an interactive login (issue 11 point 5), each inside the caller's commit. They
 * touch the login_sessions table only to record the organization chosen at the organization prompt and the
 * user waiting to choose one (post-login prompt), always on a pending, unexpired login session.
 */

/** Why a login may not complete in an organization. */
export type AdmissionRefusal = "organization_gone" | "connection_not_enabled" | "not_member" | InvitationRefusal;

export interface AdmissionInput {
  organization_id: string;
  user_id: string;
  /** The user's email, compared with an invitation's invitee. */
  email: string | null;
  /** The connection (by name) the user logged in with. */
  connection: string;
  /** An invitation being accepted (its ticket). */
  ticket?: string;
}

export type AdmissionOutcome =
  | { ok: true; added: boolean; invitation: InvitationRecord | null }
  | { ok: false; reason: AdmissionRefusal };

/**
 * The membership rule of an organization login: the connection must be enabled for the organization; an
 * invitation, when given, is consumed for its invitee and makes the user a member (with its roles);
 * otherwise the user must be a member, or becomes one when the connection has assign_membership_on_login.
 */
export function admitLogin(sql: Sql, input: AdmissionInput, now: number): AdmissionOutcome {
  if (!getOrganization(sql, input.organization_id)) return { ok: false, reason: "organization_gone" };
  const link = sql.first<{ assign: number }>`SELECT oc.assign_membership_on_login AS assign FROM organization_connections oc
    JOIN connections c ON c.id = oc.connection_id WHERE oc.organization_id = ${input.organization_id} AND c.name = ${input.connection}`;
  if (!link) return { ok: false, reason: "connection_not_enabled" };
  if (input.ticket !== undefined) {
    const accepted = acceptInvitation(sql, { ticket_id: input.ticket, organization_id: input.organization_id, user_id: input.user_id, email: input.email }, now);
    return accepted.ok ? { ok: true, added: accepted.added, invitation: accepted.invitation } : accepted;
  }
  if (isMember(sql, input.organization_id, input.user_id)) return { ok: true, added: false, invitation: null };
  if (link.assign !== 1) return { ok: false, reason: "not_member" };
  sql.run`INSERT INTO organization_members (organization_id, user_id, created_at)
    VALUES (${input.organization_id}, ${input.user_id}, ${now})`;
  return { ok: true, added: true, invitation: null };
}

/**
 * The request of a login session that may still choose its organization, and who it holds: a pending one,
 * or one waiting in `awaiting_mfa` whose second factor was already verified (under an MFA policy the
 * post-login prompt comes after MFA, issue 12; its MFA transaction then completes the login). Null otherwise.
 */
function choosable(sql: Sql, loginSessionId: string, now: number): { request: AuthorizeRequest; state: string; user_id: string | null } | null {
  const row = sql.first<{ request: string; state: string; user_id: string | null }>`SELECT request, state, user_id FROM login_sessions ls
    WHERE id = ${loginSessionId} AND expires_at > ${now} AND (state = 'pending' OR (state = 'awaiting_mfa' AND EXISTS (
      SELECT 1 FROM mfa_transactions m WHERE m.login_session_id = ls.id AND m.kind = 'login' AND m.user_id = ls.user_id
        AND m.completed_at IS NULL AND m.expires_at > ${now} AND json_extract(m.pending, '$.satisfied') = 1)))`;
  return row ? { request: JSON.parse(row.request) as AuthorizeRequest, state: row.state, user_id: row.user_id } : null;
}

/** Records the organization chosen at the organization prompt on a login session that may still choose. */
export function chooseOrganization(sql: Sql, loginSessionId: string, org: { id: string; name: string }, now: number): boolean {
  const found = choosable(sql, loginSessionId, now);
  if (!found) return false;
  const next: AuthorizeRequest = { ...found.request, organization: org.id, organization_name: org.name };
  return sql.run`UPDATE login_sessions SET request = ${next} WHERE id = ${loginSessionId} AND state = ${found.state}` > 0;
}

/**
 * Records who authenticated on a login session that must still choose its organization (the post-login
 * prompt); the login completes only when the choice is made. A session past MFA already names its user.
 */
export function holdForOrganization(sql: Sql, loginSessionId: string, userId: string, now: number): boolean {
  const found = choosable(sql, loginSessionId, now);
  if (!found) return false;
  if (found.state === "awaiting_mfa") return found.user_id === userId;
  return sql.run`UPDATE login_sessions SET user_id = ${userId} WHERE id = ${loginSessionId} AND state = 'pending'` > 0;
}
