import { fieldCipher } from "../../shared/crypto/encryption";
import { timingSafeEqualText } from "../../shared/crypto/compare";
import { OAuthError } from "../../shared/errors";
import type { ClientRecord, TenantConfig } from "../../shared/types";
import { clientSecretContext } from "../tenant/bootstrap";

/** How the client presented itself at the token endpoint (RFC 6749 §2.3). */
export interface PresentedClient {
  clientId: string;
  method: "client_secret_basic" | "client_secret_post" | "none";
  secret: string | null;
}

function decodeBasicPart(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, "%20"));
  } catch {
    throw new OAuthError("invalid_client", "Malformed Basic authorization header");
  }
}

/**
 * Reads the client's identity from the Authorization header or the body. Using two methods at once is
 * refused (RFC 6749 §2.3: the client MUST NOT use more than one authentication method).
 */
export function presentedClient(request: Request, params: Record<string, string>): PresentedClient {
  const header = request.headers.get("authorization");
  if (header && /^basic\s/i.test(header)) {
    let decoded: string;
    try {
      decoded = atob(header.slice(6).trim());
    } catch {
      throw new OAuthError("invalid_client", "Malformed Basic authorization header");
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "Malformed Basic authorization header");
    if (params.client_secret !== undefined) {
      throw new OAuthError("invalid_request", "Client authentication must use only one method");
    }
    const clientId = decodeBasicPart(decoded.slice(0, colon));
    if (params.client_id !== undefined && params.client_id !== clientId) {
      throw new OAuthError("invalid_request", "client_id in the body does not match the Authorization header");
    }
    return { clientId, method: "client_secret_basic", secret: decodeBasicPart(decoded.slice(colon + 1)) };
  }
  const clientId = params.client_id;
  if (!clientId) throw new OAuthError("invalid_request", "Missing required parameter: client_id");
  const secret = params.client_secret ?? null;
  return { clientId, method: secret === null ? "none" : "client_secret_post", secret };
}

/** Looks the client up in the tenant's snapshot; unknown is `invalid_client`. */
export function findClient(config: TenantConfig, clientId: string): ClientRecord {
  const client = config.clients.find((c) => c.client_id === clientId);
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

/** Verifies a client secret in constant time; failure is `invalid_client` 401. */
export async function authenticateClient(
  encryptionKey: string | undefined,
  client: ClientRecord,
  presented: PresentedClient,
): Promise<void> {
  const fail = () => {
    const error = new OAuthError("invalid_client", "Client authentication failed");
    return presented.method === "client_secret_basic" ? error.withHeader("WWW-Authenticate", 'Basic realm="token"') : error;
  };
  if (presented.secret === null || !client.client_secret_enc) throw fail();
  const cipher = await fieldCipher(encryptionKey);
  const stored = await cipher.decrypt(client.client_secret_enc, clientSecretContext(client.client_id));
  if (!(await timingSafeEqualText(stored, presented.secret))) throw fail();
}
