import { now, nowSeconds } from "../../../shared/clock";
import type { AuthorizeRequest, CodeGrant, LoginCompletion, LoginSession } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { auditContext, deviceContext } from "../../http/audit";
import { beginLoginMfa, clearMfaCookie } from "../../login/mfa/context";
import { mfaGate } from "../../login/mfa/gate";
import { choosesOrganizationAfterLogin, organizationGate } from "../../login/organization";
import { hashSecret, prepareSession, sessionLifetimes, setSessionCookie } from "../../login/session";
import { tenantConfig } from "../../tenant/config-cache";
import { activeSigner, signerResolver } from "../../tenant/keys";
import { tenantObject } from "../../tenant/stubs";
import { samlLoginResponse } from "../../samlp/respond";
import { isControlPlaneOrganizationGrant, issueUserTokens } from "../tokens/user-tokens";
import { hasEffects, type PostLoginOutcome, type ResumedDispatch, runPostLogin, type SuspendedDispatch } from "../../actions/post-login";
import { startActionMfa } from "../../login/mfa/action-step";
import { suspendForRedirect } from "../../actions/redirect-state";
import { linkAccountFor } from "../../actions/account-linking";
import type { LinkingHint } from "../../login/password";
import { consentNeeded, redirectToConsent } from "../../login/consent";
import { refuseToClient, respondToClient } from "./respond";
import { forgetLoginSession } from "../../tenant/login-session-cache";
import { freshLoginSession } from "../../tenant/login-state";
import { prepareCode } from "../tokens/sealed-code";

const withFresh = (loginSession: LoginSession) => {
  const fresh = freshLoginSession(loginSession);
  return fresh ? { fresh } : {};
};

const grantOf = (request: AuthorizeRequest, authTimeS: number): CodeGrant => ({
  scope: request.scope,
  audience: request.audience,
  nonce: request.nonce,
  auth_time: authTimeS,
  organization: request.organization,
  organization_name: request.organization_name,
});

/** The reference platform's `event.transaction.protocol` of a login: `samlp` for a SAML login (issue 14). */
const protocolOf = (request: AuthorizeRequest) =>
  request.samlp ? "samlp" : request.response_type.includes("code") ? "oidc-basic-profile" : "oidc-implicit-profile";

/** The post-login actions of an interactive or silent login (SPEC §6.1: inline, before anything is issued). */
async function postLoginActions(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  how: { amr?: string[] | undefined; resume?: ResumedDispatch | undefined; afterMfa?: SuspendedDispatch | undefined; sso?: boolean } = {},
): Promise<PostLoginOutcome> {
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  return runPostLogin(c, {
    config,
    client,
    user,
    protocol: protocolOf(request),
    scope: request.scope,
    audience: request.audience,
    redirect_uri: request.redirect_uri,
    response_type: request.response_type,
    ...(request.state !== undefined ? { state: request.state } : {}),
    organization: request.organization,
    sessionId,
    amr: how.amr,
    // A page can be shown unless the client asked for none (prompt=none) or the login is a SAML one.
    interactive: !request.samlp && !(request.prompt ?? "").split(" ").includes("none"),
    resume: how.resume,
    afterMfa: how.afterMfa,
    ...(how.sso ? { sso: true } : {}),
  });
}

/**
 * A login an action denied or failed: its `f` log event (with the execution and any metadata the actions
 * set), and `access_denied` with the action's message to the client (the reference platform's answer); a
 * SAML login hears a RequestDenied status instead, never an assertion.
 */
async function deniedByAction(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  outcome: Extract<PostLoginOutcome, { ok: false }>,
  sessionId: string | null = null,
): Promise<Response> {
  const actor = { type: "user" as const, id: user.user_id, email: user.email, client_id: client.client_id };
  // api.session.revoke: the login is refused and the browser session it rode on ends.
  if (outcome.revoke_session && sessionId) await tenantObject(c.env, c.var.tenant.id).sessions(auditContext(c, { actor })).revoke(sessionId);
  await tenantObject(c.env, c.var.tenant.id)
    .logins(auditContext(c, { actor }))
    .recordFailure({ code: "access_denied", email: user.email ?? "", user_id: user.user_id, description: `Failed login: ${outcome.description}` }, outcome.effects ?? undefined);
  return refuseToClient(c, request, client, outcome.error ?? "access_denied", outcome.description);
}

/** Issues the tokens of implicit and hybrid response types and delivers everything in the response mode. */
async function answer(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  grant: CodeGrant,
  code: string | undefined,
): Promise<Response> {
  // A SAML login (/samlp/{client_id}) completes with a signed SAML response instead (issue 14).
  if (request.samlp) return samlLoginResponse(c, { ...request, samlp: request.samlp }, client, user, sessionId, grant.auth_time);
  const tenant = c.var.tenant;
  const types = new Set(request.response_type.split(" "));
  const params: Record<string, string | undefined> = { state: request.state, code };
  if (types.has("token") || types.has("id_token")) {
    const stub = tenantObject(c.env, tenant.id);
    const config = await tenantConfig(tenant.id, stub, c.var.settings);
    const api = grant.audience ? config.resourceServers.find((r) => r.identifier === grant.audience) : undefined;
    // Only an access token to an RBAC API needs the user's permissions: one read, and only then.
    const controlPlaneTenantId = c.var.settings.controlPlaneTenantId;
    const permissions =
      types.has("token") && ((api?.enforce_policies && !api.is_system) || isControlPlaneOrganizationGrant(tenant.id, controlPlaneTenantId, api, grant.organization))
        ? await stub.userAuthorization().permissionNames(user.user_id, (api as { identifier: string }).identifier, grant.organization ?? null)
        : [];
    const tokens = await issueUserTokens({
      tenant,
      config,
      signer: await activeSigner(c.env, c.var.settings, tenant.id),
      signerFor: signerResolver(c.env, c.var.settings, tenant.id),
      client,
      user,
      grant,
      permissions,
      sessionId,
      withAccessToken: types.has("token"),
      withIdToken: types.has("id_token"),
      code,
      controlPlaneTenantId,
    });
    if (tokens.access_token) {
      Object.assign(params, { access_token: tokens.access_token, token_type: "Bearer", expires_in: String(tokens.expires_in), scope: tokens.scope });
    }
    params.id_token = tokens.id_token;
  }
  return respondToClient(c, request.redirect_uri, request.response_mode, params);
}

/**
 * Answers an authorization request for a user with a live session (SSO): the organization gate and the
 * post-login actions, as at every login, then what the response_type asks for (code, token, id_token, or a
 * hybrid of them) in the response mode, or, for a SAML login (/samlp/{client_id}), the SAML response.
 */
export async function issueAuthorizationResponse(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  authTimeS: number,
  /**
   * The consent page answered (issue 29 point 2): it is not asked again. `resume`: back from a redirect.
   * `touch`: an SSO answer records the session's use by the client, in the code's commit when there is one.
   */
  options: { consented?: boolean; resume?: ResumedDispatch; touch?: boolean } = {},
): Promise<Response> {
  const stub = tenantObject(c.env, c.var.tenant.id);
  // Every answer but the code's commit records the session's use on its own, as before the answer.
  const touched = async <T>(response: T): Promise<T> => {
    if (options.touch && sessionId) await stub.touchSession(sessionId, client.client_id, deviceContext(c));
    return response;
  };
  // Issue 11: membership in the request's organization (src/worker/login/organization.ts).
  const refused = await organizationGate(c, request, client, user, null);
  if (refused) return touched(refused);
  if (!options.consented && !request.samlp) {
    const config = await tenantConfig(c.var.tenant.id, stub, c.var.settings);
    if (await consentNeeded(c, config, client, request, user.user_id)) return touched(redirectToConsent(c, request));
  }
  const actions = await postLoginActions(c, request, client, user, sessionId, { resume: options.resume, sso: true });
  if (!actions.ok) return touched(await deniedByAction(c, request, client, user, actions, sessionId));
  if (actions.mfa) {
    const config = await tenantConfig(c.var.tenant.id, stub, c.var.settings);
    const step = await startActionMfa(c, config, user, actions.mfa, { kind: "sso", request, sessionId });
    if (!(step instanceof Response)) return touched(await deniedByAction(c, request, client, user, { ok: false, description: step.refused, effects: null }, sessionId));
    return touched(step);
  }
  if (actions.redirect) {
    const login = { flow: "sso" as const, client_id: client.client_id, user_id: user.user_id, request, session_id: sessionId, auth_time: authTimeS };
    return touched(await suspendForRedirect(c, login, actions.redirect));
  }
  const grant = {
    ...grantOf(request, authTimeS),
    ...(actions.custom_claims ? { custom_claims: actions.custom_claims } : {}),
    ...(actions.access_scope ? { access_scope: actions.access_scope } : {}),
  };
  const code = await prepareCode(c, request, client, user, sessionId, grant);
  if (hasEffects(actions.effects)) {
    await touched(null);
    const actor = { type: "user" as const, id: user.user_id, client_id: client.client_id };
    await stub.actions(auditContext(c, { actor })).applyEffects(user.user_id, actions.effects, code?.record ?? undefined);
  } else if (code?.record && options.touch && sessionId) {
    await stub.sessions(deviceContext(c)).touchWithCode(sessionId, client.client_id, code.record);
  } else if (code?.record) {
    await stub.codes().create(code.record);
  } else {
    // No code, or a sealed one (nothing to store): the session's use is still recorded.
    await touched(null);
  }
  return answer(c, request, client, user, sessionId, grant, code?.code);
}

/**
 * Completes an interactive login (password, sign-up, a passkey, the post-login organization prompt), in
 * this order: account linking (SPEC §6.2), so that everything after it is the primary's; the MFA gate on
 * that user (issue 12, SPEC §3.5: under a policy, or for the passkey offer, the login session waits in
 * `awaiting_mfa` and the browser goes to /u2/mfa, which ends in {@link finishMfaLogin}); then
 * {@link completeInteractive}. Returns null when the login session was already completed or has expired
 * (double submit, replay); nothing is written then.
 */
export async function finishLogin(
  c: AppContext,
  loginSession: LoginSession,
  client: ClientRecord,
  authenticated: UserRecord,
  /** Authentication methods references when the first factor says more than a password (a passkey). */
  amr?: string[],
  /** What the login form's one read said about linking this user (issue 31): no commit when it would not link. */
  linking?: LinkingHint,
): Promise<Response | null> {
  // The login form is done with: a display of it now asks the tenant object (login-session-cache.ts).
  forgetLoginSession(c.var.tenant.id, loginSession.id);
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  const user = await linkAccountFor(c, config, client, authenticated, "post-user-login", linking);
  // A first factor that is multi-factor by itself (a passkey with user verification) meets the policy.
  if (!amr?.includes("mfa")) {
    const gated = await mfaGate(c, config, loginSession, user, amr ?? ["pwd"]);
    if (gated === "expired") return null;
    if (gated) return gated;
  } else if (choosesOrganizationAfterLogin(loginSession.request, client)) {
    // The post-login organization prompt holds the login; a verified MFA step carries the passkey's amr
    // across it, and the login completes through finishMfaLogin once the organization is chosen.
    return beginLoginMfa(c, loginSession, user, { amr, satisfied: true });
  }
  return completeInteractive(c, loginSession, client, user, amr ? { amr } : {});
}

/**
 * Completes a login that waited in `awaiting_mfa` (issue 12) once its factor was verified: the user is
 * already the primary the gate ran on; the organization gate and the post-login actions follow, then one
 * RPC completes the MFA transaction and the login session and starts the browser session with its amr;
 * the ID token carries the same amr. Null when either was already completed or has expired.
 */
export async function finishMfaLogin(
  c: AppContext,
  mfaTransactionId: string,
  loginSession: LoginSession,
  client: ClientRecord,
  user: UserRecord,
  amr: string[],
  /** The post-login pipeline that waited for this factor (an action's MFA step, issue 32). */
  afterMfa?: SuspendedDispatch,
): Promise<Response | null> {
  return completeInteractive(c, loginSession, client, user, { mfaTransactionId, amr, ...(afterMfa ? { afterMfa } : {}) });
}

/**
 * The common end of every interactive completion: the organization gate (issue 11: membership, invitation
 * acceptance or the post-login organization prompt), the post-login actions (SPEC §6.1), then one RPC that
 * commits the completed login session (and MFA transaction), the new browser session (with its amr), the
 * login counters, the actions' effects and the code together; then the client gets its answer.
 */
async function completeInteractive(
  c: AppContext,
  loginSession: LoginSession,
  client: ClientRecord,
  user: UserRecord,
  how: { mfaTransactionId?: string; amr?: string[]; resume?: ResumedDispatch; afterMfa?: SuspendedDispatch },
): Promise<Response | null> {
  const gated = await organizationGate(c, loginSession.request, client, user, loginSession);
  if (gated) return gated;
  const session = await prepareSession(user.user_id, client.client_id, c.var.tenant.issuer, (await sessionLifetimes(c)).absoluteMs);
  // Issue 29 point 2: the user is signed in first; the answer (and the post-login actions) wait for consent.
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  const needsConsent = await consentNeeded(c, config, client, loginSession.request, user.user_id);
  const actions: PostLoginOutcome = needsConsent
    ? { ok: true, effects: null }
    : await postLoginActions(c, loginSession.request, client, user, session.input.id, { amr: how.amr, resume: how.resume, afterMfa: how.afterMfa });
  if (!actions.ok) return deniedByAction(c, loginSession.request, client, user, actions);
  if (actions.mfa) {
    const step = await startActionMfa(c, config, user, actions.mfa, { kind: "interactive", loginSession, amr: how.amr, mfaTransactionId: how.mfaTransactionId });
    if (!(step instanceof Response)) return deniedByAction(c, loginSession.request, client, user, { ok: false, description: step.refused, effects: null });
    return step;
  }
  if (actions.redirect) {
    // The login session stays pending (or awaiting MFA) until /continue; no browser session exists yet.
    const login = {
      flow: "interactive" as const,
      client_id: client.client_id,
      user_id: user.user_id,
      login_session_id: loginSession.id,
      ...(how.amr ? { amr: how.amr } : {}),
      ...(how.mfaTransactionId ? { mfa_transaction_id: how.mfaTransactionId } : {}),
    };
    return suspendForRedirect(c, login, actions.redirect, Date.parse(loginSession.expires_at));
  }
  const grant = {
    ...grantOf(loginSession.request, Math.floor((session.input.authenticated_at ?? now()) / 1000)),
    ...(how.amr ? { amr: how.amr } : {}),
    ...(actions.custom_claims ? { custom_claims: actions.custom_claims } : {}),
    ...(actions.access_scope ? { access_scope: actions.access_scope } : {}),
  };
  const code = needsConsent ? undefined : await prepareCode(c, loginSession.request, client, user, session.input.id, grant);
  const stub = tenantObject(c.env, c.var.tenant.id);
  const audit = auditContext(c, { actor: { type: "user", id: user.user_id, email: user.email, client_id: client.client_id } });
  const completion: LoginCompletion = {
    login_session_id: loginSession.id,
    // A sealed login session (issue 31) is stored by its completion, in the same commit.
    ...withFresh(loginSession),
    session: session.input,
    code: code?.record ?? null,
    ...(hasEffects(actions.effects) ? { actions: actions.effects } : {}),
  };
  const completed = how.mfaTransactionId
    ? await stub.mfa(audit).completeLogin(how.mfaTransactionId, completion, how.amr ?? [])
    : how.amr
      ? await stub.mfa(audit).completeWithAmr(completion, how.amr)
      : await stub.completeLogin(completion, audit);
  if (!completed) return null;
  // Before the answer is built: headers set after a Response exists do not reach it.
  if (how.mfaTransactionId) clearMfaCookie(c);
  setSessionCookie(c, session);
  if (needsConsent) return redirectToConsent(c, loginSession.request);
  return answer(c, loginSession.request, client, user, session.input.id, grant, code?.code);
}

/**
 * Finishes an interactive login whose post-login actions were suspended by a redirect (issue 32): the same
 * end as {@link finishLogin} after its gates, with the pipeline resumed at the redirecting action.
 */
export async function resumeInteractiveLogin(
  c: AppContext,
  loginSession: LoginSession,
  client: ClientRecord,
  user: UserRecord,
  how: { mfaTransactionId?: string; amr?: string[]; resume: ResumedDispatch },
): Promise<Response | null> {
  return completeInteractive(c, loginSession, client, user, how);
}

/** Completes a cross-origin login at /authorize: redeems the ticket, starts the session, answers. */
export async function finishTicketLogin(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  ticket: string,
): Promise<Response | null> {
  const session = await prepareSession("", client.client_id, c.var.tenant.issuer, (await sessionLifetimes(c)).absoluteMs);
  const { user_id: _pending, ...input } = session.input;
  // The actor is known only once the ticket is redeemed: the client acts, the event names the user.
  const user = await tenantObject(c.env, c.var.tenant.id)
    .logins(auditContext(c, { actor: { type: "anonymous", id: null, client_id: client.client_id } }))
    .redeemTicket(await hashSecret(ticket), client.client_id, input);
  if (!user) return null;
  setSessionCookie(c, session);
  return issueAuthorizationResponse(c, request, client, user, input.id, nowSeconds());
}
