import { dpopRequired } from "../dpop/required";
import { nowSeconds } from "../../../shared/clock";
import { randomToken } from "../../../shared/crypto/random";
import { CONSOLE_CLIENT_ID } from "../../../shared/console";
import { ORGANIZATION_TENANT_SCOPES } from "../../../shared/scopes";
import type { CodeGrant, TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { type ResourceServerRecord, requiresDpop } from "../../../shared/schemas/resource-servers";
import type { UserRecord } from "../../../shared/schemas/users";
import type { TenantContext } from "../../routing/resolve-tenant";
import type { Signer, SignerFor } from "../../tenant/keys";
import { signJwt } from "../../tenant/signing";
import { halfHash, withCustomClaims } from "./claims";
import { grantableUserScopes } from "./user-scopes";

/** ID token lifetime (the reference platform's default is 10 hours). */
export const ID_TOKEN_TTL_S = 36_000;
/** Access token lifetime when the audience is only /userinfo. */
export const USERINFO_TOKEN_TTL_S = 86_400;
/**
 * Access token lifetime, at most, of an operator's console token (issue 30): the console session's absolute
 * lifetime. The token never leaves the server, its scopes are read again at each request, and logout revokes it.
 */
export const CONSOLE_OPERATOR_TOKEN_TTL_S = 12 * 3_600;
/**
 * Access token lifetime, at most, of a control-plane user's token carrying tenants scopes through its
 * organization (issue 25 finding 5): minutes, whatever the management API's `token_lifetime`; the user
 * renews it by logging in again, silently while its session lives. Management auth also rechecks the
 * membership at each request, so this bounds what a stolen token is worth, not how long a removal takes.
 * @default 600
 */
export const ORGANIZATION_TENANT_TOKEN_TTL_S = 600;


/** The audience of an access token that only serves /userinfo. */
export const userinfoAudience = (tenant: TenantContext) => `${tenant.issuer.replace(/\/?$/, "/")}userinfo`;

/** Profile claims released for the granted scopes (OIDC Core §5.4). */
export function profileClaims(user: UserRecord, scopes: string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scopes.includes("profile")) {
    Object.assign(claims, { name: user.name, nickname: user.nickname, picture: user.picture, updated_at: user.updated_at });
  }
  if (scopes.includes("email")) Object.assign(claims, { email: user.email, email_verified: user.email_verified });
  return Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== null && v !== undefined));
}

/**
 * `org_id` of a login in an organization, and `org_name` too when the tenant allows organization names
 * (its setting `allow_organization_name_in_authentication_api`, the reference platform's).
 */
export function organizationClaims(grant: Pick<CodeGrant, "organization" | "organization_name">, config: TenantConfig): Record<string, string> {
  if (!grant.organization) return {};
  const withName = grant.organization_name && config.settings.allow_organization_name_in_authentication_api === true;
  return { org_id: grant.organization, ...(withName ? { org_name: grant.organization_name as string } : {}) };
}

export interface IssuedUserTokens {
  access_token?: string;
  id_token?: string;
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  scope: string;
}

/** ID-token algorithms a client may choose (`jwt_configuration.alg`), as discovery lists them. */
export const ID_TOKEN_ALGS = ["HS256", "RS256", "PS256"] as const;

/**
 * The client's ID-token algorithm: PS256 or HS256 (signed with the client's own secret, OIDC Core §10.1)
 * when it asks for it, RS256 otherwise (the default). A client without a secret cannot verify HS256, so
 * its ID tokens stay RS256 whatever it asks.
 */
export function idTokenAlg(client: ClientRecord): string {
  const alg = (client.extra.jwt_configuration as { alg?: unknown } | undefined)?.alg;
  if (alg === "HS256") return client.client_secret_enc ? "HS256" : "RS256";
  return alg === "PS256" ? "PS256" : "RS256";
}

export interface UserTokenInput {
  tenant: TenantContext;
  config: TenantConfig;
  /** The RS256 key (ID tokens unless the client chose PS256; access tokens unless the API chose otherwise). */
  signer: Signer;
  /** The key for an API's `signing_alg` (its own secret for HS256), for access tokens to that API. */
  signerFor: SignerFor;
  client: ClientRecord;
  user: UserRecord;
  grant: CodeGrant;
  /**
   * The user's permissions on the grant's audience, directly and through roles, read in the RPC the grant
   * already makes for its user (empty when there is no audience). Used only when the API enforces RBAC.
   */
  permissions: readonly string[];
  sessionId: string | null;
  withAccessToken: boolean;
  withIdToken: boolean;
  /** For hybrid responses: the code to bind with c_hash. */
  code?: string;
  /** The access token's jti when the caller fixed it beforehand (code redemption records it for replay). */
  accessJti?: string;
  /**
   * The deployment's control-plane tenant id: a login there through an organization may carry the tenants
   * scopes the user holds in it (grantableUserScopes; issue 15 point 3). Absent: never.
   */
  controlPlaneTenantId?: string;
  /** RFC 9449 §6: the DPoP key the access token is bound to (`cnf.jkt`), making it a DPoP token. */
  dpopJkt?: string;
}

/** Whether a grant is a login on the control plane through one of its (tenant) organizations, to its management API. */
export function isControlPlaneOrganizationGrant(
  tenantId: string,
  controlPlaneTenantId: string | undefined,
  api: ResourceServerRecord | undefined,
  organization: string | undefined | null,
): boolean {
  return Boolean(controlPlaneTenantId && tenantId === controlPlaneTenantId && api?.is_system && organization);
}

/**
 * Whether a grant is an operator's login to the admin console (issue 30): on the control plane, to its
 * management API, by the console's own (system) application, through no organization.
 */
export function isConsoleOperatorGrant(
  tenantId: string,
  controlPlaneTenantId: string | undefined,
  api: ResourceServerRecord | undefined,
  client: ClientRecord,
  organization: string | undefined | null,
): boolean {
  return Boolean(controlPlaneTenantId && tenantId === controlPlaneTenantId && api?.is_system && client.is_system && client.client_id === CONSOLE_CLIENT_ID && !organization);
}

/**
 * The `permissions` claim of the reference platform's RBAC: with `enforce_policies` on and the
 * `access_token_authz` dialect, every permission the user holds on the API (not only those asked for as
 * scopes). The system (management) API never carries one: users reach it only through current-user scopes.
 */
export function permissionsClaim(api: ResourceServerRecord | undefined, permissions: readonly string[]): string[] | undefined {
  if (!api || api.is_system || !api.enforce_policies || api.token_dialect !== "access_token_authz") return undefined;
  return [...new Set(permissions)].sort();
}

/**
 * Access and ID tokens for a user (OIDC Core §2, §3). Scopes are the OIDC scopes asked for plus what the
 * audience's API may release to a user (grantableUserScopes: never management scopes beyond the
 * current-user family; on an RBAC API only the user's permissions); anything else is dropped (denied by
 * default). Computed claims always win.
 */
export async function issueUserTokens(input: UserTokenInput, now = nowSeconds()): Promise<IssuedUserTokens> {
  const { tenant, config, signer, client, user, grant } = input;
  const api = grant.audience ? config.resourceServers.find((r) => r.identifier === grant.audience) : undefined;
  if (input.withAccessToken !== false && requiresDpop(api) && !input.dpopJkt) throw dpopRequired(api?.identifier as string);
  const controlPlaneOrganization = isControlPlaneOrganizationGrant(tenant.id, input.controlPlaneTenantId, api, grant.organization);
  const consoleOperator = isConsoleOperatorGrant(tenant.id, input.controlPlaneTenantId, api, client, grant.organization);
  const scopes = grantableUserScopes(grant.scope.split(" ").filter(Boolean), api, input.permissions, { controlPlaneOrganization, consoleOperator });
  const permissions = permissionsClaim(api, input.permissions);
  // api.accessToken.addScope/removeScope (issue 32): the access token's scope only (the ID token's claims
  // follow the scopes asked for); an action never adds scopes to a token for the management API.
  const changes = grant.access_scope;
  const added = api?.is_system ? [] : (changes?.add ?? []);
  const scope = [...new Set([...scopes, ...added])].filter((s) => !changes?.remove.includes(s)).join(" ");
  const carriesTenantScopes = controlPlaneOrganization && scopes.some((s) => ORGANIZATION_TENANT_SCOPES.includes(s));
  const lifetime = api?.token_lifetime ?? USERINFO_TOKEN_TTL_S;
  const cap = carriesTenantScopes ? ORGANIZATION_TENANT_TOKEN_TTL_S : consoleOperator ? CONSOLE_OPERATOR_TOKEN_TTL_S : lifetime;
  const expiresIn = Math.min(lifetime, cap);
  const common = { iss: tenant.issuer, sub: user.user_id, iat: now };
  const result: IssuedUserTokens = { token_type: input.dpopJkt && input.withAccessToken ? "DPoP" : "Bearer", expires_in: expiresIn, scope };

  if (input.withAccessToken) {
    // An HS256 token names only its API: /userinfo accepts asymmetric tokens only, since whoever holds an
    // API's secret could otherwise mint a token for any user.
    const symmetric = api?.signing_alg === "HS256";
    const audience = api ? (symmetric ? api.identifier : [api.identifier, userinfoAudience(tenant)]) : userinfoAudience(tenant);
    const claims = withCustomClaims({
      ...common,
      aud: audience,
      exp: now + expiresIn,
      jti: input.accessJti ?? randomToken(16),
      scope,
      ...(permissions ? { permissions } : {}),
      azp: client.client_id,
      tenant_id: tenant.id,
      ...(input.sessionId ? { sid: input.sessionId } : {}),
      ...organizationClaims(grant, config),
      ...(input.dpopJkt ? { cnf: { jkt: input.dpopJkt } } : {}),
    }, grant.custom_claims?.access_token);
    // The API's algorithm, else the tenant's default (GET/PATCH /tenants/settings, RS256 unless set).
    const accessAlg = api?.signing_alg ?? String(config.settings.default_signing_alg ?? signer.alg);
    const accessSigner = accessAlg !== signer.alg ? await input.signerFor(accessAlg, api?.identifier) : signer;
    result.access_token = await signJwt(claims, accessSigner.key, accessSigner.kid, accessSigner.alg, "at+jwt");
  }
  if (input.withIdToken && scopes.includes("openid")) {
    const computed: Record<string, unknown> = {
      ...common,
      aud: client.client_id,
      exp: now + ID_TOKEN_TTL_S,
      auth_time: grant.auth_time,
      ...(grant.amr?.length ? { amr: grant.amr } : {}),
      ...(grant.nonce !== undefined ? { nonce: grant.nonce } : {}),
      ...(input.sessionId ? { sid: input.sessionId } : {}),
      ...organizationClaims(grant, config),
      ...(result.access_token ? { at_hash: await halfHash(result.access_token) } : {}),
      ...(input.code ? { c_hash: await halfHash(input.code) } : {}),
    };
    const claims = withCustomClaims(computed, { ...profileClaims(user, scopes), ...grant.custom_claims?.id_token });
    const idAlg = idTokenAlg(client);
    const idSigner = idAlg === signer.alg ? signer : await input.signerFor(idAlg, client.client_id, "client");
    result.id_token = await signJwt(claims, idSigner.key, idSigner.kid, idSigner.alg);
  }
  return result;
}
