import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "./encoding";

/**
 * Encryption at rest for credential fields (SPEC §5.12): AES-256-GCM under a key derived with HKDF-SHA256
 * from `ENCRYPTION_KEY`. Each value is bound to its context (for example `client_secret:<client_id>`) as
 * additional authenticated data, so a ciphertext copied into another row or field does not decrypt.
 * Stored form: `enc:v1:<iv>:<ciphertext>` (base64url).
 */
export interface FieldCipher {
  encrypt(plaintext: string, context: string): Promise<string>;
  decrypt(stored: string, context: string): Promise<string>;
}

const PREFIX = "enc:v1:";
const MIN_KEY_LENGTH = 32;

/** Thrown when the deployment has no usable `ENCRYPTION_KEY`: never fall back to plaintext. */
export class EncryptionKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EncryptionKeyError";
  }
}

const cache = new Map<string, Promise<FieldCipher>>();

/** Builds (once per isolate and key) the cipher for a deployment's `ENCRYPTION_KEY`. */
export function fieldCipher(encryptionKey: string | undefined): Promise<FieldCipher> {
  if (!encryptionKey) {
    throw new EncryptionKeyError("ENCRYPTION_KEY is not configured: refusing to store or read credentials");
  }
  if (encryptionKey.length < MIN_KEY_LENGTH) {
    throw new EncryptionKeyError(`ENCRYPTION_KEY must be at least ${MIN_KEY_LENGTH} characters`);
  }
  let cipher = cache.get(encryptionKey);
  if (!cipher) {
    cipher = buildCipher(encryptionKey);
    cache.set(encryptionKey, cipher);
  }
  return cipher;
}

async function buildCipher(secret: string): Promise<FieldCipher> {
  const material = await crypto.subtle.importKey("raw", utf8(secret), "HKDF", false, ["deriveKey"]);
  const key = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: utf8("gatehouse"), info: utf8("at-rest/v1") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  return {
    async encrypt(plaintext, context) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const sealed = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: utf8(context) },
        key,
        utf8(plaintext),
      );
      return `${PREFIX}${toBase64Url(iv)}:${toBase64Url(new Uint8Array(sealed))}`;
    },
    async decrypt(stored, context) {
      if (!stored.startsWith(PREFIX)) throw new EncryptionKeyError("stored credential is not encrypted");
      const [iv, body] = stored.slice(PREFIX.length).split(":");
      try {
        const opened = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: fromBase64Url(iv ?? ""), additionalData: utf8(context) },
          key,
          fromBase64Url(body ?? ""),
        );
        return fromUtf8(new Uint8Array(opened));
      } catch {
        throw new EncryptionKeyError("stored credential cannot be decrypted (was ENCRYPTION_KEY changed?)");
      }
    },
  };
}
