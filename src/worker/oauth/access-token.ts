import { type JWTPayload, jwtVerify } from "jose";
import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { parseBearer } from "../http/bearer";
import { jwksVerifier } from "../tenant/keys";
import { tenantObject } from "../tenant/stubs";

const bearerError = (description: string) =>
  new OAuthError("invalid_token", description, 401).withHeader(
    "WWW-Authenticate",
    `Bearer error="invalid_token", error_description="${description.replace(/"/g, "'")}"`,
  );

/**
 * Verifies an access token issued by this tenant on this host for a given audience (RFC 6750): signature,
 * issuer, audience, expiry, and not revoked (RFC 7009).
 */
export async function verifyAccessToken(c: AppContext, token: string, audience: string): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    const { keys, algorithms } = await jwksVerifier(c.env, c.var.settings, c.var.tenant.id);
    ({ payload } = await jwtVerify(token, keys, { issuer: c.var.tenant.issuer, audience, algorithms }));
  } catch {
    throw bearerError("The access token is invalid or expired");
  }
  if (typeof payload.jti === "string" && (await tenantObject(c.env, c.var.tenant.id).revocations().isRevoked(payload.jti))) {
    throw bearerError("The access token has been revoked");
  }
  return payload;
}

/** The bearer token of a request (header, or form body for POST per RFC 6750 §2.2). */
export async function bearerToken(c: AppContext): Promise<string> {
  const header = c.req.header("authorization");
  if (header) {
    const token = parseBearer(header);
    if (!token) throw new OAuthError("invalid_request", "Malformed Authorization header", 400);
    return token;
  }
  throw new OAuthError("invalid_token", "Missing access token", 401).withHeader("WWW-Authenticate", 'Bearer realm="userinfo"');
}
