import { auditContext } from "../../http/audit";
import type { SessionView } from "../../../objects/tenant/login/session-admin";
import { problem, unwrap } from "../../../shared/errors";
import { revokeAccessBody, updateSessionBody } from "../../../shared/schemas/sessions";
import type { AppContext } from "../../context";
import { sessionLifetimes } from "../../login/session";
import { userObject } from "../../tenant/stubs";
import { defineRoute } from "../define";
import { LIST_QUERY, listResponse } from "../list-response";
import { requireUser, targetTenant } from "../tenant-scoped";

/** The reference platform's session shape (never the cookie secret's hash). */
function present(s: SessionView) {
  return {
    id: s.id,
    user_id: s.user_id,
    created_at: s.created_at,
    updated_at: s.updated_at,
    authenticated_at: s.authenticated_at,
    last_interacted_at: s.last_interaction_at,
    expires_at: s.expires_at,
    idle_expires_at: s.idle_expires_at,
    clients: s.client_ids.map((client_id) => ({ client_id })),
    authentication: { methods: methodsOf(s) },
    device: s.device,
    // Absent only on a tenant pinned at a schema before 0017, which keeps no metadata.
    ...(s.session_metadata ? { session_metadata: s.session_metadata } : {}),
  };
}

/** The reference platform's first-factor method names for the amr values our logins record (RFC 8176). */
const FIRST_FACTORS: Record<string, string> = { pwd: "pwd", otp: "email", email: "email", sms: "sms", fed: "federated", hwk: "passkey", swk: "passkey" };

/**
 * The methods the session's login completed: its first factor (a password when the login recorded none, as
 * password logins outside an MFA policy do), then `mfa` when a second factor was passed.
 */
function methodsOf(s: SessionView) {
  const first = s.amr.map((value) => FIRST_FACTORS[value]).find(Boolean) ?? "pwd";
  return [{ name: first, timestamp: s.authenticated_at }, ...(s.amr.includes("mfa") ? [{ name: "mfa", timestamp: s.authenticated_at }] : [])];
}

/**
 * Revokes a session and every refresh token issued under it (SPEC §3.3: revocation couples, natural expiry
 * does not). The tenant commits the session's end together with its cascade in the outbox (refresh
 * revocation, back-channel logout), which completes even if a call fails; the call to the user's object
 * here is the best-effort first attempt, so the tokens are normally dead before the response. Its failure
 * is not the caller's: the outbox retries it.
 */
async function revoke(c: AppContext, id: string): Promise<void> {
  const revoked = unwrap(await targetTenant(c).sessions(auditContext(c)).revoke(id));
  await revokeTokensNow(c, revoked.user_id, [id]);
}

/** The cascade's best-effort first attempt in the user's object (the outbox has it committed already). */
async function revokeTokensNow(c: AppContext, userId: string, sessionIds: string[]): Promise<void> {
  try {
    await userObject(c.env, c.var.tenant.id, userId).revokeRefreshTokens(sessionIds);
  } catch (error) {
    console.warn(`sessions ${sessionIds.join(",")}: immediate refresh-token revocation failed, the outbox retries it`, error);
  }
}

export const sessionRoutes = [
  defineRoute({
    method: "get",
    path: "/sessions",
    scope: "read:sessions",
    summary: "The tenant's live sessions, newest first (offset paging; from/take are ignored, SPEC §4.3)",
    query: LIST_QUERY,
    status: 200,
    async handler(c) {
      const { idleMs } = await sessionLifetimes(c);
      // SPEC §4.3: /sessions is not a checkpoint endpoint, so from/take are ignored and no `next` is returned.
      return listResponse(c, "sessions", (window) => targetTenant(c).sessions().list(window, null, idleMs), (s) => s.id, present, { checkpoint: false });
    },
  }),
  defineRoute({
    method: "get",
    path: "/sessions/{id}",
    scope: "read:sessions",
    summary: "One live session",
    status: 200,
    async handler(c, { params }) {
      const { idleMs } = await sessionLifetimes(c);
      const session = await targetTenant(c).sessions().view(params.id ?? "", idleMs);
      if (!session) throw problem("inexistent_session");
      return c.json(present(session));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/sessions/{id}",
    scope: "update:sessions",
    summary: "Replace a live session's metadata (session_metadata: null or {} clears it); answers the session",
    body: updateSessionBody,
    status: 200,
    async handler(c, { params, body }) {
      const { idleMs } = await sessionLifetimes(c);
      const session = unwrap(await targetTenant(c).sessions(auditContext(c)).update(params.id ?? "", body.session_metadata ?? {}, idleMs));
      return c.json(present(session));
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}/sessions",
    scope: "read:sessions",
    summary: "A user's live sessions, newest first (checkpoint {sessions, next} or offset)",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const userId = params.id ?? "";
      await requireUser(c, userId);
      const { idleMs } = await sessionLifetimes(c);
      return listResponse(c, "sessions", (window) => targetTenant(c).sessions().list(window, userId, idleMs), (s) => s.id, present);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}/sessions",
    scope: "delete:sessions",
    summary: "Revoke every session of a user and the refresh tokens issued under them (202, accepted)",
    status: 202,
    async handler(c, { params }) {
      const userId = params.id ?? "";
      const { session_ids } = unwrap(await targetTenant(c).sessions(auditContext(c)).revokeAllOf(userId));
      if (session_ids.length) await revokeTokensNow(c, userId, session_ids);
      return c.body(null, 202);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/sessions/{id}",
    scope: "delete:sessions",
    summary: "Revoke a session and every refresh token issued under it",
    status: 204,
    async handler(c, { params }) {
      await revoke(c, params.id ?? "");
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "post",
    path: "/sessions/{id}/revoke",
    scope: "delete:sessions",
    summary: "Revoke a session and every refresh token issued under it (202)",
    status: 202,
    async handler(c, { params }) {
      await revoke(c, params.id ?? "");
      return c.body(null, 202);
    },
  }),
  defineRoute({
    method: "post",
    path: "/users/{id}/revoke-access",
    scope: "delete:sessions",
    summary: "Revoke a user's access: one session ({session_id}) or every session, with the refresh tokens issued under them (202)",
    body: revokeAccessBody,
    status: 202,
    async handler(c, { params, body }) {
      const userId = params.id ?? "";
      await requireUser(c, userId);
      if (body.session_id !== undefined) {
        const session = await targetTenant(c).sessions().view(body.session_id, (await sessionLifetimes(c)).idleMs);
        if (!session || session.user_id !== userId) throw problem("inexistent_session");
        await revoke(c, body.session_id);
        return c.body(null, 202);
      }
      const { session_ids } = unwrap(await targetTenant(c).sessions(auditContext(c)).revokeAllOf(userId));
      if (session_ids.length) await revokeTokensNow(c, userId, session_ids);
      // Refresh tokens not bound to a session (an API login, a device) end too: "revoke access" leaves none.
      await userObject(c.env, c.var.tenant.id, userId).refreshTokens().revokeAll();
      return c.body(null, 202);
    },
  }),
];
