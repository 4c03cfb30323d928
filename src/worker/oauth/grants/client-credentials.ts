import { requiresDpop } from "../../../shared/schemas/resource-servers";
import { dpopRequired } from "../dpop/required";
import { nowSeconds } from "../../../shared/clock";
import { randomToken } from "../../../shared/crypto/random";
import { OAuthError } from "../../../shared/errors";
import type { TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { TenantContext } from "../../routing/resolve-tenant";
import type { SignerFor } from "../../tenant/keys";
import { signJwt } from "../../tenant/signing";
import { withCustomClaims } from "../tokens/claims";

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  scope?: string;
  id_token?: string;
  refresh_token?: string;
}

/**
 * `client_credentials` (RFC 6749 §4.4): an access token for the requested audience, carrying only scopes
 * granted to this client for that audience (denied by default: no grant, no token).
 */
export async function clientCredentialsGrant(
  params: Record<string, string>,
  client: ClientRecord,
  config: TenantConfig,
  tenant: TenantContext,
  signerFor: SignerFor,
  now = nowSeconds(),
  /** Credentials-exchange actions (SPEC §6.1, inline): custom claims for the token, or a refusal thrown. */
  customize?: (exchange: { audience: string; scope: string }) => Promise<Record<string, unknown>>,
  /** RFC 9449 §6: the DPoP key the token is bound to (`cnf.jkt`). */
  dpopJkt?: string,
): Promise<TokenResponse> {
  if (client.token_endpoint_auth_method === "none") {
    throw new OAuthError("unauthorized_client", "Public clients cannot use the client_credentials grant");
  }
  const audience = params.audience ?? (config.settings.default_audience as string | undefined);
  if (!audience) {
    throw new OAuthError("access_denied", "No audience parameter was provided, and no default audience has been configured");
  }
  const api = config.resourceServers.find((r) => r.identifier === audience);
  if (!api) throw new OAuthError("access_denied", `Service not found: ${audience}`);
  if (requiresDpop(api) && !dpopJkt) throw dpopRequired(audience);
  const grant = config.clientGrants.find((g) => g.client_id === client.client_id && g.audience === audience);
  if (!grant) {
    throw new OAuthError(
      "access_denied",
      `Client is not authorized to access "${audience}". You need to create a "client-grant" associated to this API.`,
    );
  }
  // Organization-bound client credentials (an `org_id` in the token) are not issued here. A grant whose
  // organization_usage is `require` must never yield a token without one, and a request naming an
  // organization is refused rather than answered with a token that does not carry it.
  if (grant.organization_usage === "require") {
    throw new OAuthError("access_denied", `The client grant for "${audience}" requires an organization (organization_usage: require), and this server issues no organization-bound client credentials`);
  }
  if (params.organization) throw new OAuthError("invalid_request", "The organization parameter is not supported with client_credentials");
  const requested = params.scope?.split(" ").filter(Boolean);
  if (requested) {
    const missing = requested.filter((s) => !grant.scope.includes(s));
    if (missing.length) throw new OAuthError("access_denied", `Client has not been granted scopes: ${missing.join(", ")}`);
  }
  const scope = (requested ?? grant.scope).join(" ");
  const expiresIn = api.token_lifetime;
  // The API's signing_alg chooses the key (SPEC §4.2; the ring holds a key of every asymmetric algorithm in
  // use, and an HS256 API signs with its own secret).
  const signer = await signerFor(api.signing_alg, api.identifier);
  const custom = customize ? await customize({ audience, scope }) : {};
  const accessToken = await signJwt(
    withCustomClaims({
      iss: tenant.issuer,
      sub: `${client.client_id}@clients`,
      aud: audience,
      iat: now,
      exp: now + expiresIn,
      jti: randomToken(16),
      scope,
      gty: "client-credentials",
      azp: client.client_id,
      tenant_id: tenant.id,
      ...(dpopJkt ? { cnf: { jkt: dpopJkt } } : {}),
    }, custom),
    signer.key,
    signer.kid,
    signer.alg,
    "at+jwt",
  );
  return { access_token: accessToken, token_type: dpopJkt ? "DPoP" : "Bearer", expires_in: expiresIn, scope };
}
