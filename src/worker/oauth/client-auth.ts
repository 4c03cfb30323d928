import { fieldCipher } from "../../shared/crypto/encryption";
import { equalDigests, sha256 } from "../../shared/crypto/compare";
import { OAuthError } from "../../shared/errors";
import type { TenantConfig } from "../../shared/types";
import { type ClientRecord, privateKeyJwtCredentialIds } from "../../shared/schemas/clients";
import type { AppContext } from "../context";
import { encryptionContext } from "../../shared/crypto/contexts";
import { tenantObject } from "../tenant/stubs";
import { assertionClientId, JWT_BEARER_ASSERTION, verifyClientAssertion } from "./client-assertion";
import { clientIn } from "../tenant/config-cache";

/** How the client presented itself at the token endpoint (RFC 6749 §2.3, RFC 7523 §2.2). */
export interface PresentedClient {
  clientId: string;
  method: "client_secret_basic" | "client_secret_post" | "client_assertion" | "none";
  secret: string | null;
  assertion: string | null;
}

function decodeBasicPart(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, "%20"));
  } catch {
    throw new OAuthError("invalid_client", "Malformed Basic authorization header");
  }
}

/**
 * Reads the client's identity from the Authorization header, a client assertion or the body. Using two
 * methods at once is refused (RFC 6749 §2.3: the client MUST NOT use more than one method).
 */
export function presentedClient(request: Request, params: Record<string, string>): PresentedClient {
  const header = request.headers.get("authorization");
  const hasAssertion = params.client_assertion !== undefined || params.client_assertion_type !== undefined;
  if (header && /^basic\s/i.test(header)) {
    if (params.client_secret !== undefined || hasAssertion) {
      throw new OAuthError("invalid_request", "Client authentication must use only one method");
    }
    let decoded: string;
    try {
      decoded = atob(header.slice(6).trim());
    } catch {
      throw new OAuthError("invalid_client", "Malformed Basic authorization header");
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "Malformed Basic authorization header");
    const clientId = decodeBasicPart(decoded.slice(0, colon));
    if (params.client_id !== undefined && params.client_id !== clientId) {
      throw new OAuthError("invalid_request", "client_id in the body does not match the Authorization header");
    }
    return { clientId, method: "client_secret_basic", secret: decodeBasicPart(decoded.slice(colon + 1)), assertion: null };
  }
  if (hasAssertion) {
    if (params.client_secret !== undefined) throw new OAuthError("invalid_request", "Client authentication must use only one method");
    if (params.client_assertion_type !== JWT_BEARER_ASSERTION) {
      throw new OAuthError("invalid_client", `client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
    }
    if (!params.client_assertion) throw new OAuthError("invalid_request", "Missing required parameter: client_assertion");
    const clientId = assertionClientId(params.client_assertion);
    if (params.client_id !== undefined && params.client_id !== clientId) {
      throw new OAuthError("invalid_client", "client_id does not match the client_assertion");
    }
    return { clientId, method: "client_assertion", secret: null, assertion: params.client_assertion };
  }
  const clientId = params.client_id;
  if (!clientId) throw new OAuthError("invalid_request", "Missing required parameter: client_id");
  const secret = params.client_secret ?? null;
  return { clientId, method: secret === null ? "none" : "client_secret_post", secret, assertion: null };
}

/** Looks the client up in the tenant's snapshot; unknown is `invalid_client`. */
export function findClient(config: TenantConfig, clientId: string): ClientRecord {
  const client = clientIn(config, clientId);
  if (!client) throw new OAuthError("invalid_client", "Client authentication failed");
  return client;
}

/**
 * SPEC §4.1 rule 2: a non-empty `grant_types` allowlist lacking the grant is `unauthorized_client`, checked
 * before the client is authenticated (so a wrong secret with a disallowed grant still says so).
 */
export function assertGrantAllowed(client: ClientRecord, grantType: string): void {
  if (client.grant_types.length > 0 && !client.grant_types.includes(grantType)) {
    throw new OAuthError("unauthorized_client", `Grant type '${grantType}' not allowed for the client.`);
  }
}

/**
 * Authenticates the client with the method it is registered for: a secret (Basic or body, compared in
 * constant time), a JWT assertion (jti consumed exactly once), or nothing for public clients.
 */
export async function authenticateClient(c: AppContext, client: ClientRecord, presented: PresentedClient): Promise<void> {
  const fail = (description = "Client authentication failed") => {
    const error = new OAuthError("invalid_client", description);
    return presented.method === "client_secret_basic" ? error.withHeader("WWW-Authenticate", 'Basic realm="token"') : error;
  };
  const registered = client.token_endpoint_auth_method;
  if (registered === "none") {
    if (presented.method !== "none") throw fail("Public clients must not authenticate");
    return;
  }
  if (registered === "private_key_jwt" || registered === "client_secret_jwt") {
    if (presented.method !== "client_assertion" || !presented.assertion) throw fail(`The client must authenticate with ${registered}`);
    const issuer = c.get("tenant").issuer;
    const audiences = [issuer, `${issuer.replace(/\/?$/, "/")}oauth/token`];
    // A private_key_jwt client's keys: its `jwks` and its unexpired credentials (/clients/{id}/credentials), only
    // those its client_authentication_methods names when it names any.
    const named = privateKeyJwtCredentialIds(client);
    const credentials =
      registered === "private_key_jwt" ? await tenantObject(c.env, c.get("tenant").id).clientCredentials().activeKeys(client.client_id, named.length ? named : undefined) : [];
    const keyed = credentials.length ? { ...client, jwks: { keys: [...(client.jwks?.keys ?? []), ...credentials] } } : client;
    const { jti, expiresAtMs } = await verifyClientAssertion(presented.assertion, keyed, c.get("settings"), c.env.ENCRYPTION_KEY, audiences);
    const fresh = await tenantObject(c.env, c.get("tenant").id).assertions().consumeJti(client.client_id, jti, expiresAtMs);
    if (!fresh) throw fail("client_assertion jti has already been used");
    return;
  }
  if (presented.secret === null || !client.client_secret_enc) throw fail();
  const [stored, given] = await Promise.all([storedSecretDigest(c, client.client_id, client.client_secret_enc), sha256(presented.secret)]);
  if (!equalDigests(stored, given)) throw fail();
}

/** How many clients' secret digests an isolate keeps (cleared whole when full). */
const MAX_CACHED_SECRETS = 1000;
const storedDigests = new Map<string, Promise<Uint8Array>>();

/**
 * SHA-256 of a client's stored secret, decrypted once per isolate and kept by its ciphertext (a rotated
 * secret has a new one, so nothing goes stale). Secrets are compared as digests, in constant time.
 */
function storedSecretDigest(c: AppContext, clientId: string, ciphertext: string): Promise<Uint8Array> {
  const key = `${clientId}\n${ciphertext}`;
  let digest = storedDigests.get(key);
  if (!digest) {
    if (storedDigests.size >= MAX_CACHED_SECRETS) storedDigests.clear();
    digest = fieldCipher(c.env.ENCRYPTION_KEY)
      .then((cipher) => cipher.decrypt(ciphertext, encryptionContext.clientSecret(clientId)))
      .then(sha256);
    storedDigests.set(key, digest);
    digest.catch(() => storedDigests.delete(key));
  }
  return digest;
}
