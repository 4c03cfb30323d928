import { timingSafeEqualText } from "../../shared/crypto/compare";
import { toBase64Url } from "../../shared/crypto/encoding";
import { sha256 } from "../../shared/crypto/compare";
import { randomId, randomToken } from "../../shared/crypto/random";
import { now } from "../../shared/clock";
import type { NewSession, SessionRecord } from "../../shared/types";
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
  const session = await tenantObject(c.env, c.var.tenant.id).sessions().get(id);
  if (!session) return null;
  return (await timingSafeEqualText(session.secret_hash, await hashSecret(secret))) ? session : null;
}

/** A session ready to be committed by the object, and the cookie value that goes with it. */
export interface PreparedSession {
  input: NewSession;
  cookie: string;
}

/**
 * Prepares a session for a user who just authenticated: the object stores only the secret's hash, the
 * browser gets the secret. `authenticated_at` is fixed here so the code and tokens can carry the same time;
 * `issuer` is the host's issuer, which the session's back-channel logout tokens will carry.
 */
export async function prepareSession(userId: string, clientId: string, issuer?: string): Promise<PreparedSession> {
  const id = randomId("ses_");
  const secret = randomToken(32);
  const authenticatedAt = now();
  return {
    input: {
      id,
      secret_hash: await hashSecret(secret),
      user_id: userId,
      client_id: clientId,
      authenticated_at: authenticatedAt,
      expires_at: authenticatedAt + SESSION_TTL_MS,
      ...(issuer ? { issuer } : {}),
    },
    cookie: `${id}.${secret}`,
  };
}

/** Sets the session cookie once the object committed the session. */
export function setSessionCookie(c: AppContext, session: PreparedSession): void {
  // SameSite=None: the SPA SDK's silent authentication reads the session from a cross-site iframe
  // (response_mode=web_message); CSRF on the login forms is covered by their own Strict cookie.
  setSecureCookie(c, SESSION_COOKIE, session.cookie, { maxAgeS: Math.floor(SESSION_TTL_MS / 1000), sameSite: "None" });
}

/** Ends the browser's session (logout): deletes it server-side and clears the cookie. */
export async function endSession(c: AppContext): Promise<SessionRecord | null> {
  const session = await currentSession(c);
  if (session) {
    const actor = { type: "user" as const, id: session.user_id, client_id: c.req.query("client_id") ?? null };
    await tenantObject(c.env, c.var.tenant.id).sessions(auditContext(c, { actor })).delete(session.id);
  }
  clearCookie(c, SESSION_COOKIE, "/", "None");
  return session;
}
