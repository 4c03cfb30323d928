import { nowSeconds } from "../../../shared/clock";
import { jwtVerify } from "jose";
import { randomToken } from "../../../shared/crypto/random";
import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { isMfaRequired } from "../../login/mfa/policy";
import { jwksVerifier } from "../../tenant/keys";
import { signJwt } from "../../tenant/signing";
import { tenantObject } from "../../tenant/stubs";
import type { GrantContext } from "./context";
import { invalidGrant } from "./context";
import { grantableUserScopes } from "../tokens/user-scopes";
import { organizationClaims, permissionsClaim } from "../tokens/user-tokens";
import { switchOrganization } from "./organization";

/** The organization the new token is in: the one switched to, else the subject token's (issue 11). */
const organizationOf = (switched: Record<string, string> | null, subject: Record<string, unknown>) =>
  switched?.org_id ?? (typeof subject.org_id === "string" ? subject.org_id : null);

export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/**
 * RFC 8693 token exchange, limited to what SPEC §4.1 allows: a self-issued access token (signed by this
 * tenant, issued to this same client) exchanged for one with fewer scopes. The new token never outlives the
 * subject token; `organization` switches a user's token to another organization the user belongs to.
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
    // Issue 25 finding 6: under the tenant's MFA policy a user's token is exchanged only when the login it
    // came from passed MFA (its session's amr, as an SSO reuse is checked), so a token minted before the
    // policy, or by a path that skipped it, cannot be turned into a fresh one.
    if (isMfaRequired(ctx.config)) {
      const amr = typeof subject.sid === "string" ? await tenantObject(c.env, tenant.id).mfa().sessionAmr(subject.sid) : ([] as string[]);
      if (!amr.includes("mfa")) throw invalidGrant(client, "subject_token's login did not pass multifactor authentication");
    }
  }
  const held = typeof subject.scope === "string" ? subject.scope.split(" ").filter(Boolean) : [];
  const requested = params.scope ? params.scope.split(" ").filter(Boolean) : held;
  const extra = requested.filter((s) => !held.includes(s));
  if (extra.length) throw new OAuthError("invalid_scope", `Scopes not held by the subject token: ${extra.join(" ")}`);
  if (params.audience && params.audience !== subject.aud && !(Array.isArray(subject.aud) && subject.aud.includes(params.audience))) {
    throw new OAuthError("invalid_request", "audience must be one of the subject token's audiences");
  }
  const audience = params.audience ?? subject.aud;
  // SPEC §4.1: switching the organization of a user's token needs the user's membership (issue 11).
  let orgClaims: Record<string, string> | null = null;
  if (params.organization) {
    if (subject.gty === "client-credentials" || typeof subject.sub !== "string") {
      throw new OAuthError("invalid_request", "organization can be switched only for a user's access token");
    }
    const org = await switchOrganization(ctx, client, params.organization, subject.sub);
    orgClaims = organizationClaims({ organization: org.id, organization_name: org.name }, ctx.config);
  }
  let scopes = requested;
  let permissions: string[] | undefined;
  if (subject.gty !== "client-credentials") {
    // A user's token is held to the user-facing rules for every API it names (issue 6): the system API
    // releases only current-user scopes, whatever an older or crafted subject token carried; an RBAC API
    // only the permissions the user holds now (read once, only when such an API is named).
    for (const api of ctx.config.resourceServers.filter((r) => [audience].flat().includes(r.identifier))) {
      const held = api.enforce_policies && !api.is_system && typeof subject.sub === "string"
        ? await tenantObject(c.env, tenant.id).userAuthorization().permissionNames(subject.sub, api.identifier, organizationOf(orgClaims, subject))
        : [];
      scopes = grantableUserScopes(scopes, api, held);
      permissions ??= permissionsClaim(api, held);
    }
  }
  const now = nowSeconds();
  const exp = subject.exp as number;
  const signer = await ctx.signer();
  const scope = scopes.join(" ");
  // The subject's `permissions` claim is never copied: it is recomputed above for the user, or absent. A
  // switch of organization replaces org_id / org_name.
  const { iat: _iat, exp: _exp, jti: _jti, nbf: _nbf, permissions: _held, ...subjectClaims } = subject;
  const { org_id: _org, org_name: _name, ...unscoped } = subjectClaims;
  const kept = orgClaims ? { ...unscoped, ...orgClaims } : subjectClaims;
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
      // RFC 9449: a proof binds the new token to its key; a bound subject token keeps its binding otherwise.
      ...(ctx.dpopJkt ? { cnf: { jkt: ctx.dpopJkt } } : {}),
    },
    signer.key,
    signer.kid,
    signer.alg,
    "at+jwt",
  );
  return {
    access_token: accessToken,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: ctx.dpopJkt || kept.cnf ? ("DPoP" as const) : ("Bearer" as const),
    expires_in: Math.max(exp - now, 0),
    scope,
  };
}
