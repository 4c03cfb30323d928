import { RESTRICTED_CLAIMS } from "../../../shared/actions/claims";
import { isReservedKey } from "../../../shared/object-keys";

/**
 * SPEC §6.2: claims the server computes can never be set by tenant data or code; a colliding custom claim
 * is dropped (and reported) while the exchange continues.
 */
export const PROTECTED_CLAIMS: ReadonlySet<string> = RESTRICTED_CLAIMS;

/** Merges custom claims under computed ones; returns the dropped names so callers can log them. */
export function mergeClaims(
  computed: Record<string, unknown>,
  custom: Record<string, unknown> = {},
  options: { allowAzp?: boolean } = {},
): { claims: Record<string, unknown>; dropped: string[] } {
  const dropped: string[] = [];
  const claims = new Map<string, unknown>();
  for (const [name, value] of Object.entries(custom)) {
    if (isReservedKey(name) || (PROTECTED_CLAIMS.has(name) && !(options.allowAzp && name === "azp"))) dropped.push(name);
    else claims.set(name, value);
  }
  return { claims: { ...Object.fromEntries(claims), ...computed }, dropped };
}

/**
 * Computed claims with the custom ones of actions underneath (SPEC §6.2): a protected name never
 * overrides a computed claim, except `azp`, which reaches here only when the host option
 * `unsafeAllowAzpCustomClaim` let it through the dispatch's claim rules.
 */
export function withCustomClaims(computed: Record<string, unknown>, custom: Record<string, unknown> = {}): Record<string, unknown> {
  const { claims } = mergeClaims(computed, custom);
  // Own property only: an `azp` inherited from a prototype tenant code set is no claim (issue 25 finding 3).
  return Object.hasOwn(custom, "azp") && custom.azp !== undefined ? { ...claims, azp: custom.azp } : claims;
}

/** OIDC `at_hash` / `c_hash`: left half of the SHA-256 of the value, base64url (OIDC Core §3.1.3.6). */
export async function halfHash(value: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
  let binary = "";
  for (const b of digest.slice(0, 16)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
