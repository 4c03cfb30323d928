import { BREACHED_PASSWORD_HASHES, BREACHED_PREFIX_BYTES } from "./list.generated";

/**
 * Whether a password is one of the most common breached passwords (scripts/build-breached-passwords.mjs:
 * zxcvbn's list of passwords from leaked sets, the top 10,000). The list ships as sorted 5-byte SHA-256
 * prefixes of the lower-cased passwords (a false match is about one in 10^8), so the check compares
 * "Password1" and "password1" alike, as leaked-password services do for case variants.
 */
let table: Uint8Array | null = null;

function loaded(): Uint8Array {
  table ??= Uint8Array.from(atob(BREACHED_PASSWORD_HASHES), (ch) => ch.charCodeAt(0));
  return table;
}

function compareAt(list: Uint8Array, index: number, prefix: Uint8Array): number {
  const offset = index * BREACHED_PREFIX_BYTES;
  for (let i = 0; i < BREACHED_PREFIX_BYTES; i++) {
    const d = (list[offset + i] as number) - (prefix[i] as number);
    if (d !== 0) return d;
  }
  return 0;
}

export async function isBreachedPassword(password: string): Promise<boolean> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(password.toLowerCase())));
  const prefix = digest.subarray(0, BREACHED_PREFIX_BYTES);
  const list = loaded();
  let lo = 0;
  let hi = list.length / BREACHED_PREFIX_BYTES - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const d = compareAt(list, mid, prefix);
    if (d === 0) return true;
    if (d < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
