import type { AppContext } from "../context";
import { type PreparedBody, prepareBody, preparedJson } from "../http/prepared";
import { tenantCacheHeaders } from "../routing/resolve-tenant";
import { RESPONSE_MODES, RESPONSE_TYPES } from "./authorize/request";
import { REQUEST_OBJECT_ALGS } from "./authorize/request-object";
import { DPOP_ALGS } from "./dpop/proof";
import { grantsAvailableIn } from "./grants";
import { tenantConfig } from "../tenant/config-cache";
import { tenantConfigSource } from "../tenant/stubs";
import type { TenantConfig } from "../../shared/types";
import { OIDC_SCOPES } from "./tokens/user-scopes";
import { ID_TOKEN_ALGS } from "./tokens/user-tokens";

/** Client authentication methods the token endpoint implements (src/worker/oauth/client-auth.ts). */
export const TOKEN_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt", "client_secret_jwt", "none"];

/**
 * The tenant's `oidc_logout.rp_logout_end_session_endpoint_discovery` (the reference platform's setting,
 * on unless set to false): whether discovery names the RP-initiated logout endpoint.
 */
function advertisesEndSession(config: TenantConfig): boolean {
  const logout = config.settings.oidc_logout as { rp_logout_end_session_endpoint_discovery?: unknown } | undefined;
  return logout?.rp_logout_end_session_endpoint_discovery !== false;
}

/**
 * GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0 §3). Lists only what this tenant can
 * use (issue 33 point 6: its grants, its endpoints; test/integration/discovery-accuracy.test.ts checks each
 * field against behaviour); `issuer` is ISSUER verbatim on the apex and the host's own origin on a tenant
 * subdomain or custom domain.
 */
export async function discoveryEndpoint(c: AppContext): Promise<Response> {
  const tenant = c.get("tenant");
  const config = await tenantConfig(tenant.id, tenantConfigSource(c.env, tenant.id), c.get("settings"));
  // Serialized once per snapshot and issuer (issue 31); answered from its bytes with a strong ETag.
  let byIssuer = preparedDocuments.get(config);
  if (!byIssuer) {
    byIssuer = new Map();
    preparedDocuments.set(config, byIssuer);
  }
  let body = byIssuer.get(tenant.issuer);
  if (!body) {
    body = prepareBody(JSON.stringify(discoveryDocument(config, tenant.issuer)));
    // An issuer per host the tenant answers on (its subdomain, custom domains, the apex): a few at most.
    if (byIssuer.size >= 32) byIssuer.clear();
    byIssuer.set(tenant.issuer, body);
  }
  return preparedJson(c.req.raw, await body, tenant.via, () => tenantCacheHeaders(tenant, "max-age=300"));
}

/** Discovery documents by snapshot, then issuer. */
const preparedDocuments = new WeakMap<TenantConfig, Map<string, Promise<PreparedBody>>>();

/** The discovery document of a snapshot as seen at `issuer`. */
function discoveryDocument(config: TenantConfig, issuer: string): Record<string, unknown> {
  const base = issuer.endsWith("/") ? issuer : `${issuer}/`;
  return {
    issuer,
    authorization_endpoint: `${base}authorize`,
    token_endpoint: `${base}oauth/token`,
    userinfo_endpoint: `${base}userinfo`,
    jwks_uri: `${base}.well-known/jwks.json`,
    revocation_endpoint: `${base}oauth/revoke`,
    // RFC 8628 §4 and RFC 9126 §5: requiring PAR is a per-client setting, not the whole tenant's.
    device_authorization_endpoint: `${base}oauth/device/code`,
    pushed_authorization_request_endpoint: `${base}oauth/par`,
    require_pushed_authorization_requests: false,
    // RFC 9207 §3: authorization responses carry `iss` (src/worker/oauth/authorize/respond.ts).
    authorization_response_iss_parameter_supported: true,
    ...(advertisesEndSession(config) ? { end_session_endpoint: `${base}oidc/logout` } : {}),
    // OIDC Back-Channel Logout 1.0 §2.1: logout tokens carry sid (and sub) for clients that register a URI.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    scopes_supported: OIDC_SCOPES.filter((s) => s !== "address" && s !== "phone"),
    response_types_supported: RESPONSE_TYPES,
    response_modes_supported: [...RESPONSE_MODES],
    grant_types_supported: [...grantsAvailableIn(config), "implicit"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [...ID_TOKEN_ALGS],
    token_endpoint_auth_methods_supported: TOKEN_AUTH_METHODS,
    token_endpoint_auth_signing_alg_values_supported: ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA", "HS256", "HS384", "HS512"],
    revocation_endpoint_auth_methods_supported: TOKEN_AUTH_METHODS,
    code_challenge_methods_supported: ["S256", "plain"],
    claims_supported: ["sub", "iss", "aud", "exp", "iat", "auth_time", "amr", "nonce", "at_hash", "c_hash", "sid", "org_id", "name", "nickname", "picture", "updated_at", "email", "email_verified"],
    prompt_values_supported: ["none", "login", "consent"],
    // RFC 9101: request objects at /authorize and /oauth/par (./authorize/request-object.ts).
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: [...REQUEST_OBJECT_ALGS],
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    // RFC 9449 §5.1: DPoP proofs at the token endpoint bind the tokens to the proof's key (./dpop/).
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
  };
}
