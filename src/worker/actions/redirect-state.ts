import { now } from "../../shared/clock";
import { randomToken } from "../../shared/crypto/random";
import type { AuthorizeRequest } from "../../shared/types";
import type { AppContext } from "../context";
import { readCookie, setSecureCookie } from "../login/cookies";
import { hashSecret } from "../login/session";
import { tenantObject } from "../tenant/stubs";
import type { PendingRedirect, SuspendedDispatch } from "./post-login";

/**
 * Logins suspended by a post-login action's `api.redirect.sendUserTo` (issue 32 point 3). The browser
 * leaves with the action's URL and a fresh `state`; it carries a continue cookie (one random value per
 * browser, SameSite=None so the external page may POST back) whose hash binds the suspension to it. Only
 * hashes are stored; `/continue` consumes the suspension once.
 */
export const CONTINUE_COOKIE = "gh_continue";

/** How long a user may spend on the action's page before `/continue` answers that the login expired. */
export const REDIRECT_TTL_MS = 30 * 60 * 1000;

/** What /continue needs to finish the login the way it started. */
export type SuspendedLogin = {
  client_id: string;
  user_id: string;
  dispatch: SuspendedDispatch;
} & (
  | { flow: "interactive"; login_session_id: string; amr?: string[]; mfa_transaction_id?: string }
  | { flow: "sso"; request: AuthorizeRequest; session_id: string | null; auth_time: number }
);

type WithoutDispatch<T> = T extends unknown ? Omit<T, "dispatch"> : never;

/**
 * Stores the suspended login and answers the redirect. The suspension lives until the login session
 * expires (interactive) and at most {@link REDIRECT_TTL_MS}.
 */
export async function suspendForRedirect(c: AppContext, login: WithoutDispatch<SuspendedLogin>, pending: PendingRedirect, notAfter?: number): Promise<Response> {
  const binding = readCookie(c, CONTINUE_COOKIE) || randomToken(24);
  const expires = Math.min(now() + REDIRECT_TTL_MS, notAfter ?? Number.POSITIVE_INFINITY);
  const resume: SuspendedLogin = { ...login, dispatch: pending.dispatch } as SuspendedLogin;
  await tenantObject(c.env, c.var.tenant.id)
    .actions()
    .suspendLogin({ state_hash: await hashSecret(pending.state), binding_hash: await hashSecret(binding), resume: JSON.stringify(resume), expires_at: expires });
  setSecureCookie(c, CONTINUE_COOKIE, binding, { sameSite: "None", path: "/continue", maxAgeS: Math.ceil(REDIRECT_TTL_MS / 1000) });
  c.header("Cache-Control", "no-store");
  return c.redirect(pending.location, 302);
}
