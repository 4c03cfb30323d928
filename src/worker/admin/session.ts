import type { MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { now } from "../../shared/clock";
import { CONSOLE_PATH, type NewConsoleSession } from "../../shared/console";
import { encryptionContext } from "../../shared/crypto/contexts";
import { sha256 } from "../../shared/crypto/compare";
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../../shared/crypto/encoding";
import { fieldCipher } from "../../shared/crypto/encryption";
import { randomToken } from "../../shared/crypto/random";
import { userObject } from "../tenant/stubs";
import { ApiClient } from "./api";
import type { ConsoleContext, ConsoleEnv } from "./context";

/**
 * The console's session cookie (issue 30, backend-for-frontend): `<user route>.<secret>`, opaque to the
 * browser; the secret's SHA-256 keys the session in the operator's user object, where the operator's token
 * waits encrypted. `__Host-` (Secure, Path=/, no Domain) wherever the console is served over https.
 */
export function sessionCookieName(c: ConsoleContext): string {
  return isHttps(c) ? "__Host-gh_console" : "gh_console";
}

export const isHttps = (c: ConsoleContext) => new URL(c.req.url).protocol === "https:";

/** Cookie attributes: HttpOnly, SameSite=Lax, Secure and Path=/ over https (the `__Host-` rules). */
export function cookieAttributes(c: ConsoleContext, path = "/") {
  const https = isHttps(c);
  return { httpOnly: true, sameSite: "Lax" as const, secure: https, path: https ? "/" : path };
}

const hashOf = async (secret: string) => toBase64Url(await sha256(secret));

/** Opens a session for the operator and sets its cookie. */
export async function startSession(c: ConsoleContext, userId: string, accessToken: string, expiresInS: number, profile: Record<string, string>): Promise<void> {
  const secret = randomToken(32);
  const idHash = await hashOf(secret);
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  const session: NewConsoleSession = {
    id_hash: idHash,
    access_token_enc: await cipher.encrypt(accessToken, encryptionContext.consoleSession(idHash)),
    token_expires_at: now() + expiresInS * 1_000,
    csrf_token: randomToken(32),
    profile,
  };
  await controlPlaneUser(c, userId).consoleSessions().create(session);
  setCookie(c, sessionCookieName(c), `${toBase64Url(utf8(userId))}.${secret}`, cookieAttributes(c));
}

const controlPlaneUser = (c: ConsoleContext, userId: string) => userObject(c.env, c.var.settings.controlPlaneTenantId, userId);

/** The cookie's parts, or null when it is absent or malformed. */
function cookieParts(c: ConsoleContext): { userId: string; secret: string } | null {
  const value = getCookie(c, sessionCookieName(c));
  const dot = value ? value.indexOf(".") : -1;
  if (!value || dot <= 0) return null;
  try {
    const userId = fromUtf8(fromBase64Url(value.slice(0, dot)));
    const secret = value.slice(dot + 1);
    return userId && secret.length >= 32 ? { userId, secret } : null;
  } catch {
    return null;
  }
}

/** Ends the session of this browser (logout), whatever state it was in, and clears its cookie. */
export async function endSession(c: ConsoleContext): Promise<void> {
  const parts = cookieParts(c);
  if (parts) await controlPlaneUser(c, parts.userId).consoleSessions().end(await hashOf(parts.secret));
  deleteCookie(c, sessionCookieName(c), cookieAttributes(c));
}

/** Where to send a browser without a live session: the login, and back to the page it asked for. */
export function loginRedirect(c: ConsoleContext): Response {
  const url = new URL(c.req.url);
  const back = c.req.method === "GET" ? `${url.pathname}${url.search}` : CONSOLE_PATH;
  return c.redirect(`${CONSOLE_PATH}/login?return_to=${encodeURIComponent(back)}`, 302);
}

/**
 * Every console page but the login's own: a live session (idle and absolute timeouts checked in the user
 * object) with a token that has not expired, else the login (SSO makes that a round trip when the
 * operator's login session is still there). Sets `operator` and `api`.
 */
export const requireOperator: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  const parts = cookieParts(c);
  if (!parts) return loginRedirect(c);
  const idHash = await hashOf(parts.secret);
  const session = await controlPlaneUser(c, parts.userId).consoleSessions().touch(idHash);
  if (!session || session.token_expires_at <= now()) return loginRedirect(c);
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  const token = await cipher.decrypt(session.access_token_enc, encryptionContext.consoleSession(idHash));
  c.set("operator", {
    userId: parts.userId,
    name: session.profile.name ?? parts.userId,
    email: session.profile.email ?? "",
    csrf: session.csrf_token,
    authTime: Number(session.profile.auth_time ?? 0),
    idHash,
    recentTenants: (session.profile.recent_tenants ?? "").split(",").filter(Boolean),
  });
  const forwarded: Record<string, string> = {};
  for (const name of ["cf-connecting-ip", "user-agent"]) {
    const value = c.req.header(name);
    if (value) forwarded[name] = value;
  }
  const transport = { issuer: c.var.settings.issuer, send: async (request: Request) => c.var.dispatch(request, c), forwarded };
  c.set("api", new ApiClient(transport, token));
  await next();
};

/**
 * After a tenant's page answered 200, that tenant goes first in the session's recent tenants (one write, only
 * when it is not first already), so the tenant switcher offers it.
 */
export const rememberTenant: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  await next();
  const tenant = c.req.param("tenant");
  const operator = c.var.operator;
  if (c.req.method !== "GET" || c.res.status !== 200 || !tenant || !operator || operator.recentTenants[0] === tenant) return;
  await controlPlaneUser(c, operator.userId).consoleSessions().rememberTenant(operator.idHash, tenant);
};
