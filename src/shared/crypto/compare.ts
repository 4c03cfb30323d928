import { utf8 } from "./encoding";

/**
 * Constant-time string comparison. Both inputs are hashed first so that neither the position of the
 * first difference nor the length of the secret leaks through timing.
 */
export async function timingSafeEqualText(a: string, b: string): Promise<boolean> {
  const [ha, hb] = await Promise.all([sha256(a), sha256(b)]);
  return equalDigests(ha, hb);
}

/** Whether two SHA-256 digests are equal, in time independent of where they differ. */
export function equalDigests(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** SHA-256 of a UTF-8 string. */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(text)));
}
