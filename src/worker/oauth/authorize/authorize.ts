import { now, nowSeconds } from "../../../shared/clock";
import { OAuthError } from "../../../shared/errors";
import { randomId, randomToken } from "../../../shared/crypto/random";
import type { AppContext } from "../../context";
import { pageSecurityHeaders } from "../../login/cookies";
import { mfaFromFirstFactor, ssoNeedsMfa } from "../../login/mfa/gate";
import { isMfaRequired } from "../../login/mfa/policy";
import { consentNeeded } from "../../login/consent";
import { startOrganization } from "../../login/organization";
import { currentSessionWithUser, hashSecret } from "../../login/session";
import { tenantConfig } from "../../tenant/config-cache";
import { tenantObject } from "../../tenant/stubs";
import { authorizationQuery } from "../par";
import { finishTicketLogin, issueAuthorizationResponse } from "./complete";
import { parseAuthorizeRequest, RedirectableError } from "./request";
import { respondToClient } from "./respond";
import { rememberLoginSession } from "../../tenant/login-session-cache";
import { MAX_SEALED_STATE_LENGTH, sealLoginSession } from "../../tenant/login-state";

/** A login transaction lives this long before the user must start again. */
export const LOGIN_SESSION_TTL_MS = 60 * 60 * 1000;

/**
 * GET /authorize (RFC 6749 §4.1.1, OIDC Core §3.1.2). Reuses a live session (SSO) unless prompt=login or
 * max_age demands a fresh login; prompt=none never shows UI; a login_ticket from /co/authenticate logs
 * the user in without UI; otherwise the browser goes to the universal login page.
 */
export async function authorizeEndpoint(c: AppContext): Promise<Response> {
  pageSecurityHeaders(c);
  const tenant = c.var.tenant;
  const stub = tenantObject(c.env, tenant.id);
  const config = await tenantConfig(tenant.id, stub, c.var.settings);
  try {
    // RFC 9126 §4: a request_uri stands for the parameters the client pushed (../par.ts).
    const parsed = parseAuthorizeRequest(await authorizationQuery(c, config), config, tenant.issuer);
    const { client, loginTicket } = parsed;
    // Issue 11: organization and invitation (src/worker/login/organization.ts).
    const start = await startOrganization(c, parsed.request, client, config);
    if (start instanceof Response) return start;
    const request = start.request;
    const redirectError = (code: ConstructorParameters<typeof OAuthError>[0], description: string) =>
      new RedirectableError(new OAuthError(code, description), request.redirect_uri, request.response_mode, request.state);

    if (loginTicket) {
      // A ticket proves the password only: under an MFA policy the second factor is asked first.
      const response = isMfaRequired(config) ? await mfaFromFirstFactor(c, request, { ticket_hash: await hashSecret(loginTicket) }, ["pwd"]) : await finishTicketLogin(c, request, client, loginTicket);
      if (!response) throw redirectError("access_denied", "Invalid or expired login_ticket");
      return response;
    }

    const prompts = request.prompt?.split(" ") ?? [];
    // The session and its user in one read (issue 31; the user is ignored when max_age asks for a new login).
    const found = prompts.includes("login") || !start.allowsSso ? null : await currentSessionWithUser(c);
    const session = found?.session ?? null;
    const authTimeS = session ? Math.floor(Date.parse(session.authenticated_at) / 1000) : 0;
    const fresh = request.max_age === undefined || nowSeconds() - authTimeS <= request.max_age;
    const user = session && fresh ? (found?.user ?? null) : null;
    if (session && user && !user.blocked) {
      // Issue 29 point 2: a consent still owed cannot be answered silently (issueAuthorizationResponse asks it).
      if (prompts.includes("none") && (await consentNeeded(c, config, client, request, user.user_id))) {
        throw redirectError("consent_required", "Consent required");
      }
      if (await ssoNeedsMfa(c, config, session.id)) {
        // SPEC §3.5: a session that never passed MFA cannot answer silently under an MFA policy (step-up).
        if (prompts.includes("none")) throw redirectError("login_required", "Multi-factor authentication required");
        // After the second factor the login completes through finishMfaLogin (organization gate, actions).
        const stepUp = await mfaFromFirstFactor(c, request, { user_id: user.user_id }, ["pwd"]);
        if (!stepUp) throw redirectError("login_required", "Login required");
        return stepUp;
      }
      // The session's touch commits with the code (one commit: issue 31), or alone on any other answer.
      return issueAuthorizationResponse(c, request, client, user, session.id, authTimeS, { touch: true });
    }
    if (prompts.includes("none")) throw redirectError("login_required", "Login required");

    // Issue 31: nothing is written here; the session is sealed into its state (../../tenant/login-state.ts)
    // and stored by the first step that changes it. A request too large for a short state (a long scope list,
    // a large client state) is stored now instead, as before, so the /u2 URLs stay short.
    const started = { request, csrf_token: randomToken(24), expires_at: now() + LOGIN_SESSION_TTL_MS };
    const sealed = await sealLoginSession(c.env.ENCRYPTION_KEY, c.var.tenant.id, started);
    const loginSession = sealed.id.length <= MAX_SEALED_STATE_LENGTH ? sealed : await stub.logins().start({ id: randomId("ls_"), ...started });
    // The login form's first display follows at once; it may show this session without asking again.
    rememberLoginSession(c.var.tenant.id, loginSession);
    const page = start.page ?? (request.screen_hint === "signup" ? "signup" : "login");
    return c.redirect(`/u2/${page}?state=${encodeURIComponent(loginSession.id)}`, 302);
  } catch (error) {
    if (error instanceof RedirectableError) {
      return respondToClient(c, error.redirectUri, error.mode, {
        error: error.error.code,
        error_description: error.error.description,
        state: error.state,
      });
    }
    throw error;
  }
}
