import { EncryptionKeyError } from "../../shared/crypto/encryption";
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../../shared/crypto/encoding";

/**
 * Sealed values (issue 31): short-lived facts the tenant object no longer stores, handed to the browser or
 * the client instead, sealed with AES-256-GCM under a key of their own derived from the deployment's
 * `ENCRYPTION_KEY` (HKDF-SHA256, a random 128-bit salt per value, so no key ever seals two values and
 * the volume never brings a key near the birthday bound of random GCM nonces), with the tenant's id as
 * additional data: a sealed value is unreadable, cannot be altered and does not open in another tenant.
 * Each purpose derives its keys with its own `info`, so a value sealed for one purpose (a login session)
 * never opens as another (an authorization code). Format: `<prefix><salt>.<iv>.<ciphertext>`, base64url.
 * Rotating `ENCRYPTION_KEY` makes the values in flight unreadable (each lives minutes at most).
 */

const MIN_KEY_LENGTH = 32;
/** Longer input is refused unread (no sealed value comes near it). */
const MAX_SEALED_LENGTH = 16_384;

/** The deployment key as HKDF input, imported once per isolate and key. */
const masters = new Map<string, Promise<CryptoKey>>();
function master(encryptionKey: string | undefined, purpose: string): Promise<CryptoKey> {
  if (!encryptionKey || encryptionKey.length < MIN_KEY_LENGTH) throw new EncryptionKeyError(`ENCRYPTION_KEY is not configured: refusing to seal ${purpose}`);
  let key = masters.get(encryptionKey);
  if (!key) {
    key = crypto.subtle.importKey("raw", utf8(encryptionKey), "HKDF", false, ["deriveKey"]);
    masters.set(encryptionKey, key);
  }
  return key;
}

/** What one purpose of sealing is: its prefix and its HKDF `info` (the key separation between purposes). */
export interface SealPurpose {
  prefix: string;
  info: string;
  /** For the error when the deployment key is missing. */
  name: string;
}

async function valueKey(encryptionKey: string | undefined, purpose: SealPurpose, salt: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt, info: utf8(purpose.info) }, await master(encryptionKey, purpose.name), { name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]);
}

/** Seals `body` (JSON) for one tenant: `<prefix><salt>.<iv>.<ciphertext>`. */
export async function seal(encryptionKey: string | undefined, purpose: SealPurpose, tenantId: string, body: unknown): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(tenantId) }, await valueKey(encryptionKey, purpose, salt), utf8(JSON.stringify(body)));
  return `${purpose.prefix}${toBase64Url(salt)}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
}

/** The JSON a sealed value carries, or null when it is not one of this purpose or does not open for this tenant. */
export async function unseal<T>(encryptionKey: string | undefined, purpose: SealPurpose, tenantId: string, value: string): Promise<T | null> {
  if (!value.startsWith(purpose.prefix) || value.length > MAX_SEALED_LENGTH) return null;
  const parts = value.slice(purpose.prefix.length).split(".");
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]+$/.test(part))) return null;
  const [salt, iv, body] = parts.map((part) => fromBase64Url(part)) as [Uint8Array, Uint8Array, Uint8Array];
  if (salt.length !== 16 || iv.length !== 12) return null;
  try {
    const opened = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: utf8(tenantId) }, await valueKey(encryptionKey, purpose, salt), body);
    return JSON.parse(fromUtf8(new Uint8Array(opened))) as T;
  } catch {
    // Not sealed by this deployment's key for this tenant and purpose (or no key at all): not a value.
    return null;
  }
}
