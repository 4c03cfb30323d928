import { timingSafeEqualText } from "../../shared/crypto/compare";
import { toBase64Url } from "../../shared/crypto/encoding";
import { sha256 } from "../../shared/crypto/compare";
import { randomId, randomToken } from "../../shared/crypto/random";
import { now } from "../../shared/clock";
import type { NewSession, SessionRecord } from "../../shared/types";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { clearCookie, readCookie, SESSION_COOKIE, setSecureCookie } from "./cookies";

/** Absolute lifetime of a login (SSO) session when the tenant sets none (`session_lifetime` 168 hours). */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
/** Idle lifetime when the tenant sets none (`idle_session_lifetime` 72 hours). */
export const SESSION_IDLE_MS = 72 * 3600 * 1000;

/**
 * The tenant's session lifetimes (tenant settings `session_lifetime` and `idle_session_lifetime`, in hours,
 * the reference platform's unit): how long an SSO session lasts at most, and without being used.
 */
export async function sessionLifetimes(c: AppContext): Promise<{ absoluteMs: number; idleMs: number }> {
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  const settings = config.settings as { session_lifetime?: number; idle_session_lifetime?: number };
  const hours = (value: number | undefined, fallback: number) =>
    typeof value === "number" && value > 0 ? Math.round(value * 3_600_000) : fallback;
  return { absoluteMs: hours(settings.session_lifetime, SESSION_TTL_MS), idleMs: hours(settings.idle_session_lifetime, SESSION_IDLE_MS) };
}

export const hashSecret = async (secret: string) => toBase64Url(await sha256(secret));

/** The browser's live session on this tenant, verified against the stored secret hash in constant time. */
export async function currentSession(c: AppContext): Promise<SessionRecord | null> {
  return (await verifiedSession(c, async (stub, id) => ({ session: await stub.sessions().get(id), user: null }))).session;
}

/** {@link currentSession} and its user, read in one round trip (issue 31: an SSO authorize's first read). */
export async function currentSessionWithUser(c: AppContext): Promise<{ session: SessionRecord; user: UserRecord | null } | null> {
  const found = await verifiedSession(c, (stub, id) => stub.sessionWithUser(id));
  return found.session ? { session: found.session, user: found.user } : null;
}

async function verifiedSession(
  c: AppContext,
  read: (stub: ReturnType<typeof tenantObject>, id: string) => Promise<{ session: SessionRecord | null; user: UserRecord | null }>,
): Promise<{ session: SessionRecord | null; user: UserRecord | null }> {
  const none = { session: null, user: null };
  const cookie = readCookie(c, SESSION_COOKIE);
  if (!cookie) return none;
  const [id, secret] = cookie.split(".");
  if (!id || !secret) return none;
  const found = await read(tenantObject(c.env, c.var.tenant.id), id);
  const session = found.session;
  if (!session) return none;
  // Unused for longer than the tenant's idle lifetime: the session no longer signs anyone in.
  const { idleMs } = await sessionLifetimes(c);
  if (now() - Date.parse(session.last_interaction_at) > idleMs) return none;
  return (await timingSafeEqualText(session.secret_hash, await hashSecret(secret))) ? found : none;
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
export async function prepareSession(userId: string, clientId: string, issuer?: string, lifetimeMs = SESSION_TTL_MS): Promise<PreparedSession> {
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
      expires_at: authenticatedAt + lifetimeMs,
      ...(issuer ? { issuer } : {}),
    },
    cookie: `${id}.${secret}`,
  };
}

/** Sets the session cookie once the object committed the session. */
export function setSessionCookie(c: AppContext, session: PreparedSession): void {
  // SameSite=None: the SPA SDK's silent authentication reads the session from a cross-site iframe
  // (response_mode=web_message); CSRF on the login forms is covered by their own Strict cookie.
  const lifetimeMs = session.input.expires_at - (session.input.authenticated_at ?? now());
  setSecureCookie(c, SESSION_COOKIE, session.cookie, { maxAgeS: Math.max(1, Math.floor(lifetimeMs / 1000)), sameSite: "None" });
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
