import { nowSeconds } from "../../../shared/clock";
import { randomToken } from "../../../shared/crypto/random";
import type { ClientRecord, CodeGrant, TenantConfig, UserRecord } from "../../../shared/types";
import type { TenantContext } from "../../routing/resolve-tenant";
import type { Signer } from "../../tenant/keys";
import { signJwt } from "../../tenant/signing";
import { halfHash, mergeClaims } from "./claims";
import { grantableUserScopes } from "./user-scopes";

/** ID token lifetime (the reference platform's default is 10 hours). */
export const ID_TOKEN_TTL_S = 36_000;
/** Access token lifetime when the audience is only /userinfo. */
export const USERINFO_TOKEN_TTL_S = 86_400;


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

export interface IssuedUserTokens {
  access_token?: string;
  id_token?: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
}

/** ID-token algorithms a client may choose (`jwt_configuration.alg`), as discovery lists them. */
export const ID_TOKEN_ALGS = ["RS256", "PS256"] as const;

/** The client's ID-token algorithm: PS256 when it asks for it, RS256 otherwise (the default). */
export function idTokenAlg(client: ClientRecord): string {
  const alg = (client.extra.jwt_configuration as { alg?: unknown } | undefined)?.alg;
  return alg === "PS256" ? "PS256" : "RS256";
}

export interface UserTokenInput {
  tenant: TenantContext;
  config: TenantConfig;
  /** The RS256 key (ID tokens unless the client chose PS256; access tokens unless the API chose otherwise). */
  signer: Signer;
  /** The key for an API's `signing_alg`, for access tokens to that API. */
  signerFor: (alg: string) => Promise<Signer>;
  client: ClientRecord;
  user: UserRecord;
  grant: CodeGrant;
  sessionId: string | null;
  withAccessToken: boolean;
  withIdToken: boolean;
  /** For hybrid responses: the code to bind with c_hash. */
  code?: string;
  /** The access token's jti when the caller fixed it beforehand (code redemption records it for replay). */
  accessJti?: string;
}

/**
 * Access and ID tokens for a user (OIDC Core §2, §3). Scopes are the OIDC scopes asked for plus what the
 * audience's API may release to a user (grantableUserScopes: never management scopes beyond the
 * current-user family); anything else is dropped (denied by default). Computed claims always win.
 */
export async function issueUserTokens(input: UserTokenInput, now = nowSeconds()): Promise<IssuedUserTokens> {
  const { tenant, config, signer, client, user, grant } = input;
  const api = grant.audience ? config.resourceServers.find((r) => r.identifier === grant.audience) : undefined;
  // No roles exist yet, so an RBAC API releases nothing beyond OIDC scopes (the users issue adds them).
  const scopes = grantableUserScopes(grant.scope.split(" ").filter(Boolean), api, []);
  const scope = scopes.join(" ");
  const expiresIn = api?.token_lifetime ?? USERINFO_TOKEN_TTL_S;
  const common = { iss: tenant.issuer, sub: user.user_id, iat: now };
  const result: IssuedUserTokens = { token_type: "Bearer", expires_in: expiresIn, scope };

  if (input.withAccessToken) {
    const audience = api ? [api.identifier, userinfoAudience(tenant)] : userinfoAudience(tenant);
    const { claims } = mergeClaims({
      ...common,
      aud: audience,
      exp: now + expiresIn,
      jti: input.accessJti ?? randomToken(16),
      scope,
      azp: client.client_id,
      tenant_id: tenant.id,
      ...(input.sessionId ? { sid: input.sessionId } : {}),
      ...(grant.organization ? { org_id: grant.organization } : {}),
    });
    const accessSigner = api && api.signing_alg !== signer.alg ? await input.signerFor(api.signing_alg) : signer;
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
      ...(grant.organization ? { org_id: grant.organization } : {}),
      ...(result.access_token ? { at_hash: await halfHash(result.access_token) } : {}),
      ...(input.code ? { c_hash: await halfHash(input.code) } : {}),
    };
    const { claims } = mergeClaims(computed, profileClaims(user, scopes));
    const idAlg = idTokenAlg(client);
    const idSigner = idAlg === signer.alg ? signer : await input.signerFor(idAlg);
    result.id_token = await signJwt(claims, idSigner.key, idSigner.kid, idSigner.alg);
  }
  return result;
}
