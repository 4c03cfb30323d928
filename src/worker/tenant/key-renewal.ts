import { now as clockNow } from "../../shared/clock";
import { DAY_MS, DEFAULT_VALIDITY_DAYS, KEY_TYPES, signingKeyAt } from "../../shared/key-ring";
import { renewCertificate } from "./signing";
import { tenantObject } from "./stubs";

/** How long before its certificate expires a key that signs is renewed (the cron checks hourly). */
export const RENEW_BEFORE_MS = 30 * DAY_MS;

/**
 * Renews the certificate of every key of the tenant that signs now and expires within RENEW_BEFORE_MS, over
 * the same key pair (kid and public key survive, so no verifier notices), for the bucket's default validity.
 * Without it a tenant nobody rotated for a year would be left with only expired keys. Inherited keys belong
 * to their own tenant, which renews them. Answers the renewed kids.
 */
export async function renewExpiringKeys(env: Env, tenantId: string, at = clockNow()): Promise<string[]> {
  const keys = tenantObject(env, tenantId).signingKeys();
  const renewed: string[] = [];
  for (const type of KEY_TYPES) {
    const own = (await keys.list(type)).filter((k) => !k.inherited);
    for (const alg of new Set(own.map((k) => k.alg))) {
      const signer = signingKeyAt(own, at, type, alg);
      if (!signer?.expires_at || Date.parse(signer.expires_at) - at > RENEW_BEFORE_MS) continue;
      const { cert, expires_at } = await renewCertificate(env.ENCRYPTION_KEY, signer, { commonName: tenantId, validityDays: DEFAULT_VALIDITY_DAYS[type], now: at });
      const result = await keys.renew(type, signer.kid, cert, expires_at);
      if (result.ok) renewed.push(signer.kid);
    }
  }
  return renewed;
}
