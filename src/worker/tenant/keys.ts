import { signingKeyAt } from "../../shared/key-ring";
import { OAuthError } from "../../shared/errors";
import type { Settings } from "../settings";
import { memoized, tenantConfig } from "./config-cache";
import { importSigningKey } from "./signing";
import { tenantObject } from "./stubs";

export interface Signer {
  key: CryptoKey;
  kid: string;
  alg: string;
}

/**
 * The key that signs now, imported once per snapshot and kid. Which key signs is computed from the
 * activation and expiry times at each call, so a key scheduled with `activate_in_days` takes over (and an
 * expired one stops) without any write or cache invalidation (SPEC §4.2 "Signing keys").
 */
export async function activeSigner(env: Env, settings: Settings, tenantId: string, alg = "RS256"): Promise<Signer> {
  const source = tenantObject(env, tenantId);
  const config = await tenantConfig(tenantId, source, settings);
  const record = signingKeyAt(config.signingKeys, Date.now(), "jwt_signing", alg);
  if (!record) throw new OAuthError("server_error", "The tenant has no active signing key", 500);
  return memoized(tenantId, source, settings, `signer:${record.kid}`, async () => ({
    key: await importSigningKey(env.ENCRYPTION_KEY, record),
    kid: record.kid,
    alg: record.alg,
  }));
}
