import { createLocalJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify, type ProtectedHeaderParameters } from "jose";
import { nowSeconds } from "../../../shared/clock";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { AppContext } from "../../context";
import { tenantObject } from "../../tenant/stubs";

/**
 * JWT-secured authorization requests (RFC 9101). A client sends its authorization request as a signed JWT,
 * in the `request` parameter of /authorize or of POST /oauth/par; the parameters it carries are the request
 * (RFC 9101 §5: parameters outside it are not used). The signature is checked with the client's registered
 * public keys (`jwks`, as for private_key_jwt) or, for HS*, with its client secret.
 */

/** Asymmetric algorithms accepted for request objects (never `none`, RFC 9101 §10.2 / RFC 8725 §3.1). */
export const REQUEST_OBJECT_ASYMMETRIC_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"] as const;
/** Symmetric algorithms, verified with the client's own secret (confidential clients only). */
export const REQUEST_OBJECT_SYMMETRIC_ALGS = ["HS256", "HS384", "HS512"] as const;
/** Discovery's `request_object_signing_alg_values_supported`. */
export const REQUEST_OBJECT_ALGS: readonly string[] = [...REQUEST_OBJECT_ASYMMETRIC_ALGS, ...REQUEST_OBJECT_SYMMETRIC_ALGS];

/**
 * The longest a request object may live (exp - iat, or exp - now without iat), and how long its `jti` is
 * remembered when it carries no `exp`: an hour, FAPI 2.0's bound for request objects.
 * @default 3600
 */
export const REQUEST_OBJECT_MAX_LIFETIME_S = 3600;
/** The reference platform's bound on `jti` (at most 64 bytes). */
const MAX_JTI_BYTES = 64;
/** JWT claims of the request object that are not authorization request parameters. */
const JWT_CLAIMS = new Set(["iss", "aud", "exp", "nbf", "iat", "jti", "sub"]);
/** Header `typ` values accepted (RFC 9101 §4: `oauth-authz-req+jwt`; the reference platform also takes `jwt`). */
const TYPES = new Set(["oauth-authz-req+jwt", "application/oauth-authz-req+jwt", "jwt", "application/jwt"]);

const invalid = (description: string) => new OAuthError("invalid_request_object", description);

/**
 * The client's `signed_request_object.required` (the reference platform's JAR setting, RFC 9101 §10.5's
 * `require_signed_request_object`): /authorize and /oauth/par accept its requests only as request objects.
 */
export function requiresSignedRequestObject(client: ClientRecord): boolean {
  const setting = client.extra.signed_request_object as { required?: unknown } | undefined;
  return setting?.required === true;
}

/** The verification key for the header's algorithm: the client's registered keys, or its secret for HS*. */
async function verificationKey(c: AppContext, client: ClientRecord, header: ProtectedHeaderParameters) {
  const alg = header.alg ?? "";
  if ((REQUEST_OBJECT_SYMMETRIC_ALGS as readonly string[]).includes(alg)) {
    if (!client.client_secret_enc || client.token_endpoint_auth_method === "none") throw invalid(`The client has no secret to verify ${alg} request objects`);
    const secret = await (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(client.client_secret_enc, encryptionContext.clientSecret(client.client_id));
    return new TextEncoder().encode(secret);
  }
  if (!client.jwks?.keys.length) throw invalid("The client has no registered keys (jwks) to verify request objects");
  return createLocalJWKSet(client.jwks as never);
}

/** A claim as an authorization request parameter: strings as they are, anything else as JSON (`max_age: 60` -> "60"). */
const asParameter = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/**
 * Verifies a request object for `client` and returns the authorization request it carries (RFC 9101 §6):
 * a JWS (encrypted objects are refused), `alg` one the client can be verified with (`none` refused), `typ`
 * absent or `oauth-authz-req+jwt`/`jwt`, `iss` the client_id, `aud` this tenant's issuer, `exp`/`nbf`/`iat`
 * in range (a lifetime of at most an hour), `client_id` absent or the client's, no nested `request` or
 * `request_uri`, and its `jti`, when present, used once. Every failure is `invalid_request_object`.
 */
export async function verifyRequestObject(c: AppContext, client: ClientRecord, jwt: string): Promise<Record<string, string>> {
  const parts = jwt.split(".");
  if (parts.length === 5) throw invalid("Encrypted request objects are not supported; sign the request object (JWS)");
  let header: ProtectedHeaderParameters;
  try {
    if (parts.length !== 3) throw new Error("not a JWS");
    header = decodeProtectedHeader(jwt);
  } catch {
    throw invalid("The request object is not a valid signed JWT");
  }
  if (typeof header.alg !== "string" || header.alg.toLowerCase() === "none") throw invalid("Unsigned request objects (alg none) are not accepted");
  if (!REQUEST_OBJECT_ALGS.includes(header.alg)) throw invalid(`Request object alg ${header.alg} is not supported`);
  if (header.typ !== undefined && !TYPES.has(header.typ.toLowerCase())) throw invalid(`Request object typ must be oauth-authz-req+jwt (got ${header.typ})`);
  const leeway = c.var.settings.clientAssertionLeewayS;
  const key = await verificationKey(c, client, header);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(jwt, key as never, {
      algorithms: [header.alg],
      issuer: client.client_id,
      audience: c.var.tenant.issuer,
      clockTolerance: leeway,
    }));
  } catch (error) {
    throw invalid(`Invalid request object: ${(error as Error).message}`);
  }
  const now = nowSeconds();
  if (typeof payload.iat === "number" && payload.iat > now + leeway) throw invalid("Request object iat is in the future");
  if (typeof payload.exp === "number" && payload.exp - (typeof payload.iat === "number" ? payload.iat : now) > REQUEST_OBJECT_MAX_LIFETIME_S + leeway) {
    throw invalid(`Request object lifetime exceeds ${REQUEST_OBJECT_MAX_LIFETIME_S} seconds`);
  }
  if (typeof payload.iat === "number" && now - payload.iat > REQUEST_OBJECT_MAX_LIFETIME_S + leeway) throw invalid("Request object is too old (iat)");
  // RFC 9101 §5: client_id inside must be the client's; §4: no request object refers to another one.
  if (payload.client_id !== undefined && payload.client_id !== client.client_id) throw invalid("Request object client_id does not match the client");
  if ("request" in payload || "request_uri" in payload) throw invalid("A request object must not contain request or request_uri");
  if (payload.jti !== undefined) {
    if (typeof payload.jti !== "string" || payload.jti.length === 0 || new TextEncoder().encode(payload.jti).length > MAX_JTI_BYTES) {
      throw invalid(`Request object jti must be a string of at most ${MAX_JTI_BYTES} bytes`);
    }
    const remembered = ((typeof payload.exp === "number" ? payload.exp : now + REQUEST_OBJECT_MAX_LIFETIME_S) + leeway) * 1000;
    const fresh = await tenantObject(c.env, c.var.tenant.id).assertions().consumeRequestObjectJti(client.client_id, payload.jti, remembered);
    if (!fresh) throw invalid("Request object jti has already been used");
  }
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload)) {
    if (JWT_CLAIMS.has(name) || value === null || value === undefined) continue;
    params[name] = asParameter(value);
  }
  params.client_id = client.client_id;
  return params;
}
