import { now, nowSeconds } from "../../../shared/clock";
import { randomToken } from "../../../shared/crypto/random";
import type {
  AuthorizeRequest,
  ClientRecord,
  CodeGrant,
  LoginSession,
  NewAuthorizationCode,
  UserRecord,
} from "../../../shared/types";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { hashSecret, prepareSession, setSessionCookie } from "../../login/session";
import { tenantConfig } from "../../tenant/config-cache";
import { activeSigner, signerResolver } from "../../tenant/keys";
import { tenantObject } from "../../tenant/stubs";
import { samlLoginResponse } from "../../samlp/respond";
import { issueUserTokens } from "../tokens/user-tokens";
import { respondToClient } from "./respond";

/** Authorization codes live this long (RFC 6749 §4.1.2: short, at most 10 minutes). */
export const CODE_TTL_MS = 5 * 60 * 1000;

/** A code ready to store: the plaintext for the client, the hashed record for the object. */
interface PreparedCode {
  code: string;
  record: NewAuthorizationCode;
}

const grantOf = (request: AuthorizeRequest, authTimeS: number): CodeGrant => ({
  scope: request.scope,
  audience: request.audience,
  nonce: request.nonce,
  auth_time: authTimeS,
  organization: request.organization,
});

/** The authorization code the response type asks for, or undefined when it asks for none. */
async function prepareCode(
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  grant: CodeGrant,
): Promise<PreparedCode | undefined> {
  if (!request.response_type.split(" ").includes("code")) return undefined;
  const code = randomToken(32);
  const record: NewAuthorizationCode = {
    code_hash: await hashSecret(code),
    client_id: client.client_id,
    user_id: user.user_id,
    session_id: sessionId,
    redirect_uri: request.redirect_uri,
    grant,
    code_challenge: request.code_challenge ?? null,
    code_challenge_method: request.code_challenge ? (request.code_challenge_method ?? "plain") : null,
    expires_at: now() + CODE_TTL_MS,
  };
  return { code, record };
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
    const permissions =
      types.has("token") && api?.enforce_policies && !api.is_system ? await stub.userAuthorization().permissionNames(user.user_id, api.identifier) : [];
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
    });
    if (tokens.access_token) {
      Object.assign(params, { access_token: tokens.access_token, token_type: "Bearer", expires_in: String(tokens.expires_in), scope: tokens.scope });
    }
    params.id_token = tokens.id_token;
  }
  return respondToClient(c, request.redirect_uri, request.response_mode, params);
}

/**
 * Answers an authorization request for a user with a live session (SSO): issues what the response_type
 * asks for (code, token, id_token, or a hybrid of them) and delivers it in the response mode.
 */
export async function issueAuthorizationResponse(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  authTimeS: number,
): Promise<Response> {
  const grant = grantOf(request, authTimeS);
  const code = await prepareCode(request, client, user, sessionId, grant);
  if (code) await tenantObject(c.env, c.var.tenant.id).codes().create(code.record);
  return answer(c, request, client, user, sessionId, grant, code?.code);
}

/**
 * Completes an interactive login (password, signup): one RPC commits the completed login session, the new
 * browser session, the login counters and the code together (`logins().complete`), then the client gets
 * its answer. Returns null when the login session was already completed or has expired (double submit,
 * replay); nothing is written then.
 */
export async function finishLogin(
  c: AppContext,
  loginSession: LoginSession,
  client: ClientRecord,
  user: UserRecord,
  /** Authentication methods references when the first factor says more than a password (a passkey). */
  amr?: string[],
): Promise<Response | null> {
  const session = await prepareSession(user.user_id, client.client_id, c.var.tenant.issuer);
  const grant = { ...grantOf(loginSession.request, Math.floor((session.input.authenticated_at ?? now()) / 1000)), ...(amr ? { amr } : {}) };
  const code = await prepareCode(loginSession.request, client, user, session.input.id, grant);
  const stub = tenantObject(c.env, c.var.tenant.id);
  const audit = auditContext(c, { actor: { type: "user", id: user.user_id, email: user.email, client_id: client.client_id } });
  const completion = { login_session_id: loginSession.id, session: session.input, code: code?.record ?? null };
  const completed = amr ? await stub.mfa(audit).completeWithAmr(completion, amr) : await stub.logins(audit).complete(completion);
  if (!completed) return null;
  setSessionCookie(c, session);
  return answer(c, loginSession.request, client, user, session.input.id, grant, code?.code);
}

/**
 * Completes a login that waited in `awaiting_mfa` (issue 12): one RPC completes the MFA transaction and
 * the login session and starts the browser session with its amr; the ID token carries the same amr.
 * Null when either was already completed or has expired (nothing written).
 */
export async function finishMfaLogin(
  c: AppContext,
  mfaTransactionId: string,
  loginSession: LoginSession,
  client: ClientRecord,
  user: UserRecord,
  amr: string[],
): Promise<Response | null> {
  const session = await prepareSession(user.user_id, client.client_id, c.var.tenant.issuer);
  const grant = { ...grantOf(loginSession.request, Math.floor((session.input.authenticated_at ?? now()) / 1000)), amr };
  const code = await prepareCode(loginSession.request, client, user, session.input.id, grant);
  const completed = await tenantObject(c.env, c.var.tenant.id)
    .mfa(auditContext(c, { actor: { type: "user", id: user.user_id, email: user.email, client_id: client.client_id } }))
    .completeLogin(mfaTransactionId, { login_session_id: loginSession.id, session: session.input, code: code?.record ?? null }, amr);
  if (!completed) return null;
  setSessionCookie(c, session);
  return answer(c, loginSession.request, client, user, session.input.id, grant, code?.code);
}

/** Completes a cross-origin login at /authorize: redeems the ticket, starts the session, answers. */
export async function finishTicketLogin(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  ticket: string,
): Promise<Response | null> {
  const session = await prepareSession("", client.client_id, c.var.tenant.issuer);
  const { user_id: _pending, ...input } = session.input;
  // The actor is known only once the ticket is redeemed: the client acts, the event names the user.
  const user = await tenantObject(c.env, c.var.tenant.id)
    .logins(auditContext(c, { actor: { type: "anonymous", id: null, client_id: client.client_id } }))
    .redeemTicket(await hashSecret(ticket), client.client_id, input);
  if (!user) return null;
  setSessionCookie(c, session);
  return issueAuthorizationResponse(c, request, client, user, input.id, nowSeconds());
}
