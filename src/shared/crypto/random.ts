import { toBase64Url } from "./encoding";

/** `n` cryptographically random bytes, base64url-encoded. */
export function randomToken(bytes = 32): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

const ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random alphanumeric id with an optional prefix (`cgr_...`, `rs_...`), unbiased by rejection. */
export function randomId(prefix = "", length = 22): string {
  let id = "";
  while (id.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length))) {
      if (b < 248 && id.length < length) id += ALPHANUMERIC[b % 62];
    }
  }
  return prefix + id;
}
