import { toBase64Url, utf8 } from "../../shared/crypto/encoding";

/**
 * The console application's client secret (issue 30), derived from the deployment's ENCRYPTION_KEY with
 * HMAC-SHA256 under a fixed label: the console and the seed compute the same value, no operator has to
 * keep one more secret, and rotating ENCRYPTION_KEY rotates it (the seed follows at the next start).
 */
export async function consoleClientSecret(encryptionKey: string | undefined): Promise<string> {
  if (!encryptionKey) throw new Error("ENCRYPTION_KEY is not configured: the console has no client secret");
  const key = await crypto.subtle.importKey("raw", utf8(encryptionKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, utf8("gatehouse:console-client-secret:v1"));
  return toBase64Url(new Uint8Array(mac));
}
