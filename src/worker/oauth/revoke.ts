import { decodeJwt, jwtVerify } from "jose";
import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { readOAuthParams } from "../http/body";
import { tenantConfig } from "../tenant/config-cache";
import { tenantObject, userObject } from "../tenant/stubs";
import { jwksVerifier } from "../tenant/keys";
import { parseRefreshToken, refreshSecretHash } from "./tokens/refresh-token";
import { authenticateClient, findClient, presentedClient } from "./client-auth";

/**
 * POST /oauth/revoke (RFC 7009). The client authenticates; an access token it was issued is revoked until
 * it would have expired (userinfo, token exchange and the management API then refuse it); a refresh token
 * revokes its whole rotation family. Unknown or foreign tokens are answered
 * 200 as well (§2.2: the response does not reveal whether the token was valid).
 */
export async function revokeEndpoint(c: AppContext): Promise<Response> {
  const params = await readOAuthParams(c.req.raw);
  if (!params.token) throw new OAuthError("invalid_request", "Missing required parameter: token");
  const tenant = c.var.tenant;
  const config = await tenantConfig(tenant.id, tenantObject(c.env, tenant.id), c.var.settings);
  const presented = presentedClient(c.req.raw, params);
  const client = findClient(config, presented.clientId);
  await authenticateClient(c, client, presented);
  const refresh = parseRefreshToken(params.token);
  if (refresh) {
    // A refresh token revokes its whole family, and only for the client it was issued to (§2.1).
    if (refresh.tenantId === tenant.id) {
      await userObject(c.env, tenant.id, refresh.userId).refreshTokens().revokePresented({
        id: refresh.id,
        token_hash: await refreshSecretHash(refresh.secret),
        client_id: client.client_id,
      });
    }
    return c.body(null, 200, { "Cache-Control": "no-store" });
  }
  let looksLikeJwt = true;
  try {
    decodeJwt(params.token);
  } catch {
    looksLikeJwt = false;
  }
  if (looksLikeJwt) {
    try {
      const { keys, algorithms } = await jwksVerifier(c.env, c.var.settings, c.var.tenant.id);
      const { payload } = await jwtVerify(params.token, keys, { issuer: tenant.issuer, algorithms });
      if (payload.azp === client.client_id && typeof payload.jti === "string" && typeof payload.exp === "number") {
        await tenantObject(c.env, tenant.id).revocations().revoke(payload.jti, payload.exp * 1000);
      }
    } catch {
      // Invalid, expired or foreign: nothing to revoke, and nothing to reveal.
    }
  }
  return c.body(null, 200, { "Cache-Control": "no-store" });
}
