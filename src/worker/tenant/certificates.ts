/**
 * Certificates for signing keys that pre-date them (issue 14): every key is shown with `cert`, `pkcs7`,
 * `fingerprint` and `thumbprint`, and every JWKS entry carries `x5c`/`x5t`. Keys made since always carry a
 * certificate; an older key gets one the first time anything needs it (JWKS, key listing, SAML), issued
 * here in the worker over the key's own pair and stored by the object only where none exists yet.
 */
import type { Settings } from "../settings";
import { invalidateTenantConfig, tenantConfig } from "./config-cache";
import { legacyCertificate } from "./signing";
import { tenantConfigSource, tenantObject } from "./stubs";

/** Backfills missing certificates of a tenant's keys; a no-op (no RPC) when none is missing. */
export async function ensureCertificates(env: Env, settings: Settings, tenantId: string): Promise<void> {
  // The stub only when a certificate is missing (JWKS requests are served from the snapshot: issue 31).
  const config = await tenantConfig(tenantId, tenantConfigSource(env, tenantId), settings);
  const missing = config.signingKeys.filter((key) => key.cert === null);
  if (!missing.length) return;
  const source = tenantObject(env, tenantId);
  const certificates = await Promise.all(
    missing.map(async (key) => ({ kid: key.kid, cert: await legacyCertificate(env.ENCRYPTION_KEY, key, tenantId) })),
  );
  await source.signingKeys().attachCertificates(certificates);
  invalidateTenantConfig(tenantId);
}
