import { now } from "../../../shared/clock";
import { randomId, randomToken } from "../../../shared/crypto/random";
import type { AuthorizeRequest, LoginSession, MfaPending, TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { clientIn } from "../../tenant/config-cache";
import { tenantObject } from "../../tenant/stubs";
import { beginLoginMfa, mfaEntry, prepareMfa, setMfaCookie } from "./context";
import { isMfaRequired } from "./policy";

/**
 * Where a verified first factor meets the MFA policy (issue 12 point 3; SPEC §3.5). Every way into a login
 * session goes through here: the password form, sign-up, a cross-origin login ticket and SSO reuse, so no
 * path completes a login that the policy says needs a second factor.
 */

/** Decides whether a login may complete now; otherwise the response that starts MFA (or an offer). */
export type GateHook = (c: AppContext, config: TenantConfig, client: ClientRecord | null, user: UserRecord, amr: string[]) => Promise<boolean>;

const offers: GateHook[] = [];
/** Registers a step that may follow a satisfied first factor (the passkey enrollment offer). */
export const registerOffer = (hook: GateHook) => offers.push(hook);

/**
 * After the password form or sign-up: null when the login completes now (no policy, no offer), else the
 * redirect into /u2/mfa. `"expired"` when the login session was already completed (double submit).
 */
export async function mfaGate(c: AppContext, config: TenantConfig, loginSession: LoginSession, user: UserRecord, amr: string[]): Promise<Response | "expired" | null> {
  const required = isMfaRequired(config);
  if (!required) {
    let offered = false;
    const client = clientIn(config, loginSession.client_id) ?? null;
    for (const hook of offers) offered ||= await hook(c, config, client, user, amr);
    if (!offered) return null;
  }
  const response = await beginLoginMfa(c, loginSession, user, { amr, satisfied: !required });
  return response ?? "expired";
}

/** An SSO session may answer silently only when it passed MFA, if the policy asks for it. */
export async function ssoNeedsMfa(c: AppContext, config: TenantConfig, sessionId: string): Promise<boolean> {
  if (!isMfaRequired(config)) return false;
  const amr = await tenantObject(c.env, c.var.tenant.id).mfa().sessionAmr(sessionId);
  return !amr.includes("mfa");
}

/** The login TTL of /authorize (kept equal to its LOGIN_SESSION_TTL_MS). */
const LOGIN_SESSION_TTL_MS = 60 * 60 * 1000;

/**
 * Starts MFA for a first factor proven outside the password form: a cross-origin login ticket (consumed in
 * the same commit) or an SSO session (step-up). Null when the ticket is unknown, used or expired, or the
 * user is gone or blocked.
 */
export async function mfaFromFirstFactor(
  c: AppContext,
  request: AuthorizeRequest,
  proof: { ticket_hash: string } | { user_id: string },
  amr: string[],
  /** What else the transaction starts with (a post-login action's step, issue 32). */
  extra: Omit<MfaPending, "amr"> = {},
): Promise<Response | null> {
  const csrf = randomToken(24);
  const loginSession = { id: randomId("ls_"), request, csrf_token: csrf, expires_at: now() + LOGIN_SESSION_TTL_MS };
  const { record, cookie } = await prepareMfa("login", "", loginSession.id, csrf, { ...extra, amr });
  const { user_id: _u, login_session_id: _l, ...transaction } = record;
  const userId = await tenantObject(c.env, c.var.tenant.id).mfa().startFromFirstFactor(loginSession, transaction, proof);
  if (!userId) return null;
  setMfaCookie(c, cookie);
  return c.redirect(mfaEntry(c, record.id), 302);
}
