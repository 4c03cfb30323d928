import { now as currentTime } from "../../shared/clock";
import type { LoginSession } from "../../shared/types";

/**
 * Pending login sessions this isolate started or read recently (issue 29 point 1), so that showing the login
 * form (`GET /u2/login`) right after `/authorize` does not cost a tenant-object round trip: the page needs
 * the session's client, request and CSRF token, which never change once the session is written, and its
 * state, which only moves forward (pending → awaiting_mfa/completed).
 *
 * Only the form's first display reads here. Every form post, every other page and every completion reads
 * the tenant object (the authority) and drops the entry, so a stale "pending" can at most show a form whose
 * post is then refused with the expired-login page, exactly as a form left open in another tab is; the
 * state binding and the double-submit CSRF check are unchanged (the token is the session's own). Entries
 * live {@link LOGIN_SESSION_CACHE_TTL_MS} at most and never past the session's own expiry; the map is
 * bounded ({@link LOGIN_SESSION_CACHE_MAX}, oldest first out) and keyed by tenant and session id.
 */
const recent = new Map<string, { session: LoginSession; until: number }>();

/** How long a remembered session may be shown without asking the tenant object. @default 30 s */
export const LOGIN_SESSION_CACHE_TTL_MS = 30_000;
/** Remembered sessions per isolate. @default 4096 */
export const LOGIN_SESSION_CACHE_MAX = 4096;

const keyOf = (tenantId: string, id: string) => `${tenantId}\n${id}`;

/** Remembers a pending session just written or read from the tenant object; other states are forgotten. */
export function rememberLoginSession(tenantId: string, session: LoginSession): void {
  const key = keyOf(tenantId, session.id);
  recent.delete(key);
  if (session.state !== "pending") return;
  const until = Math.min(currentTime() + LOGIN_SESSION_CACHE_TTL_MS, Date.parse(session.expires_at));
  if (!(until > currentTime())) return;
  if (recent.size >= LOGIN_SESSION_CACHE_MAX) {
    const oldest = recent.keys().next().value;
    if (oldest !== undefined) recent.delete(oldest);
  }
  recent.set(key, { session, until });
}

/** A remembered pending session that has not passed its window nor its expiry, or undefined. */
export function recentLoginSession(tenantId: string, id: string): LoginSession | undefined {
  const key = keyOf(tenantId, id);
  const hit = recent.get(key);
  if (!hit) return undefined;
  if (hit.until > currentTime()) return hit.session;
  recent.delete(key);
  return undefined;
}

/** Forgets a session: its flow moved on (a form was posted, a login completed). */
export function forgetLoginSession(tenantId: string, id: string): void {
  recent.delete(keyOf(tenantId, id));
}
