import { now as currentTime } from "../../shared/clock";
import { SEALED_LOGIN_STATE_PREFIX } from "../../shared/login-state";
import type { AuthorizeRequest, FreshLoginSession, LoginSession } from "../../shared/types";
import type { AppContext } from "../context";
import { type SealPurpose, seal, unseal } from "./sealed";
import { tenantObject } from "./stubs";

/**
 * Sealed login sessions (issue 31: no tenant-object write at /authorize). `/authorize` no longer stores the
 * login session it starts: the session's whole content (the authorization request, its CSRF token, its
 * expiry) is sealed into the `state` it hands to the /u2 pages, with AES-256-GCM under a key of its own
 * derived from the deployment's `ENCRYPTION_KEY`, and the tenant's id as additional data: a state is
 * unreadable, cannot be altered and does not open in another tenant. Rotating `ENCRYPTION_KEY` ends the
 * logins in flight (at most the login session's lifetime), as it does the stored credentials' readability.
 *
 * The tenant object stays the authority on what happened to a session: the first step that changes it (the
 * login's completion, the move to MFA, the organization prompt) stores it in the same transaction
 * (`ensureLoginSession` in the object), keyed by this same sealed id, and from then on every read finds the
 * row. A sealed id with no row is a session nothing has changed yet: exactly the row `/authorize` used to
 * write. Completion stays single-use: the row, once stored, is completed by one conditional update.
 */

const PREFIX = SEALED_LOGIN_STATE_PREFIX;
/** Sealing (sealed.ts) for login sessions: the `info` every state's key has been derived with since v1. */
const LOGIN_STATE: SealPurpose = { prefix: PREFIX, info: "gatehouse login-state/v1", name: "login sessions" };

/**
 * The longest sealed state /authorize hands out (characters): a typical request seals into 500-800; a larger one
 * (a console's long scope list, a large client state) is stored at once instead, so no /u2 URL grows past what
 * proxies and logs commonly keep (2 KB).
 */
export const MAX_SEALED_STATE_LENGTH = 1_800;

/** Whether a `state` is a sealed login session (the ids of stored sessions start with `ls_`). */
export const isSealedLoginState = (state: string): boolean => state.startsWith(PREFIX);

interface Sealed {
  r: AuthorizeRequest;
  c: string;
  e: number;
  t: number;
}

/** Starts a login session without storing it: its id is its sealed content (`lss1.<salt>.<iv>.<ciphertext>`). */
export async function sealLoginSession(
  encryptionKey: string | undefined,
  tenantId: string,
  input: { request: AuthorizeRequest; csrf_token: string; expires_at: number },
): Promise<LoginSession> {
  const created = currentTime();
  const body: Sealed = { r: input.request, c: input.csrf_token, e: input.expires_at, t: created };
  const id = await seal(encryptionKey, LOGIN_STATE, tenantId, body);
  return pendingSession(id, body);
}

/** The session a sealed state carries, or null when it is not one, does not open for this tenant or expired. */
export async function openLoginState(encryptionKey: string | undefined, tenantId: string, state: string): Promise<LoginSession | null> {
  const sealed = await unseal<Sealed>(encryptionKey, LOGIN_STATE, tenantId, state);
  if (!sealed || typeof sealed.e !== "number" || !(sealed.e > currentTime()) || typeof sealed.c !== "string" || !sealed.r?.client_id) return null;
  return pendingSession(state, sealed);
}

function pendingSession(id: string, sealed: Sealed): LoginSession {
  return {
    id,
    client_id: sealed.r.client_id,
    request: sealed.r,
    csrf_token: sealed.c,
    state: "pending",
    user_id: null,
    created_at: new Date(sealed.t).toISOString(),
    expires_at: new Date(sealed.e).toISOString(),
  };
}

/**
 * What the tenant object stores when a step changes a session that was never stored: the session's
 * content, only for a sealed one (a stored session, `ls_…`, needs nothing).
 */
export function freshLoginSession(session: Pick<LoginSession, "id" | "request" | "csrf_token" | "expires_at">): FreshLoginSession | undefined {
  if (!isSealedLoginState(session.id)) return undefined;
  return { id: session.id, request: session.request, csrf_token: session.csrf_token, expires_at: Date.parse(session.expires_at) };
}

/**
 * A login session by the id a page or a later step carries: the tenant object's row when there is one (the
 * authority: a completed or waiting session), otherwise, for a sealed id, the pending session it carries.
 */
export async function resolveLoginSession(
  encryptionKey: string | undefined,
  tenantId: string,
  id: string,
  stored: LoginSession | null,
): Promise<LoginSession | null> {
  if (stored) return stored;
  return isSealedLoginState(id) ? openLoginState(encryptionKey, tenantId, id) : null;
}

/** Stores a sealed login session before a step changes it through another capability (the organization prompt). */
export async function storeLoginSession(c: AppContext, session: Pick<LoginSession, "id" | "request" | "csrf_token" | "expires_at">): Promise<void> {
  const fresh = freshLoginSession(session);
  if (fresh) await tenantObject(c.env, c.var.tenant.id).logins().store(fresh);
}

/** {@link resolveLoginSession} after the tenant object's read of the id (`logins().get`). */
export async function readLoginSession(c: AppContext, id: string): Promise<LoginSession | null> {
  const stored = await tenantObject(c.env, c.var.tenant.id).logins().get(id);
  return resolveLoginSession(c.env.ENCRYPTION_KEY, c.var.tenant.id, id, stored);
}
