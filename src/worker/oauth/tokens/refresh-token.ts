import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../../../shared/crypto/encoding";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomId, randomToken } from "../../../shared/crypto/random";
import { hashSecret } from "../../login/session";

/**
 * Opaque refresh tokens that carry their own route (ARCHITECTURE.md §5): `v1.<tenant>.<user>.<id>.<secret>`
 * with the user id base64url-encoded, so the worker reaches the right UserObject without a lookup. Only
 * SHA-256 of the secret is stored, compared in constant time inside the object.
 */
export interface ParsedRefreshToken {
  tenantId: string;
  userId: string;
  id: string;
  secret: string;
}

const SHAPE = /^v1\.([a-z0-9_-]{1,63})\.([A-Za-z0-9_-]{1,400})\.(rt_[A-Za-z0-9]{22})\.([A-Za-z0-9_-]{43})$/;

export function formatRefreshToken(t: ParsedRefreshToken): string {
  return `v1.${t.tenantId}.${toBase64Url(utf8(t.userId))}.${t.id}.${t.secret}`;
}

/** The parts of a refresh token, or null for anything not of our shape. */
export function parseRefreshToken(token: string): ParsedRefreshToken | null {
  const match = SHAPE.exec(token);
  if (!match) return null;
  try {
    const userId = fromUtf8(fromBase64Url(match[2] as string));
    return { tenantId: match[1] as string, userId, id: match[3] as string, secret: match[4] as string };
  } catch {
    return null;
  }
}

export const newRefreshTokenId = () => randomId("rt_");
export const newRefreshSecret = () => randomToken(32);
export const refreshSecretHash = (secret: string) => hashSecret(secret);

const successorKeys = new Map<string, Promise<CryptoKey>>();

/**
 * The secret of a token's successor, derived (HMAC-SHA256 under a key derived from ENCRYPTION_KEY) from the
 * token's own secret. Deterministic so that the immediately previous token, replayed within the client's
 * leeway, can be answered with the same successor although only hashes are stored (SPEC §3.3).
 */
export async function successorSecret(encryptionKey: string | undefined, secret: string): Promise<string> {
  await fieldCipher(encryptionKey); // the same validation as every credential: never derive from a weak key
  if (!encryptionKey) throw new Error("unreachable: fieldCipher refuses a missing key");
  let key = successorKeys.get(encryptionKey);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", utf8(encryptionKey), "HKDF", false, ["deriveKey"])
      .then((material) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: utf8("gatehouse"), info: utf8("refresh-successor/v1") },
          material,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign"],
        ),
      );
    successorKeys.set(encryptionKey, key);
  }
  const mac = await crypto.subtle.sign("HMAC", await key, utf8(`successor:${secret}`));
  return toBase64Url(new Uint8Array(mac));
}

// The lifetime policy is shared with the user object's cleanup (src/shared/refresh-policy.ts).
export { DEFAULT_REFRESH_LEEWAY_S, refreshLeewayMs, refreshWindows, rotationLifetimes } from "../../../shared/refresh-policy";
