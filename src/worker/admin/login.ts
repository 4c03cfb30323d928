import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { decodeJwt } from "jose";
import { CONSOLE_CLIENT_ID, CONSOLE_PATH, consoleCallback, consoleLoggedOut } from "../../shared/console";
import { encryptionContext } from "../../shared/crypto/contexts";
import { sha256, timingSafeEqualText } from "../../shared/crypto/compare";
import { toBase64Url } from "../../shared/crypto/encoding";
import { fieldCipher } from "../../shared/crypto/encryption";
import { randomToken } from "../../shared/crypto/random";
import { now } from "../../shared/clock";
import { MANAGEMENT_AUDIENCE, MANAGEMENT_SCOPES } from "../../shared/scopes";
import type { ConsoleContext } from "./context";
import { consoleClientSecret } from "./credentials";
import { sendConsoleError, sendConsoleMessage } from "./render";
import { cookieAttributes, endSession, isHttps, startSession } from "./session";

/** How long a login may take between /admin/login and /admin/callback. */
const LOGIN_TTL_MS = 10 * 60_000;

interface LoginTransaction {
  state: string;
  verifier: string;
  nonce: string;
  returnTo: string;
  exp: number;
}

const txCookie = (c: ConsoleContext) => (isHttps(c) ? "__Host-gh_console_login" : "gh_console_login");

/** Only a path inside the console (never `//host` or a scheme): the return target is not an open redirect. */
export function safeReturnTo(value: string | undefined): string {
  if (!value?.startsWith(CONSOLE_PATH) || value.startsWith("//") || /[\\\r\n]/.test(value)) return CONSOLE_PATH;
  const rest = value.slice(CONSOLE_PATH.length);
  return rest === "" || rest.startsWith("/") || rest.startsWith("?") ? value : CONSOLE_PATH;
}

/** The console's own origin is the issuer's: its callback is registered there. */
function issuerOrigin(c: ConsoleContext): string {
  return new URL(c.var.settings.issuer).origin;
}

/**
 * GET /admin/login: the operator logs in as any user of the control plane would, through Gatehouse's own
 * /authorize with PKCE (S256), state and nonce kept in an encrypted, short-lived cookie. `step_up=1` asks for
 * a fresh login (max_age=0) before a destructive action; `organization=<id or name>` logs a tenant admin in
 * through the tenant's organization.
 */
export async function loginStart(c: ConsoleContext): Promise<Response> {
  const returnTo = safeReturnTo(c.req.query("return_to"));
  // A tenant admin logs in through the tenant's organization on the control plane (issue 15 point 3): the token
  // then holds read:tenants / update:tenants of that tenant only, and the console shows only its details.
  const organization = /^[A-Za-z0-9_.-]{1,100}$/.test(c.req.query("organization") ?? "") ? (c.req.query("organization") as string) : null;
  if (new URL(c.req.url).origin !== issuerOrigin(c)) {
    const query = new URLSearchParams({ return_to: returnTo, ...(organization ? { organization } : {}) });
    return c.redirect(`${issuerOrigin(c)}${CONSOLE_PATH}/login?${query}`, 302);
  }
  const tx: LoginTransaction = { state: randomToken(24), verifier: randomToken(32), nonce: randomToken(24), returnTo, exp: now() + LOGIN_TTL_MS };
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  setCookie(c, txCookie(c), await cipher.encrypt(JSON.stringify(tx), encryptionContext.consoleLogin()), {
    ...cookieAttributes(c, `${CONSOLE_PATH}/callback`),
    maxAge: LOGIN_TTL_MS / 1_000,
  });
  const params = new URLSearchParams({
    response_type: "code",
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: consoleCallback(c.var.settings.issuer),
    scope: ["openid", "profile", "email", ...MANAGEMENT_SCOPES].join(" "),
    audience: MANAGEMENT_AUDIENCE,
    state: tx.state,
    nonce: tx.nonce,
    code_challenge: toBase64Url(await sha256(tx.verifier)),
    code_challenge_method: "S256",
  });
  if (c.req.query("step_up") === "1") params.set("max_age", "0");
  if (organization) params.set("organization", organization);
  return c.redirect(`${c.var.settings.issuer.replace(/\/+$/, "")}/authorize?${params}`, 302);
}

async function readTransaction(c: ConsoleContext): Promise<LoginTransaction | null> {
  const sealed = getCookie(c, txCookie(c));
  deleteCookie(c, txCookie(c), cookieAttributes(c, `${CONSOLE_PATH}/callback`));
  if (!sealed) return null;
  try {
    const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
    const tx = JSON.parse(await cipher.decrypt(sealed, encryptionContext.consoleLogin())) as LoginTransaction;
    return tx.exp > now() ? tx : null;
  } catch {
    return null;
  }
}

/**
 * GET /admin/callback: the state must be this browser's (constant-time), the code is redeemed at the token
 * endpoint with the console's secret and the PKCE verifier, the ID token's nonce must match; then the
 * session opens and the browser goes back to the page it asked for. The tokens never reach the browser.
 */
export async function loginCallback(c: ConsoleContext): Promise<Response> {
  const tx = await readTransaction(c);
  const state = c.req.query("state") ?? "";
  if (!tx || !state || !(await timingSafeEqualText(state, tx.state))) {
    return sendConsoleError(c, 400, "Login expired", "This login link has expired or was not started here.", `${CONSOLE_PATH}/login`);
  }
  const error = c.req.query("error");
  if (error) {
    const description = c.req.query("error_description") ?? error;
    return sendConsoleError(c, 403, "Login refused", description, `${CONSOLE_PATH}/login`);
  }
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: c.req.query("code") ?? "",
    redirect_uri: consoleCallback(c.var.settings.issuer),
    client_id: CONSOLE_CLIENT_ID,
    client_secret: await consoleClientSecret(c.env.ENCRYPTION_KEY),
    code_verifier: tx.verifier,
  });
  const request = new Request(`${c.var.settings.issuer.replace(/\/+$/, "")}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form,
  });
  const response = await c.var.dispatch(request, c);
  const tokens = (await response.json().catch(() => ({}))) as { access_token?: string; id_token?: string; expires_in?: number; error_description?: string };
  if (!response.ok || !tokens.access_token || !tokens.id_token) {
    return sendConsoleError(c, 403, "Login failed", tokens.error_description ?? "The token endpoint refused the login.", `${CONSOLE_PATH}/login`);
  }
  const claims = decodeJwt(tokens.id_token);
  if (typeof claims.sub !== "string" || typeof claims.nonce !== "string" || !(await timingSafeEqualText(claims.nonce, tx.nonce))) {
    return sendConsoleError(c, 403, "Login failed", "The ID token does not belong to this login.", `${CONSOLE_PATH}/login`);
  }
  const profile = {
    // No auth_time (never from our own token endpoint): counted as long ago, so a step-up asks for a new login.
    auth_time: String(typeof claims.auth_time === "number" ? claims.auth_time : 0),
    ...(typeof claims.name === "string" ? { name: claims.name } : {}),
    ...(typeof claims.email === "string" ? { email: claims.email } : {}),
  };
  await startSession(c, claims.sub, tokens.access_token, tokens.expires_in ?? 3_600, profile);
  return c.redirect(tx.returnTo, 302);
}

/** POST /admin/logout (CSRF-checked): the operator's token is revoked, the console session ends, then the login session at /v2/logout. */
export async function logout(c: ConsoleContext): Promise<Response> {
  await c.var.api.revokeToken(CONSOLE_CLIENT_ID, await consoleClientSecret(c.env.ENCRYPTION_KEY));
  await endSession(c);
  const params = new URLSearchParams({ client_id: CONSOLE_CLIENT_ID, returnTo: consoleLoggedOut(c.var.settings.issuer) });
  return c.redirect(`${c.var.settings.issuer.replace(/\/+$/, "")}/v2/logout?${params}`, 302);
}

/** GET /admin/logged-out. */
export function loggedOut(c: ConsoleContext): Response | Promise<Response> {
  return sendConsoleMessage(c, "Logged out", "You have logged out of the Gatehouse console.", `${CONSOLE_PATH}/login`, "Log in again");
}

/** How recent a login must be for a destructive action (issue 30 step-up). @default 5 minutes */
export const STEP_UP_MS = 5 * 60_000;

/**
 * Step-up before a destructive action (issue 30): unless the operator logged in (with a password, at the
 * login page) in the last few minutes, the answer is a fresh login (`max_age=0`) that returns to `back`,
 * where the operator confirms again. Null: recent enough, go ahead.
 */
export function stepUpRequired(c: ConsoleContext, back: string): Response | null {
  if (now() - c.var.operator.authTime * 1_000 <= STEP_UP_MS) return null;
  return c.redirect(`${CONSOLE_PATH}/login?step_up=1&return_to=${encodeURIComponent(safeReturnTo(back))}`, 303);
}
