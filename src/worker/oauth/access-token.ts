import { type JWTPayload, jwtVerify } from "jose";
import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { parseAuthorization } from "../http/bearer";
import { tenantConfig } from "../tenant/config-cache";
import { jwksVerifier } from "../tenant/keys";
import { tenantConfigSource, tenantObject } from "../tenant/stubs";
import { DPOP_ALGS, dpopError, dpopHeader, endpointUrls, verifyDpopProof } from "./dpop/proof";

/** An access token as a request presented it: the scheme says whether a DPoP proof must come with it. */
export interface PresentedAccessToken {
  scheme: "Bearer" | "DPoP";
  token: string;
}

const bearerError = (description: string) =>
  new OAuthError("invalid_token", description, 401).withHeader(
    "WWW-Authenticate",
    `Bearer error="invalid_token", error_description="${description.replace(/"/g, "'")}"`,
  );

/** The key a DPoP-bound token names (`cnf.jkt`, RFC 9449 §6.1), or null for a bearer token. */
export function boundKey(payload: JWTPayload): string | null {
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  return typeof cnf?.jkt === "string" ? cnf.jkt : null;
}

/**
 * Verifies an access token issued by this tenant on this host for a given audience (RFC 6750): signature,
 * issuer, audience, expiry, and not revoked (RFC 7009). A DPoP-bound token (RFC 9449 §7) must come in the
 * DPoP scheme with a proof of its key for this request (`path`, and `ath` its hash); a bound token presented
 * as a bearer token, or a bearer token in the DPoP scheme, is refused.
 */
export async function verifyAccessToken(
  c: AppContext,
  presented: PresentedAccessToken,
  audience: string,
  path: string,
  /** `false`: the caller checks revocation itself, in the one read it makes anyway (/userinfo, issue 31). */
  options: { revocation?: boolean } = {},
): Promise<JWTPayload> {
  const refuse = (description: string) => (presented.scheme === "DPoP" ? dpopError("resource", "invalid_token", description) : bearerError(description));
  let payload: JWTPayload;
  try {
    const { keys, algorithms } = await jwksVerifier(c.env, c.var.settings, c.var.tenant.id);
    ({ payload } = await jwtVerify(presented.token, keys, { issuer: c.var.tenant.issuer, audience, algorithms }));
  } catch {
    throw refuse("The access token is invalid or expired");
  }
  const jkt = boundKey(payload);
  if (jkt === null && presented.scheme === "DPoP") throw refuse("The access token is not bound to a DPoP key; present it as a Bearer token");
  if (jkt !== null) {
    if (presented.scheme !== "DPoP") throw dpopError("resource", "invalid_token", "The access token is DPoP-bound; present it with the DPoP scheme and a proof");
    const proof = dpopHeader(c.req.raw);
    if (proof === null) throw dpopError("resource", "invalid_dpop_proof", "A DPoP proof is required with a DPoP-bound access token");
    const config = await tenantConfig(c.var.tenant.id, tenantConfigSource(c.env, c.var.tenant.id), c.var.settings);
    const verified = await verifyDpopProof(c, proof, { site: "resource", urls: endpointUrls(c, path), accessToken: presented.token, config });
    if (verified.jkt !== jkt) throw dpopError("resource", "invalid_dpop_proof", "The DPoP proof's key is not the one the access token is bound to");
  }
  if (options.revocation !== false && typeof payload.jti === "string" && (await tenantObject(c.env, c.var.tenant.id).revocations().isRevoked(payload.jti))) {
    throw revokedAccessToken(presented);
  }
  return payload;
}

/** The refusal of a revoked access token, in the scheme it was presented in. */
export function revokedAccessToken(presented: PresentedAccessToken): Error {
  const description = "The access token has been revoked";
  return presented.scheme === "DPoP" ? dpopError("resource", "invalid_token", description) : bearerError(description);
}

/** The access token of a request's Authorization header, in the Bearer (RFC 6750 §2.1) or DPoP (RFC 9449 §7.1) scheme. */
export async function presentedAccessToken(c: AppContext): Promise<PresentedAccessToken> {
  const header = c.req.header("authorization");
  if (header) {
    const parsed = parseAuthorization(header);
    if (!parsed) throw new OAuthError("invalid_request", "Malformed Authorization header", 400);
    return parsed;
  }
  throw new OAuthError("invalid_token", "Missing access token", 401).withHeader("WWW-Authenticate", `Bearer realm="userinfo", DPoP algs="${DPOP_ALGS.join(" ")}"`);
}
