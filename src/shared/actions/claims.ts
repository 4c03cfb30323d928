import { isReservedKey } from "../object-keys";
import type { Json } from "../types";
import type { ActionCommand } from "./sandbox";

/**
 * Claims tenant code can never set (SPEC §6.2, issue 13 point 5): what this server computes, and the
 * reference platform's restricted list ("Create custom claims": OIDC and internal claims). A colliding
 * claim is dropped with a warning; the exchange continues.
 */
export const RESTRICTED_CLAIMS: ReadonlySet<string> = new Set([
  // Computed here.
  "iss", "sub", "aud", "exp", "nbf", "iat", "jti", "azp", "scope", "permissions", "tenant_id", "nonce", "at_hash",
  "c_hash", "auth_time", "sid", "org_id", "org_name", "gty", "acr", "amr",
  // The reference platform's restricted claims.
  "act", "active", "ath", "attest", "authorization_details", "client_id", "cnf", "cty", "dest", "entitlements",
  "events", "groups", "htm", "htu", "internalService", "jcard", "jku", "jwe", "jwk", "kid", "may_act", "mky",
  "object_id", "orig", "origid", "roles", "rph", "s_hash", "sip_callid", "sip_cseq_num", "sip_date",
  "sip_from_tag", "sip_via_branch", "sub_jwk", "toe", "txn", "typ", "uuid", "vot", "vtm", "x5t#S256",
]);

/** Namespaces reserved by the reference platform: a claim under them is dropped. */
const RESERVED_NAMESPACES = ["auth0.com", "webtask.io", "webtask.run"];

/** The reference platform's limit on all custom claims of one token. */
export const MAX_CUSTOM_CLAIMS_BYTES = 100 * 1024;

export interface ClaimRules {
  /** Host option `unsafeAllowAzpCustomClaim`: releases `azp` only. @default false */
  allowAzp?: boolean;
  /** The access token's audience is this service's own management API: only namespaced claims are allowed. */
  systemAudience?: boolean;
}

export interface DroppedClaim {
  claim: string;
  target: "id_token" | "access_token";
  reason: "restricted" | "reserved_name" | "reserved_namespace" | "not_namespaced" | "too_large";
}

/** A namespaced claim is a URL (`https://example.com/roles`); its host must not be a reserved one. */
function namespaceHost(name: string): string | null {
  if (!/^https?:\/\//i.test(name)) return null;
  try {
    return new URL(name).hostname.toLowerCase();
  } catch {
    return "";
  }
}

/**
 * Applies the custom-claim rules to what the actions set for one token (later values win), and reports
 * every dropped claim so the caller can log a warning.
 */
export function customClaims(
  commands: readonly ActionCommand[],
  target: "id_token" | "access_token",
  rules: ClaimRules = {},
): { claims: Record<string, Json>; dropped: DroppedClaim[] } {
  const wanted = new Map<string, Json>();
  for (const c of commands) if (c.type === "claim" && c.target === target) wanted.set(c.name, c.value as Json);
  // Collected in a Map and made an object with own data properties only: assigning `claims["__proto__"]`
  // would set the prototype instead (issue 25 finding 3).
  const claims = new Map<string, Json>();
  const dropped: DroppedClaim[] = [];
  let bytes = 0;
  for (const [name, value] of wanted) {
    const host = namespaceHost(name);
    let reason: DroppedClaim["reason"] | null = null;
    if (isReservedKey(name)) reason = "reserved_name";
    else if (RESTRICTED_CLAIMS.has(name) && !(rules.allowAzp && name === "azp")) reason = "restricted";
    else if (host !== null && RESERVED_NAMESPACES.some((ns) => host === ns || host.endsWith(`.${ns}`))) reason = "reserved_namespace";
    else if (target === "access_token" && rules.systemAudience && host === null) reason = "not_namespaced";
    else {
      bytes += new TextEncoder().encode(JSON.stringify([name, value])).byteLength;
      if (bytes > MAX_CUSTOM_CLAIMS_BYTES) reason = "too_large";
    }
    if (reason) dropped.push({ claim: name, target, reason });
    else claims.set(name, value);
  }
  return { claims: Object.fromEntries(claims), dropped };
}
