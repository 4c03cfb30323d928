import { now } from "../../../shared/clock";
import { timingSafeEqualText } from "../../../shared/crypto/compare";
import { randomId, randomToken } from "../../../shared/crypto/random";
import type { LoginSession, MfaPending, MfaTransaction, NewMfaTransaction, TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { clientIn } from "../../tenant/config-cache";
import { tenantObject } from "../../tenant/stubs";
import { freshLoginSession, readLoginSession } from "../../tenant/login-state";
import { clearCookie, readCookie, setSecureCookie } from "../cookies";
import { configOf } from "../connection";
import type { PageShell } from "../pages/layout";
import { sendMessage, shellFor } from "../render";
import { hashSecret } from "../session";
import { readForm } from "../transaction";

/**
 * The browser side of an MFA transaction (issue 12): the `gh_mfa` cookie binds it to the browser that
 * proved the first factor (or opened the ticket), so a leaked `state` URL alone cannot enroll a factor on
 * someone else's account. Every form post also carries the transaction's CSRF token.
 */

/** The MFA cookie: `<transaction id>.<secret>`; only the secret's hash is stored. */
export const MFA_COOKIE = "gh_mfa";
/** An MFA step must finish within this time. @default 15 minutes */
export const MFA_TTL_MS = 15 * 60 * 1000;

/** What every MFA screen works with. */
export interface MfaContext {
  config: TenantConfig;
  shell: PageShell;
  tx: MfaTransaction;
  user: UserRecord;
  /** The application of a login (null for a ticket enrollment). */
  client: ClientRecord | null;
  loginSession: LoginSession | null;
  /** The transaction id, as carried in `?state=`. */
  state: string;
  /** `?state=<id>`, plus `&tenant_id=` when the query chose the tenant (an enrollment link on the apex). */
  query: string;
}

export const EXPIRED_MFA = {
  code: "INVALID_MFA_SESSION",
  title: "Verification expired",
  message: "This verification step has expired or is invalid. Start again from the application.",
} as const;

/** A fresh transaction and the cookie value that goes with it. */
export async function prepareMfa(
  kind: "login" | "ticket",
  userId: string,
  loginSessionId: string | null,
  csrfToken: string,
  pending: MfaPending = {},
): Promise<{ record: NewMfaTransaction; cookie: string }> {
  const id = randomId("mfa_");
  const secret = randomToken(32);
  return {
    record: { id, kind, secret_hash: await hashSecret(secret), user_id: userId, login_session_id: loginSessionId, csrf_token: csrfToken, pending, expires_at: now() + MFA_TTL_MS },
    cookie: `${id}.${secret}`,
  };
}

/** Sets the MFA cookie (Lax: a ticket link opened from an email is a cross-site navigation). */
export function setMfaCookie(c: AppContext, cookie: string): void {
  setSecureCookie(c, MFA_COOKIE, cookie, { sameSite: "Lax", path: "/u2", maxAgeS: Math.floor(MFA_TTL_MS / 1000) });
}

export const clearMfaCookie = (c: AppContext) => clearCookie(c, MFA_COOKIE, "/u2", "Lax");

/** The query of every MFA link; the tenant goes along when the query chose it (SPEC §5.5 step 5). */
export function mfaQuery(c: AppContext, id: string): string {
  const query = new URLSearchParams({ state: id });
  if (c.var.tenant.via === "query") query.set("tenant_id", c.var.tenant.id);
  return `?${query}`;
}

/** Where a started transaction goes next. */
export const mfaEntry = (c: AppContext, id: string) => `/u2/mfa${mfaQuery(c, id)}`;

/**
 * Starts MFA for a login whose first factor was verified: the login session moves to `awaiting_mfa` in the
 * same commit. Null when the login session was no longer pending (double submit): nothing was written.
 */
export async function beginLoginMfa(c: AppContext, loginSession: LoginSession, user: UserRecord, pending: MfaPending): Promise<Response | null> {
  const { record, cookie } = await prepareMfa("login", user.user_id, loginSession.id, loginSession.csrf_token, pending);
  const started = await tenantObject(c.env, c.var.tenant.id).mfa().startLogin(record, freshLoginSession(loginSession));
  if (!started) return null;
  setMfaCookie(c, cookie);
  return c.redirect(mfaEntry(c, record.id), 302);
}

async function cookieMatches(c: AppContext, tx: MfaTransaction): Promise<boolean> {
  const [id, secret] = (readCookie(c, MFA_COOKIE) ?? "").split(".");
  if (id !== tx.id || !secret) return false;
  return timingSafeEqualText(await hashSecret(secret), tx.secret_hash);
}

/**
 * The login MFA transaction of this browser (its `gh_mfa` cookie) whose factor was verified for this login
 * session, or null: the post-login organization prompt comes after MFA (issue 11 with issue 12) and is
 * shown only to the browser that passed it.
 */
export async function passedMfaFor(c: AppContext, loginSession: LoginSession): Promise<MfaTransaction | null> {
  const [id] = (readCookie(c, MFA_COOKIE) ?? "").split(".");
  const tx = id ? await tenantObject(c.env, c.var.tenant.id).mfa().get(id) : null;
  if (tx?.kind !== "login" || tx.login_session_id !== loginSession.id || tx.pending.satisfied !== true) return null;
  return (await cookieMatches(c, tx)) ? tx : null;
}

/**
 * Loads the transaction named by `?state=` for this browser. Unknown, expired, completed, another browser's,
 * a blocked or deleted user, or a login whose application is gone: all answer the same 400 page.
 */
export async function loadMfa(c: AppContext): Promise<MfaContext | Response> {
  const config = await configOf(c);
  const state = c.req.query("state") ?? "";
  const stub = tenantObject(c.env, c.var.tenant.id);
  const tx = state ? await stub.mfa().get(state) : null;
  const expired = () => sendMessage(c, shellFor(c, config), EXPIRED_MFA, 400);
  if (!tx || !(await cookieMatches(c, tx))) return expired();
  const [user, loginSession] = await Promise.all([stub.users().get(tx.user_id), tx.login_session_id ? readLoginSession(c, tx.login_session_id) : null]);
  if (!user || user.blocked) return expired();
  let client: ClientRecord | null = null;
  if (tx.kind === "login") {
    client = (loginSession && clientIn(config, loginSession.client_id)) || null;
    if (loginSession?.state !== "awaiting_mfa" || !client) return expired();
  }
  return { config, shell: shellFor(c, config, client?.name, loginSession?.request.ui_locales), tx, user, client, loginSession, state, query: mfaQuery(c, state) };
}

/** The prologue of every MFA form post: a live transaction of this browser, a readable form, a valid CSRF token. */
export async function submittedMfa(c: AppContext): Promise<{ m: MfaContext; form: Record<string, string> } | Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const form = await readForm(c);
  if (!form) return sendMessage(c, m.shell, { code: "INVALID_REQUEST", title: "Something went wrong", message: "The form could not be read. Try again." }, 400);
  if (!(await timingSafeEqualText(form._csrf ?? "", m.tx.csrf_token))) {
    return sendMessage(c, m.shell, { code: "INVALID_CSRF", title: "Something went wrong", message: "Your session could not be verified. Try again.", retryHref: `/u2/mfa${m.query}` }, 403);
  }
  return { m, form };
}

/** The audit context of a user acting on an MFA screen. */
export const mfaAudit = (c: AppContext, m: MfaContext) =>
  auditContext(c, { actor: { type: "user", id: m.user.user_id, email: m.user.email, client_id: m.client?.client_id ?? null } });
