import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { describeIssue, readOAuthParams } from "../http/body";
import { tenantConfig } from "../tenant/config-cache";
import { signerResolver } from "../tenant/keys";
import { tenantConfigSource } from "../tenant/stubs";
import { assertGrantAllowed, authenticateClient, findClient, presentedClient } from "./client-auth";
import type { GrantContext } from "./grants/context";
import { type Grant, GRANTS } from "./grants";
import type { ClientRecord } from "../../shared/schemas/clients";
import { dpopHeader, endpointUrls, offerDpopNonce, verifyDpopProof } from "./dpop/proof";

/**
 * POST /oauth/token (SPEC §4.1). Order of checks: parameters, grant support, client lookup, the client's
 * grant allowlist (before authentication, rule 2), client authentication, then the grant itself.
 */
export async function tokenEndpoint(c: AppContext): Promise<Response> {
  const { grant, ctx, client } = await tokenRequest(c);
  return c.json(await grant.handler(ctx, client), 200, NO_STORE);
}

/** RFC 6749 §5.1: token responses are never cached. */
export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * Everything the token endpoint does before its grant runs: the request read and checked, the client
 * authenticated, a DPoP proof verified (and a nonce offered). Also the front of the bench's rotation floor
 * through the endpoint (src/worker/bench.ts), so that floor pays exactly what every grant pays.
 */
export async function tokenRequest(c: AppContext): Promise<{ grant: Grant; ctx: GrantContext; client: ClientRecord }> {
  const params = await readOAuthParams(c.req.raw);
  const grantType = params.grant_type;
  if (!grantType) throw new OAuthError("invalid_request", "Missing required parameter: grant_type");
  const grant = GRANTS.get(grantType);
  if (!grant) throw new OAuthError("unsupported_grant_type", `Unsupported grant type: ${grantType}`);
  const tenant = c.get("tenant");
  const settings = c.get("settings");
  const config = await tenantConfig(tenant.id, tenantConfigSource(c.env, tenant.id), settings);
  if (grant.isAvailable && !grant.isAvailable(config)) throw new OAuthError("unsupported_grant_type", `Unsupported grant type: ${grantType}`);
  const presented = presentedClient(c.req.raw, params);
  const client = findClient(config, presented.clientId);
  assertGrantAllowed(client, grantType);
  const parsed = grant.parameters.safeParse(params);
  if (!parsed.success) throw new OAuthError("invalid_request", describeIssue(parsed.error).replace("Payload validation error: ", ""));
  await authenticateClient(c, client, presented);
  // RFC 9449 §5: a DPoP proof binds what this request issues to the proof's key.
  const proof = dpopHeader(c.req.raw);
  const dpop = proof === null ? null : await verifyDpopProof(c, proof, { site: "token", urls: endpointUrls(c, "oauth/token"), config });
  const ctx: GrantContext = { c, params, config, signer: signerResolver(c.env, settings, tenant.id), ...(dpop ? { dpopJkt: dpop.jkt } : {}) };
  await offerDpopNonce(c, config);
  return { grant, ctx, client };
}
