import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { tokenRequestSchemas } from "../../shared/schemas/oauth";
import { describeIssue, readOAuthParams } from "../http/body";
import { tenantConfig } from "../tenant/config-cache";
import { activeSigner } from "../tenant/keys";
import { tenantObject } from "../tenant/stubs";
import { assertGrantAllowed, authenticateClient, findClient, presentedClient } from "./client-auth";
import { clientCredentialsGrant, type TokenResponse } from "./grants/client-credentials";

/** Grant types this server implements; anything else is `unsupported_grant_type`. */
export const SUPPORTED_GRANTS = Object.keys(tokenRequestSchemas) as (keyof typeof tokenRequestSchemas)[];

/**
 * POST /oauth/token (SPEC §4.1). Order of checks: parameters, grant support, client lookup, the client's
 * grant allowlist (before authentication, rule 2), client authentication, then the grant itself.
 */
export async function tokenEndpoint(c: AppContext): Promise<Response> {
  const params = await readOAuthParams(c.req.raw);
  const grantType = params.grant_type;
  if (!grantType) throw new OAuthError("invalid_request", "Missing required parameter: grant_type");
  const schema = tokenRequestSchemas[grantType as keyof typeof tokenRequestSchemas];
  if (!schema) throw new OAuthError("unsupported_grant_type", `Unsupported grant type: ${grantType}`);
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw new OAuthError("invalid_request", describeIssue(parsed.error));
  const tenant = c.var.tenant;
  const settings = c.var.settings;
  const config = await tenantConfig(tenant.id, tenantObject(c.env, tenant.id), settings);
  const presented = presentedClient(c.req.raw, params);
  const client = findClient(config, presented.clientId);
  assertGrantAllowed(client, grantType);
  await authenticateClient(c.env.ENCRYPTION_KEY, client, presented);
  const signer = await activeSigner(c.env, settings, tenant.id);
  let response: TokenResponse;
  switch (grantType) {
    case "client_credentials":
      response = await clientCredentialsGrant(params, client, config, tenant, signer);
      break;
    default:
      throw new OAuthError("unsupported_grant_type", `Unsupported grant type: ${grantType}`);
  }
  return c.json(response, 200, { "Cache-Control": "no-store", Pragma: "no-cache" });
}
