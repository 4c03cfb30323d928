import type { AppContext } from "../context";
import { SUPPORTED_GRANTS } from "./token";

/**
 * GET /.well-known/openid-configuration. Lists only what is implemented; `issuer` is ISSUER verbatim on
 * the apex and the host's own origin on a tenant subdomain or custom domain (SPEC §5.6).
 */
export function discoveryEndpoint(c: AppContext): Response {
  const issuer = c.var.tenant.issuer;
  const base = issuer.endsWith("/") ? issuer : `${issuer}/`;
  return c.json(
    {
      issuer,
      jwks_uri: `${base}.well-known/jwks.json`,
      token_endpoint: `${base}oauth/token`,
      grant_types_supported: [...SUPPORTED_GRANTS],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      id_token_signing_alg_values_supported: ["RS256"],
      response_types_supported: [],
      subject_types_supported: ["public"],
    },
    200,
    { "Cache-Control": "public, max-age=300" },
  );
}
