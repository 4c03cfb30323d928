import { nowSeconds } from "../../../shared/clock";
import { jwtVerify } from "jose";
import { randomToken } from "../../../shared/crypto/random";
import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/types";
import { jwksVerifier } from "../../tenant/keys";
import { signJwt } from "../../tenant/signing";
import { tenantObject } from "../../tenant/stubs";
import type { GrantContext } from "./context";
import { invalidGrant } from "./context";
import { grantableUserScopes } from "../tokens/user-scopes";
import { permissionsClaim } from "../tokens/user-tokens";

export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/**
 * RFC 8693 token exchange, limited to what SPEC §4.1 allows: a self-issued access token (signed by this
 * tenant, issued to this same client) exchanged for one with fewer scopes. The new token never outlives the
 * subject token; switching organization needs organizations, which do not exist yet (refused).
 */
export async function tokenExchangeGrant(ctx: GrantContext, client: ClientRecord) {
  const { params, c } = ctx;
  if (!params.subject_token) throw new OAuthError("invalid_request", "Missing required parameter: subject_token");
  if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
    throw new OAuthError("invalid_request", `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  if (params.actor_token) throw new OAuthError("invalid_request", "actor_token is not supported");
  if (params.requested_token_type && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
    throw new OAuthError("invalid_request", `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  if (params.organization) throw new OAuthError("invalid_request", `Organization not found: ${params.organization}`);
  const tenant = c.var.tenant;
  const { keys, algorithms } = await jwksVerifier(c.env, c.var.settings, tenant.id);
  let subject: Awaited<ReturnType<typeof jwtVerify>>["payload"];
  try {
    ({ payload: subject } = await jwtVerify(params.subject_token, keys, { issuer: tenant.issuer, algorithms }));
  } catch {
    throw invalidGrant(client, "subject_token is invalid or expired");
  }
  if (subject.azp !== client.client_id || subject.tenant_id !== tenant.id) {
    throw invalidGrant(client, "subject_token was not issued to this client");
  }
  if (typeof subject.jti === "string" && (await tenantObject(c.env, tenant.id).revocations().isRevoked(subject.jti))) {
    throw invalidGrant(client, "subject_token has been revoked");
  }
  if (subject.gty !== "client-credentials" && typeof subject.sub === "string") {
    // SPEC §7: a grant acting for a blocked (or deleted) user is refused.
    const user = await tenantObject(c.env, tenant.id).users().get(subject.sub);
    if (!user) throw invalidGrant(client, "subject_token's user no longer exists");
    if (user.blocked) throw invalidGrant(client, "user is blocked");
  }
  const held = typeof subject.scope === "string" ? subject.scope.split(" ").filter(Boolean) : [];
  const requested = params.scope ? params.scope.split(" ").filter(Boolean) : held;
  const extra = requested.filter((s) => !held.includes(s));
  if (extra.length) throw new OAuthError("invalid_scope", `Scopes not held by the subject token: ${extra.join(" ")}`);
  if (params.audience && params.audience !== subject.aud && !(Array.isArray(subject.aud) && subject.aud.includes(params.audience))) {
    throw new OAuthError("invalid_request", "audience must be one of the subject token's audiences");
  }
  const audience = params.audience ?? subject.aud;
  let scopes = requested;
  let permissions: string[] | undefined;
  if (subject.gty !== "client-credentials") {
    // A user's token is held to the user-facing rules for every API it names (issue 6): the system API
    // releases only current-user scopes, whatever an older or crafted subject token carried; an RBAC API
    // only the permissions the user holds now (read once, only when such an API is named).
    for (const api of ctx.config.resourceServers.filter((r) => [audience].flat().includes(r.identifier))) {
      const held = api.enforce_policies && !api.is_system && typeof subject.sub === "string"
        ? await tenantObject(c.env, tenant.id).userAuthorization().permissionNames(subject.sub, api.identifier)
        : [];
      scopes = grantableUserScopes(scopes, api, held);
      permissions ??= permissionsClaim(api, held);
    }
  }
  const now = nowSeconds();
  const exp = subject.exp as number;
  const signer = await ctx.signer();
  const scope = scopes.join(" ");
  // The subject's `permissions` claim is never copied: it is recomputed above for the user, or absent.
  const { iat: _iat, exp: _exp, jti: _jti, nbf: _nbf, permissions: _held, ...kept } = subject;
  const accessToken = await signJwt(
    {
      ...kept,
      aud: audience,
      scope,
      ...(permissions ? { permissions } : {}),
      iat: now,
      exp,
      jti: randomToken(16),
      azp: client.client_id,
      tenant_id: tenant.id,
    },
    signer.key,
    signer.kid,
    signer.alg,
    "at+jwt",
  );
  return {
    access_token: accessToken,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: "Bearer" as const,
    expires_in: Math.max(exp - now, 0),
    scope,
  };
}
