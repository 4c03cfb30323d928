import { now } from "../../shared/clock";
import { OAuthError } from "../../shared/errors";
import { signingKeyAt } from "../../shared/key-ring";
import type { Settings } from "../settings";
import { memoized, tenantConfig } from "./config-cache";
import { type TenantKeySet, tenantKeySet } from "./key-ring";
import { importSigningKey } from "./signing";
import { tenantObject } from "./stubs";

export interface Signer {
  key: CryptoKey;
  kid: string;
  alg: string;
}

/**
 * The key that signs now for an algorithm, imported once per snapshot and kid. Which key signs is computed
 * from the activation and expiry times at each call, so a key scheduled with `activate_in_days` takes over
 * (and an expired one stops) without any write or cache invalidation (SPEC §4.2 "Signing keys").
 */
export async function activeSigner(env: Env, settings: Settings, tenantId: string, alg = "RS256"): Promise<Signer> {
  const source = tenantObject(env, tenantId);
  const config = await tenantConfig(tenantId, source, settings);
  const record = signingKeyAt(config.signingKeys, now(), "jwt_signing", alg);
  if (!record) throw new OAuthError("server_error", "The tenant has no active signing key", 500);
  return memoized(tenantId, source, settings, `signer:${record.kid}`, async () => ({
    key: await importSigningKey(env.ENCRYPTION_KEY, record),
    kid: record.kid,
    alg: record.alg,
  }));
}

/**
 * The tenant's published keys at this moment as a jose verifier, with exactly the algorithms they carry:
 * every verifier (management auth, userinfo, token exchange, revoke, logout hint) passes both to jwtVerify.
 */
export function jwksVerifier(env: Env, settings: Settings, tenantId: string): Promise<TenantKeySet> {
  return tenantKeySet(tenantId, tenantObject(env, tenantId), settings);
}
