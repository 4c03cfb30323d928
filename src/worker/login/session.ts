import { timingSafeEqualText } from "../../shared/crypto/compare";
import { toBase64Url } from "../../shared/crypto/encoding";
import { sha256 } from "../../shared/crypto/compare";
import { randomId, randomToken } from "../../shared/crypto/random";
import type { SessionRecord } from "../../shared/types";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { tenantObject } from "../tenant/stubs";
import { clearCookie, readCookie, SESSION_COOKIE, setSecureCookie } from "./cookies";

/** Absolute lifetime of a login (SSO) session. */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

export const hashSecret = async (secret: string) => toBase64Url(await sha256(secret));

/** The browser's live session on this tenant, verified against the stored secret hash in constant time. */
export async function currentSession(c: AppContext): Promise<SessionRecord | null> {
  const cookie = readCookie(c, SESSION_COOKIE);
  if (!cookie) return null;
  const [id, secret] = cookie.split(".");
  if (!id || !secret) return null;
  const session = await tenantObject(c.env, c.var.tenant.id).getSession(id);
  if (!session) return null;
  return (await timingSafeEqualText(session.secret_hash, await hashSecret(secret))) ? session : null;
}

/** Starts a session for a user who just authenticated and sets its cookie. */
export async function startSession(c: AppContext, userId: string, clientId: string): Promise<SessionRecord> {
  const id = randomId("ses_");
  const secret = randomToken(32);
  const session = await tenantObject(c.env, c.var.tenant.id).createSession({
    id,
    secret_hash: await hashSecret(secret),
    user_id: userId,
    client_id: clientId,
    expires_at: Date.now() + SESSION_TTL_MS,
  });
  setSecureCookie(c, SESSION_COOKIE, `${id}.${secret}`, { maxAgeS: Math.floor(SESSION_TTL_MS / 1000) });
  return session;
}

/** Ends the browser's session (logout): deletes it server-side and clears the cookie. */
export async function endSession(c: AppContext): Promise<SessionRecord | null> {
  const session = await currentSession(c);
  if (session) {
    const actor = { type: "user" as const, id: session.user_id, client_id: c.req.query("client_id") ?? null };
    await tenantObject(c.env, c.var.tenant.id).deleteSession(session.id, auditContext(c, { actor }));
  }
  clearCookie(c, SESSION_COOKIE);
  return session;
}
