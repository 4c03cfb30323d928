import type { JWTPayload } from "jose";
import { now } from "../../../shared/clock";
import { sha256 } from "../../../shared/crypto/compare";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { toBase64Url } from "../../../shared/crypto/encoding";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomToken } from "../../../shared/crypto/random";
import { egressPolicyFrom } from "../../../shared/egress-policy";
import type { ConnectionRecord } from "../../../shared/schemas/connections";
import { normalizeEmail } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { finishLogin } from "../../oauth/authorize/complete";
import { refuseToClient } from "../../oauth/authorize/respond";
import { clientIn } from "../../tenant/config-cache";
import { tenantObject } from "../../tenant/stubs";
import { readLoginSession } from "../../tenant/login-state";
import { configOf } from "../connection";
import { clearCookie, readCookie, setSecureCookie } from "../cookies";
import { loginOrganization, brandedFor } from "../organization";
import { EXPIRED_LOGIN, sendMessage, shellFor } from "../render";
import { hashSecret } from "../session";
import { loadTransaction } from "../transaction";
import { OIDC_STRATEGY, loginOffer } from "./offer";
import { UpstreamError, discover, exchangeCode, userinfo, verifyIdToken } from "./oidc-upstream";

/**
 * Enterprise OpenID Connect connections (issue 29 point 0; strategy `oidc`, `type: back_channel`): the
 * browser goes to the upstream's authorization endpoint with a state, a nonce and a PKCE challenge bound to
 * the login transaction and to this browser (a cookie whose hash is stored with them); the upstream returns
 * to `{issuer}login/callback`, where the state is spent once, the code exchanged server-side, the ID token
 * verified with the upstream's keys, and the user (`oidc|<connection>|<sub>`) created or refreshed before
 * finishLogin. Upstream failures answer the application `access_denied` and log `f`; never a 5xx.
 */

/** The browser-binding cookie of one upstream round trip. */
const BINDING_COOKIE = "gh_oidc";
const CALLBACK_PATH = "/login/callback";
/** The upstream round trip must come back within this. @default 10 minutes */
const ROUND_TRIP_MS = 10 * 60 * 1000;
const PURPOSE = "oidc_login";

const NOT_OFFERED = { code: "CONNECTION_NOT_FOUND", text: "connection-not-offered", title: "Login unavailable", message: "This application does not offer this way of logging in." } as const;
const UNAVAILABLE = { code: "CONNECTION_UNAVAILABLE", title: "Login unavailable", message: "The identity provider of this connection cannot be reached. Try again later." } as const;
const BAD_STATE = { code: "INVALID_STATE", title: "Something went wrong", message: "This login response is invalid, was already used, or was started in another browser. Start the login again." } as const;

const stateSubject = async (state: string) => `oidc:${toBase64Url(await sha256(state))}`;
const redirectUriOf = (c: AppContext) => `${c.var.tenant.issuer.replace(/\/+$/, "")}${CALLBACK_PATH}`;

async function clientSecretOf(c: AppContext, connection: ConnectionRecord): Promise<string | null> {
  if (!connection.secrets_enc) return null;
  const secrets = JSON.parse(await (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(connection.secrets_enc, encryptionContext.connectionSecrets(connection.id))) as Record<string, unknown>;
  return typeof secrets.client_secret === "string" ? secrets.client_secret : null;
}

/** The scopes asked of the upstream: `openid` plus the connection's `scope` (the reference's name; `scopes` too). */
function scopesOf(connection: ConnectionRecord): string {
  const named = connection.options.scope ?? connection.options.scopes;
  const given = typeof named === "string" ? named.split(/[\s,]+/) : ["profile", "email"];
  return [...new Set(["openid", ...given.filter(Boolean)])].join(" ");
}

/** GET /u2/enterprise?state=&connection=<name>: to the upstream's authorization endpoint. */
export async function enterpriseStart(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c);
  if (t instanceof Response) return t;
  const connection = loginOffer(t).enterprise.find((x) => x.name === c.req.query("connection"));
  if (!connection || connection.strategy !== OIDC_STRATEGY || connection.options.type === "front_channel") return sendMessage(c, t.shell, NOT_OFFERED, 400);
  const clientId = typeof connection.options.client_id === "string" ? connection.options.client_id : "";
  let authorizationEndpoint: string;
  try {
    authorizationEndpoint = (await discover(connection, egressPolicyFrom(c.env))).authorization_endpoint;
  } catch (error) {
    console.warn("oidc connection discovery failed:", (error as Error).message);
    return sendMessage(c, t.shell, UNAVAILABLE, 400);
  }
  const state = randomToken(32);
  const nonce = randomToken(32);
  const verifier = randomToken(48);
  const binding = randomToken(32);
  await tenantObject(c.env, c.var.tenant.id)
    .createChallenge({
      id: `oidc_${randomToken(12)}`,
      purpose: PURPOSE,
      subject: await stateSubject(state),
      client_id: t.client.client_id,
      secret_hash: await hashSecret(binding),
      data: { login_session: t.loginSession.id, connection: connection.id, nonce, verifier },
      expires_at: now() + ROUND_TRIP_MS,
    });
  // SameSite=Lax: the upstream's redirect back is a cross-site top-level GET, which Lax cookies accompany.
  setSecureCookie(c, BINDING_COOKIE, binding, { sameSite: "Lax", path: CALLBACK_PATH, maxAgeS: ROUND_TRIP_MS / 1000 });
  const url = new URL(authorizationEndpoint);
  const hint = t.loginSession.request.login_hint;
  const params: Record<string, string> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUriOf(c),
    scope: scopesOf(connection),
    state,
    nonce,
    code_challenge: toBase64Url(await sha256(verifier)),
    code_challenge_method: "S256",
    ...(hint ? { login_hint: hint } : {}),
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return c.redirect(url.toString(), 302);
}

const text = (value: unknown, max = 255) => (typeof value === "string" && value ? value.slice(0, max) : null);

/** The reference platform's profile of an OpenID Connect user, from the verified claims (ID token first). */
function profileOf(connection: ConnectionRecord, claims: JWTPayload & Record<string, unknown>) {
  const email = text(claims.email) ? normalizeEmail(claims.email as string) : null;
  const picture = text(claims.picture, 2000);
  return {
    user_id: `oidc|${connection.name}|${claims.sub as string}`,
    connection: connection.name,
    email,
    email_verified: claims.email_verified === true || claims.email_verified === "true",
    name: text(claims.name) ?? email,
    given_name: text(claims.given_name),
    family_name: text(claims.family_name),
    nickname: text(claims.nickname) ?? text(claims.preferred_username) ?? (email ? (email.split("@")[0] as string) : null),
    picture: picture && /^https:\/\//i.test(picture) ? picture : null,
  };
}

/** GET /login/callback: the upstream's answer (RFC 6749 §4.1.2), spent once, then the login. */
export async function enterpriseCallback(c: AppContext): Promise<Response> {
  const config = await configOf(c);
  const binding = readCookie(c, BINDING_COOKIE) ?? "";
  const state = c.req.query("state") ?? "";
  const stub = tenantObject(c.env, c.var.tenant.id);
  const anonymous = auditContext(c, { actor: { type: "anonymous", id: null, client_id: null } });
  clearCookie(c, BINDING_COOKIE, CALLBACK_PATH);
  // One conditional update: the state exists, is unexpired and unspent, and this browser started it.
  const spent = state && binding ? await stub.challenges().consumeByHash(PURPOSE, await stateSubject(state), await hashSecret(binding)) : null;
  if (!spent) {
    await stub.enterprise(anonymous).recordFailure("Enterprise login callback with an invalid, spent or foreign state", null, null);
    return sendMessage(c, shellFor(c, config), BAD_STATE, 400);
  }
  const data = spent.data as { login_session: string; connection: string; nonce: string; verifier: string };
  const loginSession = await readLoginSession(c, data.login_session);
  const client = loginSession && clientIn(config, loginSession.client_id);
  const connection = config.connections.find((x) => x.id === data.connection && x.strategy === OIDC_STRATEGY);
  const organization = loginSession ? await loginOrganization(c, loginSession.request) : null;
  const shell = shellFor(c, brandedFor(config, organization), client ? client.name : undefined, loginSession?.request.ui_locales);
  if (loginSession?.state !== "pending" || !client) return sendMessage(c, shell, EXPIRED_LOGIN, 400);
  const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: client.client_id } });
  const fail = async (description: string, shown: string) => {
    await stub.enterprise(audit).recordFailure(description, client.client_id, connection?.name ?? null);
    return refuseToClient(c, loginSession.request, client, "access_denied", shown);
  };
  if (!connection) return fail("The connection was deleted during the login", "The connection is no longer available");

  const upstreamError = c.req.query("error");
  if (upstreamError) {
    const description = (c.req.query("error_description") ?? upstreamError).slice(0, 500);
    return fail(`The identity provider answered ${upstreamError.slice(0, 64)}: ${description}`, description);
  }
  const code = c.req.query("code");
  if (!code) return fail("The identity provider answered without a code", "The identity provider answered without a code");
  const egress = egressPolicyFrom(c.env);
  const clientId = typeof connection.options.client_id === "string" ? connection.options.client_id : "";
  let claims: JWTPayload & Record<string, unknown>;
  try {
    const clientSecret = await clientSecretOf(c, connection);
    if (!clientSecret) throw new UpstreamError("The connection has no client_secret");
    const discovery = await discover(connection, egress);
    const tokens = await exchangeCode(discovery, egress, { code, redirectUri: redirectUriOf(c), verifier: data.verifier, clientId, clientSecret });
    const verified = await verifyIdToken(connection, discovery, egress, tokens.id_token, { clientId, nonce: data.nonce });
    const extra = tokens.access_token ? await userinfo(discovery, egress, tokens.access_token, verified.sub as string) : {};
    claims = { ...extra, ...verified };
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    return fail(error.message, "The identity provider's answer could not be verified");
  }
  const resolved = await stub.enterprise(audit).upsert(profileOf(connection, claims), client.client_id);
  if (!resolved.ok) return fail("user is blocked", "user is blocked");
  const response = await finishLogin(c, loginSession, client, resolved.user);
  return response ?? sendMessage(c, shell, EXPIRED_LOGIN, 400);
}
