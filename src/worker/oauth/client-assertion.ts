import { nowSeconds } from "../../shared/clock";
import { createLocalJWKSet, decodeJwt, type JWTPayload, jwtVerify } from "jose";
import { fieldCipher } from "../../shared/crypto/encryption";
import { OAuthError } from "../../shared/errors";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { Settings } from "../settings";
import { encryptionContext } from "../../shared/crypto/contexts";

export const JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

const invalid = (description: string) => new OAuthError("invalid_client", description);

/** The client an assertion claims to be (iss = sub = client_id, RFC 7523 §3), read before verification. */
export function assertionClientId(assertion: string): string {
  let claims: JWTPayload;
  try {
    claims = decodeJwt(assertion);
  } catch {
    throw invalid("client_assertion is not a valid JWT");
  }
  if (typeof claims.iss !== "string" || claims.iss !== claims.sub) throw invalid("client_assertion iss and sub must both be the client_id");
  return claims.iss;
}

/**
 * Verifies a `private_key_jwt` or `client_secret_jwt` assertion (RFC 7523 §3, OIDC Core §9): signature
 * (the client's registered public keys, or HMAC with its secret), iss = sub = client_id, aud naming this
 * token endpoint or the issuer, exp present, at most `CLIENT_ASSERTION_MAX_LIFETIME_SECONDS` between iat
 * and exp (or from now when iat is absent), and a jti, which the caller then consumes exactly once.
 */
export async function verifyClientAssertion(
  assertion: string,
  client: ClientRecord,
  settings: Settings,
  encryptionKey: string | undefined,
  audiences: string[],
): Promise<{ jti: string; expiresAtMs: number }> {
  const method = client.token_endpoint_auth_method;
  let payload: JWTPayload;
  try {
    if (method === "private_key_jwt") {
      if (!client.jwks?.keys.length) throw invalid("The client has no registered keys for private_key_jwt");
      const keys = createLocalJWKSet(client.jwks as never);
      ({ payload } = await jwtVerify(assertion, keys, {
        audience: audiences,
        algorithms: ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"],
        clockTolerance: settings.clientAssertionLeewayS,
        requiredClaims: ["exp", "jti"],
      }));
    } else if (method === "client_secret_jwt") {
      if (!client.client_secret_enc) throw invalid("The client has no secret for client_secret_jwt");
      const secret = await (await fieldCipher(encryptionKey)).decrypt(client.client_secret_enc, encryptionContext.clientSecret(client.client_id));
      ({ payload } = await jwtVerify(assertion, new TextEncoder().encode(secret), {
        audience: audiences,
        algorithms: ["HS256", "HS384", "HS512"],
        clockTolerance: settings.clientAssertionLeewayS,
        requiredClaims: ["exp", "jti"],
      }));
    } else {
      throw invalid(`The client is not configured for JWT client authentication (${method})`);
    }
  } catch (error) {
    if (error instanceof OAuthError) throw error;
    throw invalid(`Invalid client_assertion: ${(error as Error).message}`);
  }
  if (payload.iss !== client.client_id || payload.sub !== client.client_id) throw invalid("client_assertion iss and sub must be the client_id");
  // RFC 9101 §10.8, RFC 8725 §3.12: a request object (seen by the browser at /authorize) signed with the same
  // key must never pass for a client assertion, whatever claims it carries.
  if (payload.response_type !== undefined || payload.redirect_uri !== undefined) throw invalid("client_assertion must not be an authorization request object");
  const exp = payload.exp as number;
  const now = nowSeconds();
  const lifetime = typeof payload.iat === "number" ? exp - payload.iat : exp - now;
  if (lifetime > settings.clientAssertionMaxLifetimeS + settings.clientAssertionLeewayS) {
    throw invalid(`client_assertion lifetime exceeds ${settings.clientAssertionMaxLifetimeS} seconds`);
  }
  if (typeof payload.jti !== "string" || payload.jti.length === 0 || payload.jti.length > 256) throw invalid("client_assertion jti is required");
  return { jti: payload.jti, expiresAtMs: (exp + settings.clientAssertionLeewayS) * 1000 };
}
