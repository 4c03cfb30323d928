import { now as currentTime } from "../../shared/clock";
import { EncryptionKeyError } from "../../shared/crypto/encryption";
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../../shared/crypto/encoding";
import { SEALED_LOGIN_STATE_PREFIX } from "../../shared/login-state";
import type { AuthorizeRequest, FreshLoginSession, LoginSession } from "../../shared/types";
import type { AppContext } from "../context";
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
const MIN_KEY_LENGTH = 32;

/** The deployment key as HKDF input, imported once per isolate and key. */
const masters = new Map<string, Promise<CryptoKey>>();
function master(encryptionKey: string | undefined): Promise<CryptoKey> {
  if (!encryptionKey || encryptionKey.length < MIN_KEY_LENGTH) throw new EncryptionKeyError("ENCRYPTION_KEY is not configured: refusing to seal login sessions");
  let key = masters.get(encryptionKey);
  if (!key) {
    key = crypto.subtle.importKey("raw", utf8(encryptionKey), "HKDF", false, ["deriveKey"]);
    masters.set(encryptionKey, key);
  }
  return key;
}

/**
 * Each state's own AES-256-GCM key, derived with HKDF-SHA256 from the deployment key and the state's random
 * 128-bit salt: no key ever encrypts more than one state, so the volume of /authorize requests never brings
 * a key near the birthday bound of random GCM nonces.
 */
async function stateKey(encryptionKey: string | undefined, salt: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt, info: utf8("gatehouse login-state/v1") }, await master(encryptionKey), { name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]);
}

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
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(tenantId) }, await stateKey(encryptionKey, salt), utf8(JSON.stringify(body)));
  const id = `${PREFIX}${toBase64Url(salt)}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
  return pendingSession(id, body);
}

/** The session a sealed state carries, or null when it is not one, does not open for this tenant or expired. */
export async function openLoginState(encryptionKey: string | undefined, tenantId: string, state: string): Promise<LoginSession | null> {
  if (!isSealedLoginState(state) || state.length > 16_384) return null;
  const parts = state.slice(PREFIX.length).split(".");
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]+$/.test(part))) return null;
  const [salt, iv, body] = parts.map((part) => fromBase64Url(part)) as [Uint8Array, Uint8Array, Uint8Array];
  if (salt.length !== 16 || iv.length !== 12) return null;
  let sealed: Sealed;
  try {
    const opened = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: utf8(tenantId) }, await stateKey(encryptionKey, salt), body);
    sealed = JSON.parse(fromUtf8(new Uint8Array(opened))) as Sealed;
  } catch {
    return null;
  }
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
