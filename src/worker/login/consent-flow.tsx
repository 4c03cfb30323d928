import { randomId } from "../../shared/crypto/random";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { issueAuthorizationResponse } from "../oauth/authorize/complete";
import { refuseToClient } from "../oauth/authorize/respond";
import { tenantObject } from "../tenant/stubs";
import { consentAudience, consentNeeded, isConsentState, requestedScopes } from "./consent";
import { mfaFromFirstFactor, ssoNeedsMfa } from "./mfa/gate";
import { ConsentPage } from "./pages/consent-page";
import { EXPIRED_LOGIN, sendMessage, sendPage } from "./render";
import { currentSession } from "./session";
import { type LoginTransaction, loadTransaction, setCsrfCookie, submittedForm } from "./transaction";

/**
 * The consent page (issue 29 point 2), `/u2/consent?state=<consent transaction>`: opened by
 * `redirectToConsent` once the user is signed in. The decision belongs to the browser's signed-in user: a
 * page opened without that session is the expired-link page.
 */

/** The signed-in user of this browser, with the session the answer is issued under. */
async function signedIn(c: AppContext) {
  const session = await currentSession(c);
  const user = session ? await tenantObject(c.env, c.var.tenant.id).users().get(session.user_id) : null;
  return session && user && !user.blocked ? { session, user } : null;
}

/**
 * What stands before the consent page, as before an SSO answer at /authorize: only a consent transaction
 * (a login transaction's state is the expired page here), and under an MFA policy a session that passed MFA
 * (else the second factor first, after which the login asks for consent again). Null: go on.
 */
async function refusedBeforeConsent(c: AppContext, t: LoginTransaction, who: NonNullable<Awaited<ReturnType<typeof signedIn>>>): Promise<Response | null> {
  if (!isConsentState(t.state)) return sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  if (!(await ssoNeedsMfa(c, t.config, who.session.id))) return null;
  return (await mfaFromFirstFactor(c, t.loginSession.request, { user_id: who.user.user_id }, ["pwd"])) ?? sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
}

/** GET /u2/consent: what the application asks for (only the scopes not yet granted, unless asked again). */
export async function consentPage(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c);
  if (t instanceof Response) return t;
  const who = await signedIn(c);
  if (!who) return sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  const refused = await refusedBeforeConsent(c, t, who);
  if (refused) return refused;
  setCsrfCookie(c, t.loginSession);
  const need = await consentNeeded(c, t.config, t.client, t.loginSession.request, who.user.user_id);
  const scopes = need ? need.scopes : requestedScopes(t.config, t.loginSession.request);
  const userLabel = who.user.email ?? who.user.name ?? who.user.user_id;
  return sendPage(c, t.shell, <ConsentPage shell={t.shell} state={t.state} csrf={t.loginSession.csrf_token} clientName={t.client.name} userLabel={userLabel} scopes={scopes} />);
}

/**
 * POST /u2/consent: "Accept" stores the grant (every scope the request asked for) and answers the
 * application as a login would; "Decline" answers it `access_denied`. Either spends the transaction.
 */
export async function consentSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "consent");
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const who = await signedIn(c);
  if (!who) return sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  const refused = await refusedBeforeConsent(c, t, who);
  if (refused) return refused;
  const accepted = form.action === "accept";
  if (!accepted && form.action !== "deny") return sendMessage(c, t.shell, { code: "INVALID_REQUEST", title: "Something went wrong", message: "The form could not be read. Try again." }, 400);
  return decide(c, t, who, accepted);
}

async function decide(c: AppContext, t: LoginTransaction, who: NonNullable<Awaited<ReturnType<typeof signedIn>>>, accepted: boolean): Promise<Response> {
  const { request } = t.loginSession;
  const { user, session } = who;
  const actor = { type: "user" as const, id: user.user_id, email: user.email, client_id: t.client.client_id };
  const grant = accepted
    ? { id: randomId("gr_"), user_id: user.user_id, client_id: t.client.client_id, audience: consentAudience(request, c.var.tenant.issuer), scope: requestedScopes(t.config, request).map((s) => s.value) }
    : null;
  const decided = await tenantObject(c.env, c.var.tenant.id).logins(auditContext(c, { actor })).decideConsent(t.loginSession.id, user.user_id, grant);
  if (!decided) return sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  if (!accepted) return refuseToClient(c, request, t.client, "access_denied", "User did not authorize the request");
  const authTimeS = Math.floor(Date.parse(session.authenticated_at) / 1000);
  return issueAuthorizationResponse(c, request, t.client, user, session.id, authTimeS, { consented: true });
}
