import { createLocalJWKSet } from "jose";
import { OAuthError } from "../../shared/errors";
import type { Settings } from "../settings";
import { memoized } from "./config-cache";
import { currentSigningKey, importSigningKey, publicJwks } from "./signing";
import { tenantObject } from "./stubs";

export interface Signer {
  key: CryptoKey;
  kid: string;
  alg: string;
}

/** The tenant's active signing key, imported once per configuration snapshot. */
export async function activeSigner(env: Env, settings: Settings, tenantId: string): Promise<Signer> {
  return memoized(tenantId, tenantObject(env, tenantId), settings, "signer", async (config) => {
    const record = currentSigningKey(config);
    if (!record) throw new OAuthError("server_error", "The tenant has no active signing key", 500);
    return { key: await importSigningKey(env.ENCRYPTION_KEY, record), kid: record.kid, alg: record.alg };
  });
}

/** The tenant's public JWKS as a jose verifier, built once per configuration snapshot. */
export function jwksVerifier(env: Env, settings: Settings, tenantId: string) {
  return memoized(tenantId, tenantObject(env, tenantId), settings, "jwks-verifier", (config) =>
    createLocalJWKSet(publicJwks(config) as never),
  );
}
