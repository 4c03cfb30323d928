import { createLocalJWKSet, type JWTVerifyGetKey } from "jose";
import { now as clockNow } from "../../shared/clock";
import { nextTransition, publishedKeys } from "../../shared/key-ring";
import type { TenantConfig } from "../../shared/types";
import { type PreparedBody, prepareBody } from "../http/prepared";
import type { Settings } from "../settings";
import { type ConfigSource, memoized, tenantConfig } from "./config-cache";
import { publicJwks, publishedSetKey } from "./signing";

/** The tenant's published keys as a verifier, and exactly the algorithms they carry. */
export interface TenantKeySet {
  keys: JWTVerifyGetKey;
  /** Every verifier passes these to `jwtVerify`: only what the tenant can issue now is accepted. */
  algorithms: string[];
}

/**
 * The verifier for tokens of a tenant at this moment (management auth, userinfo, token exchange, revoke,
 * logout `id_token_hint`). It is memoized per snapshot *and* per published set, so a key that reaches its
 * grace end or expiry drops out (and a scheduled key appears) without a configuration write.
 */
export async function tenantKeySet(tenantId: string, source: ConfigSource, settings: Settings): Promise<TenantKeySet> {
  const now = clockNow();
  const config = await tenantConfig(tenantId, source, settings);
  return memoized(tenantId, source, settings, `jwks-verifier:${publishedSetKey(config, now)}`, async (snapshot) => {
    const jwks = await publicJwks(snapshot, now);
    const algorithms = [...new Set(publishedKeys(snapshot.signingKeys, now).map((k) => k.alg))];
    return { keys: createLocalJWKSet(jwks as never), algorithms };
  });
}

/**
 * The JWKS document of a snapshot for the window between two key transitions (activation, end of grace,
 * expiry): the published set cannot change inside it, so the document and the time of the next transition
 * are computed once per window, not per request (issue 31: the key-ring walk was a fifth of JWKS's CPU), and
 * the document is kept as its bytes with their ETag (the endpoint answers them as they are).
 */
const jwksWindows = new WeakMap<object, { from: number; until: number | null; body: PreparedBody }>();

/** The JWKS document at this moment and how long it may be cached (until the next key transition). */
export async function tenantJwksDocument(
  tenantId: string,
  source: ConfigSource,
  settings: Settings,
  snapshot?: TenantConfig,
): Promise<{ body: PreparedBody; maxAgeS: number }> {
  const now = clockNow();
  const config = snapshot ?? (await tenantConfig(tenantId, source, settings));
  let window = jwksWindows.get(config);
  if (!window || now < window.from || (window.until !== null && now >= window.until)) {
    const body = await memoized(tenantId, source, settings, `jwks:${publishedSetKey(config, now)}`, async (current) =>
      prepareBody(JSON.stringify(await publicJwks(current, now))),
    );
    window = { from: now, until: nextTransition(config.signingKeys, now), body };
    jwksWindows.set(config, window);
  }
  const next = window.until;
  const maxAgeS = Math.max(0, Math.min(86_400, next === null ? 86_400 : Math.floor((next - now) / 1000)));
  return { body: window.body, maxAgeS };
}
