import { tokenRequestSchemas } from "../../shared/schemas/oauth";
import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { describeIssue, readOAuthParams } from "../http/body";
import { tenantConfig } from "../tenant/config-cache";
import { activeSigner } from "../tenant/keys";
import { tenantObject } from "../tenant/stubs";
import { assertGrantAllowed, authenticateClient, findClient, presentedClient } from "./client-auth";
import { authorizationCodeGrant } from "./grants/authorization-code";
import { clientCredentialsGrant } from "./grants/client-credentials";
import type { GrantContext } from "./grants/context";
import { tokenExchangeGrant } from "./grants/token-exchange";

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
  const tenant = c.var.tenant;
  const settings = c.var.settings;
  const config = await tenantConfig(tenant.id, tenantObject(c.env, tenant.id), settings);
  const presented = presentedClient(c.req.raw, params);
  const client = findClient(config, presented.clientId);
  assertGrantAllowed(client, grantType);
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw new OAuthError("invalid_request", describeIssue(parsed.error).replace("Payload validation error: ", ""));
  await authenticateClient(c, client, presented);
  const ctx: GrantContext = { c, params, config, signer: (alg) => activeSigner(c.env, settings, tenant.id, alg) };
  const noStore = { "Cache-Control": "no-store", Pragma: "no-cache" };
  switch (grantType) {
    case "client_credentials":
      return c.json(await clientCredentialsGrant(params, client, config, tenant, ctx.signer), 200, noStore);
    case "authorization_code":
      return c.json(await authorizationCodeGrant(ctx, client), 200, noStore);
    default:
      return c.json(await tokenExchangeGrant(ctx, client), 200, noStore);
  }
}
