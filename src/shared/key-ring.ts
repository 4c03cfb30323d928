/**
 * The signing-key lifecycle as a pure function of the stored rows and the time (SPEC §2.9, §4.2 "Signing
 * keys"). Nothing here is written when a key activates, ages out of its grace period or expires: the
 * worker, the JWKS and the management API all derive "which key signs now" and "which keys are published
 * now" from the same times, so a cached configuration snapshot stays correct as the clock moves.
 */
import type { SigningKeyRecord } from "./schemas/signing-keys";

/** Buckets of the management API (`type` query parameter). */
export const KEY_TYPES = ["jwt_signing", "saml_encryption"] as const;
export type KeyType = (typeof KEY_TYPES)[number];

export const DAY_MS = 86_400_000;

/** Default certificate validity per bucket: one year for JWT keys, five years for SAML keys. */
export const DEFAULT_VALIDITY_DAYS: Record<KeyType, number> = { jwt_signing: 365, saml_encryption: 5 * 365 };

/** Default time outgoing keys stay published after their successor activates. */
export const DEFAULT_GRACE_DAYS = 1;

const ms = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

/** In the JWKS (or SAML metadata) at `now`: not revoked, not expired, not past its grace period. */
export function isPublished(key: SigningKeyRecord, now: number): boolean {
  const expires = ms(key.expires_at);
  const retire = ms(key.retire_at);
  return key.revoked_at === null && (expires === null || now < expires) && (retire === null || now < retire);
}

/** Published and past its activation time: may sign, unless a newer active key of its algorithm does. */
export function isActive(key: SigningKeyRecord, now: number): boolean {
  return isPublished(key, now) && Date.parse(key.activates_at) <= now;
}

const newestFirst = (a: SigningKeyRecord, b: SigningKeyRecord) =>
  Date.parse(b.activates_at) - Date.parse(a.activates_at) || Date.parse(b.created_at) - Date.parse(a.created_at);

/**
 * The key that signs now for a bucket and algorithm: the most recently activated active key. When every
 * such key's certificate has expired (nobody renewed or rotated in time: the cron renews current keys well
 * before, see cron.ts), the newest activated key that is not revoked keeps signing, shown `expired`, rather
 * than leaving the tenant unable to issue any token, its management API included.
 */
export function signingKeyAt(keys: readonly SigningKeyRecord[], now: number, type: KeyType = "jwt_signing", alg = "RS256", lastResort = true) {
  const bucket = keys.filter((k) => k.type === type && k.alg === alg);
  const active = bucket.filter((k) => isActive(k, now)).sort(newestFirst)[0];
  if (active || !lastResort) return active;
  return bucket.filter((k) => k.revoked_at === null && Date.parse(k.activates_at) <= now).sort(newestFirst)[0];
}

/** Every key of a bucket published at `now`, newest first; a key that signs is always among them. */
export function publishedKeys(keys: readonly SigningKeyRecord[], now: number, type: KeyType = "jwt_signing") {
  const published = keys.filter((k) => k.type === type && isPublished(k, now));
  for (const alg of new Set(keys.filter((k) => k.type === type).map((k) => k.alg))) {
    const signer = signingKeyAt(keys, now, type, alg);
    if (signer && !published.includes(signer)) published.push(signer);
  }
  return published.sort(newestFirst);
}

/** The role of a key at `now` (reference platform flags). */
export interface KeyRole {
  current: boolean;
  next: boolean;
  previous: boolean;
  expired: boolean;
  revoked: boolean;
}

/**
 * `current`: signs now. `next`: published, activates later. `previous`: the most recently activated key
 * before the current one that is not revoked (still published during its grace period, or not).
 */
export function roleAt(keys: readonly SigningKeyRecord[], key: SigningKeyRecord, now: number): KeyRole {
  const current = signingKeyAt(keys, now, key.type, key.alg);
  const started = Date.parse(key.activates_at) <= now;
  const expires = ms(key.expires_at);
  const earlier = keys
    .filter((k) => k.type === key.type && k.alg === key.alg && k.kid !== current?.kid && k.revoked_at === null)
    .filter((k) => Date.parse(k.activates_at) <= now && (!current || newestFirst(current, k) < 0))
    .sort(newestFirst)[0];
  return {
    current: current?.kid === key.kid,
    next: !started && isPublished(key, now),
    previous: earlier?.kid === key.kid,
    expired: expires !== null && now >= expires,
    revoked: key.revoked_at !== null,
  };
}

/**
 * The next moment after `now` at which the published set or the signing key changes (an activation, the
 * end of a grace period, an expiry), or null. JWKS responses are cacheable until then.
 */
export function nextTransition(keys: readonly SigningKeyRecord[], now: number): number | null {
  const times = keys
    .filter((k) => k.revoked_at === null)
    .flatMap((k) => [ms(k.activates_at), ms(k.retire_at), ms(k.expires_at)])
    .filter((t): t is number => t !== null && t > now);
  return times.length ? Math.min(...times) : null;
}
