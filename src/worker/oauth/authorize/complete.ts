import { randomToken } from "../../../shared/crypto/random";
import type { AuthorizeRequest, ClientRecord, LoginSession, UserRecord } from "../../../shared/types";
import type { AppContext } from "../../context";
import { hashSecret, startSession } from "../../login/session";
import { tenantConfig } from "../../tenant/config-cache";
import { activeSigner } from "../../tenant/keys";
import { tenantObject } from "../../tenant/stubs";
import { issueUserTokens } from "../tokens/user-tokens";
import { respondToClient } from "./respond";

/** Authorization codes live this long (RFC 6749 §4.1.2: short, at most 10 minutes). */
export const CODE_TTL_MS = 5 * 60 * 1000;

/**
 * Answers an authorization request for an authenticated user: issues what the response_type asks for
 * (code, token, id_token, or a hybrid of them) and delivers it in the response mode.
 */
export async function issueAuthorizationResponse(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  authTimeS: number,
): Promise<Response> {
  const tenant = c.var.tenant;
  const types = new Set(request.response_type.split(" "));
  const grant = {
    scope: request.scope,
    audience: request.audience,
    nonce: request.nonce,
    auth_time: authTimeS,
    organization: request.organization,
  };
  const params: Record<string, string | undefined> = { state: request.state };
  let code: string | undefined;
  if (types.has("code")) {
    code = randomToken(32);
    await tenantObject(c.env, tenant.id).createAuthorizationCode({
      code_hash: await hashSecret(code),
      client_id: client.client_id,
      user_id: user.user_id,
      session_id: sessionId,
      redirect_uri: request.redirect_uri,
      grant,
      code_challenge: request.code_challenge ?? null,
      code_challenge_method: request.code_challenge ? (request.code_challenge_method ?? "plain") : null,
      expires_at: Date.now() + CODE_TTL_MS,
    });
    params.code = code;
  }
  if (types.has("token") || types.has("id_token")) {
    const config = await tenantConfig(tenant.id, tenantObject(c.env, tenant.id), c.var.settings);
    const tokens = await issueUserTokens({
      tenant,
      config,
      signer: await activeSigner(c.env, c.var.settings, tenant.id),
      signerFor: (alg) => activeSigner(c.env, c.var.settings, tenant.id, alg),
      client,
      user,
      grant,
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
 * Completes an interactive login (password, signup, login ticket): the login session is marked completed
 * exactly once, a browser session starts (or the existing one is reused), and the client gets its answer.
 * Returns null when the login session was already completed or has expired (double submit, replay).
 */
export async function finishLogin(
  c: AppContext,
  loginSession: LoginSession,
  client: ClientRecord,
  user: UserRecord,
): Promise<Response | null> {
  const tenant = tenantObject(c.env, c.var.tenant.id);
  if (!(await tenant.completeLoginSession(loginSession.id, user.user_id))) return null;
  const session = await startSession(c, user.user_id, client.client_id);
  await tenant.recordLogin(user.user_id);
  return issueAuthorizationResponse(
    c,
    loginSession.request,
    client,
    user,
    session.id,
    Math.floor(Date.parse(session.authenticated_at) / 1000),
  );
}
