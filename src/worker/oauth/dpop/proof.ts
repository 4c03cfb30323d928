import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, type JWK, type JWTPayload, jwtVerify } from "jose";
import { nowSeconds } from "../../../shared/clock";
import { toBase64Url } from "../../../shared/crypto/encoding";
import { sha256 } from "../../../shared/crypto/compare";
import { OAuthError } from "../../../shared/errors";
import type { TenantConfig } from "../../../shared/types";
import type { AppContext } from "../../context";
import { tenantObject } from "../../tenant/stubs";
import { currentDpopNonce, isValidDpopNonce, requiresDpopNonce } from "./nonce";

/**
 * DPoP proofs (RFC 9449 §4): a JWT the client signs with its own key for each request, naming the method
 * and URL, fresh, used once. The key's thumbprint (`jkt`, RFC 7638) is what tokens are bound to (`cnf.jkt`).
 */

/** Algorithms accepted for proofs (asymmetric only; discovery's `dpop_signing_alg_values_supported`). */
export const DPOP_ALGS: readonly string[] = ["ES256", "ES384", "EdDSA", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];

/**
 * How old a proof may be (its `iat`), and how far in the future, in seconds. The proof's `jti` is remembered
 * for exactly that window (RFC 9449 §11.1: replay is refused while a proof would be accepted).
 * @default 60
 */
export const DPOP_PROOF_MAX_AGE_S = 60;
/** @default 5 */
export const DPOP_PROOF_FUTURE_LEEWAY_S = 5;

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/** Where a proof is checked: the token endpoint answers 400 JSON, a resource 401 with `WWW-Authenticate: DPoP`. */
export type DpopSite = "token" | "resource";

export interface DpopCheck {
  site: DpopSite;
  /** The URLs the proof's `htu` may name (the endpoint as discovery advertises it, and the request's own). */
  urls: string[];
  /** The access token presented with the proof at a resource (its hash must be the proof's `ath`). */
  accessToken?: string;
  config: TenantConfig;
  /** The tenant whose nonces and replay cache apply (the request's tenant unless given: the management API's token tenant). */
  tenantId?: string;
}

export interface DpopProof {
  jkt: string;
}

/** The error of a refused proof, shaped for where it was presented (RFC 9449 §5, §7.1). */
export function dpopError(site: DpopSite, code: "invalid_dpop_proof" | "use_dpop_nonce" | "invalid_token", description: string): OAuthError {
  if (site === "token") return new OAuthError(code, description, 400);
  const quoted = description.replace(/["\\]/g, "'");
  return new OAuthError(code, description, 401).withHeader("WWW-Authenticate", `DPoP error="${code}", error_description="${quoted}", algs="${DPOP_ALGS.join(" ")}"`);
}

/** `htu` comparison (RFC 9449 §4.3 check 9): scheme, host, port and path, without query or fragment. */
function sameTarget(htu: string, url: string): boolean {
  if (!URL.canParse(htu) || !URL.canParse(url)) return false;
  const a = new URL(htu);
  const b = new URL(url);
  return a.protocol === b.protocol && a.host === b.host && a.pathname === b.pathname;
}

/** The one DPoP header of a request (several are refused), or null when there is none. */
export function dpopHeader(request: Request): string | null {
  const value = request.headers.get("dpop");
  if (value === null) return null;
  // Headers repeated are joined with ", "; a JWT holds no comma.
  if (value.includes(",")) throw new OAuthError("invalid_dpop_proof", "Only one DPoP header is allowed");
  return value.trim();
}

/**
 * Verifies the request's DPoP proof (RFC 9449 §4.3): `typ` dpop+jwt, an asymmetric `alg`, a public `jwk`
 * the signature verifies with, `htm` the request's method, `htu` its URL, `iat` within the window, a `jti`
 * not seen before for this key, `ath` the access token's hash at a resource, and the server nonce when the
 * tenant requires one. Returns the key's thumbprint.
 */
export async function verifyDpopProof(c: AppContext, proof: string, check: DpopCheck): Promise<DpopProof> {
  const fail = (description: string) => dpopError(check.site, "invalid_dpop_proof", description);
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw fail("The DPoP proof is not a valid JWT");
  }
  if (header.typ !== "dpop+jwt") throw fail("DPoP proof typ must be dpop+jwt");
  if (typeof header.alg !== "string" || !DPOP_ALGS.includes(header.alg)) throw fail(`DPoP proof alg must be one of ${DPOP_ALGS.join(", ")}`);
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || typeof jwk !== "object" || Array.isArray(jwk)) throw fail("DPoP proof header must carry the public key (jwk)");
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw fail("DPoP proof jwk must be a public key");
  let payload: JWTPayload;
  let jkt: string;
  try {
    const key = await importJWK(jwk, header.alg);
    ({ payload } = await jwtVerify(proof, key, { typ: "dpop+jwt", algorithms: [header.alg] }));
    jkt = await calculateJwkThumbprint(jwk, "sha256");
  } catch (error) {
    throw fail(`Invalid DPoP proof: ${(error as Error).message}`);
  }
  if (typeof payload.jti !== "string" || payload.jti.length === 0 || payload.jti.length > 256) throw fail("DPoP proof jti is required");
  if (payload.htm !== c.req.method) throw fail("DPoP proof htm does not match the request method");
  if (typeof payload.htu !== "string" || !check.urls.some((url) => sameTarget(payload.htu as string, url))) throw fail("DPoP proof htu does not match the request URL");
  const now = nowSeconds();
  if (typeof payload.iat !== "number" || payload.iat < now - DPOP_PROOF_MAX_AGE_S || payload.iat > now + DPOP_PROOF_FUTURE_LEEWAY_S) {
    throw fail(`DPoP proof iat must be within ${DPOP_PROOF_MAX_AGE_S} seconds of now`);
  }
  if (check.accessToken !== undefined) {
    const ath = toBase64Url(await sha256(check.accessToken));
    if (payload.ath !== ath) throw fail("DPoP proof ath does not match the access token");
  }
  const tenantId = check.tenantId ?? c.var.tenant.id;
  if (requiresDpopNonce(check.config) && !(await isValidDpopNonce(c.env.ENCRYPTION_KEY, tenantId, payload.nonce, now))) {
    throw dpopError(check.site, "use_dpop_nonce", "Authorization server requires nonce in DPoP proof").withHeader(
      "DPoP-Nonce",
      await currentDpopNonce(c.env.ENCRYPTION_KEY, tenantId, now),
    );
  }
  const rememberUntil = (payload.iat + DPOP_PROOF_MAX_AGE_S + DPOP_PROOF_FUTURE_LEEWAY_S) * 1000;
  if (!(await tenantObject(c.env, tenantId).consumeDpopJti(jkt, payload.jti, rememberUntil))) throw fail("DPoP proof jti has already been used");
  return { jkt };
}

/** Sets a fresh `DPoP-Nonce` on a response when the tenant requires nonces (RFC 9449 §8.2: the client keeps the newest). */
export async function offerDpopNonce(c: AppContext, config: TenantConfig): Promise<void> {
  if (requiresDpopNonce(config)) c.header("DPoP-Nonce", await currentDpopNonce(c.env.ENCRYPTION_KEY, c.var.tenant.id, nowSeconds()));
}

/** The URL of an endpoint of this tenant as discovery advertises it, and the URL the request arrived at. */
export function endpointUrls(c: AppContext, path: string): string[] {
  const base = c.var.tenant.issuer.replace(/\/?$/, "/");
  return [`${base}${path.replace(/^\//, "")}`, c.req.url];
}
