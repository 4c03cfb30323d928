/** base64url without padding (RFC 4648 §5), for ids, cursors and ciphertexts. */
export function toBase64Url(bytes: Uint8Array): string {
  let out = "";
  const n = bytes.length;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += URL_ALPHABET.charAt(v >> 18) + URL_ALPHABET.charAt((v >> 12) & 63) + URL_ALPHABET.charAt((v >> 6) & 63) + URL_ALPHABET.charAt(v & 63);
  }
  if (i < n) {
    const v = ((bytes[i] as number) << 16) | (i + 1 < n ? (bytes[i + 1] as number) << 8 : 0);
    out += URL_ALPHABET.charAt(v >> 18) + URL_ALPHABET.charAt((v >> 12) & 63);
    if (i + 1 < n) out += URL_ALPHABET.charAt((v >> 6) & 63);
  }
  return out;
}

/** The base64url alphabet (RFC 4648 §5), indexed by 6-bit value. */
const URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Decodes base64url (padding optional); throws on characters outside the alphabet. */
export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("invalid base64url");
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  const binary = atob(padded);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const utf8 = (text: string): Uint8Array => encoder.encode(text);
export const fromUtf8 = (bytes: Uint8Array): string => decoder.decode(bytes);

/** Standard base64 with padding (RFC 4648 §4), for DER certificates and SAML messages. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
