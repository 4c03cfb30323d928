import { timingSafeEqualText } from "../../shared/crypto/compare";
import type { LoginOrganization, LoginSession, TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";
import { readBodyText } from "../http/body";
import { tenantObject } from "../tenant/stubs";
import { CSRF_COOKIE, readCookie, setSecureCookie } from "./cookies";
import { configOf } from "./connection";
import { brandedFor, loginOrganization } from "./organization";
import type { PageShell } from "./pages/layout";
import { EXPIRED_LOGIN, sendMessage, shellFor } from "./render";
import { clientIn } from "../tenant/config-cache";
import { forgetLoginSession, recentLoginSession, rememberLoginSession } from "../tenant/login-session-cache";
import { resolveLoginSession } from "../tenant/login-state";

/** One /authorize transaction as a /u2 page sees it. */
export interface LoginTransaction {
  config: TenantConfig;
  shell: PageShell;
  loginSession: LoginSession;
  client: ClientRecord;
  /** The login session id, as carried in the `state` query parameter. */
  state: string;
  /** The organization the login runs in (issue 11), whose branding the shell carries. */
  organization: LoginOrganization | null;
}

/**
 * Loads the login session named by `?state=` (the reference platform's convention for /u2 pages). Unknown,
 * expired and already completed sessions, or a client deleted meanwhile, all answer the same 400 page:
 * a completed session can never be completed twice (replayed form, back button).
 */
export async function loadTransaction(
  c: AppContext,
  alsoAccept?: (loginSession: LoginSession) => Promise<boolean>,
  /**
   * `recent`: a form's first display may use the session as this isolate last saw it (../tenant/login-session-cache.ts).
   * `read`: reads the login session together with what the page needs next (issue 31: one round trip).
   */
  options: { recent?: boolean; read?: (state: string) => Promise<LoginSession | null> } = {},
): Promise<LoginTransaction | Response> {
  const config = await configOf(c);
  const state = c.req.query("state") ?? "";
  const tenantId = c.var.tenant.id;
  let loginSession = state && options.recent ? (recentLoginSession(tenantId, state) ?? null) : null;
  if (!loginSession && state) {
    const stored = await (options.read ? options.read(state) : tenantObject(c.env, tenantId).logins().get(state));
    // A sealed state nothing has changed yet has no row: the session it carries (issue 31, login-state.ts).
    loginSession = await resolveLoginSession(c.env.ENCRYPTION_KEY, tenantId, state, stored);
    // Any other read is the flow moving on (a post, another page): later displays ask the object again.
    if (loginSession && options.recent) rememberLoginSession(tenantId, loginSession);
    else forgetLoginSession(tenantId, state);
  }
  const client = loginSession && clientIn(config, loginSession.client_id);
  // A page that may also serve a login session in another state says which (the organization prompt after MFA).
  const live = loginSession?.state === "pending" || (loginSession && alsoAccept ? await alsoAccept(loginSession) : false);
  if (!loginSession || !live || !client) {
    return sendMessage(c, shellFor(c, config), EXPIRED_LOGIN, 400);
  }
  const organization = await loginOrganization(c, loginSession.request);
  return { config, shell: shellFor(c, brandedFor(config, organization), client.name, loginSession.request.ui_locales), loginSession, client, state, organization };
}

/**
 * Sets the double-submit CSRF cookie: the login session's own token, HttpOnly, SameSite=Strict, scoped to
 * /u2, for the life of the browser session.
 */
export function setCsrfCookie(c: AppContext, loginSession: LoginSession): void {
  setSecureCookie(c, CSRF_COOKIE, loginSession.csrf_token, { sameSite: "Strict", path: "/u2" });
}

/**
 * CSRF check of a login form post: the `_csrf` field, the cookie and the login session's token must all be
 * equal, compared in constant time. The server-side token binds the form to this transaction; the cookie
 * binds it to this browser, so a token obtained by an attacker for their own transaction cannot be used to
 * log a victim's browser into the attacker's account (login CSRF).
 */
export async function hasValidCsrf(c: AppContext, form: Record<string, string>, loginSession: LoginSession): Promise<boolean> {
  const field = form._csrf ?? "";
  const cookie = readCookie(c, CSRF_COOKIE) ?? "";
  const [fieldOk, cookieOk] = await Promise.all([
    timingSafeEqualText(field, loginSession.csrf_token),
    timingSafeEqualText(cookie, loginSession.csrf_token),
  ]);
  return fieldOk && cookieOk && loginSession.csrf_token !== "";
}

/** The 403 page of a failed CSRF check, with a link that reloads the form (and re-sets the cookie). */
export function csrfFailure(c: AppContext, t: LoginTransaction, page: "login" | "signup" | "organization" | "reset-password" | "consent"): Response | Promise<Response> {
  return sendMessage(
    c,
    t.shell,
    {
      code: "INVALID_CSRF",
      title: "Something went wrong",
      message: "Your session could not be verified. Reload the form and try again.",
      retryHref: `/u2/${page}?state=${encodeURIComponent(t.state)}`,
    },
    403,
  );
}

/**
 * Reads a form-urlencoded body (size-limited like every body). Null when the body is not a form, is too
 * large, or repeats a field: the caller answers with an error page.
 */
export async function readForm(c: AppContext): Promise<Record<string, string> | null> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(c.req.header("content-type") ?? "")) return null;
  let text: string;
  try {
    text = await readBodyText(c.req.raw, () => new Error("too large"));
  } catch {
    return null;
  }
  const form: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (key in form) return null;
    form[key] = value;
  }
  return form;
}

/** The 400 page of an unreadable form post. */
export function badForm(c: AppContext, t: LoginTransaction): Response | Promise<Response> {
  const message = "The form could not be read. Try again.";
  return sendMessage(c, t.shell, { code: "INVALID_REQUEST", title: "Something went wrong", message }, 400);
}

/**
 * The prologue of every login-page form post: a live transaction, a readable form and a valid CSRF token.
 * Anything else is the page to answer with.
 */
export async function submittedForm(
  c: AppContext,
  page: "login" | "signup" | "organization" | "reset-password" | "consent",
  alsoAccept?: (loginSession: LoginSession) => Promise<boolean>,
  /** Reads the login session with what the form's fields let the page read at once (see loadTransaction). */
  read?: (state: string, form: Record<string, string> | null) => Promise<LoginSession | null>,
): Promise<{ t: LoginTransaction; form: Record<string, string> } | Response> {
  // The body first, so that `read` can use it; the answers keep their order (expired, unreadable, CSRF).
  const form = await readForm(c);
  const t = await loadTransaction(c, alsoAccept, { read: read && ((state) => read(state, form)) });
  if (t instanceof Response) return t;
  if (!form) return badForm(c, t);
  if (!(await hasValidCsrf(c, form, t.loginSession))) return csrfFailure(c, t, page);
  return { t, form };
}
