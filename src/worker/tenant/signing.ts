import { exportJWK, generateKeyPair } from "jose";
import { now as clockNow } from "../../shared/clock";
import { encryptionContext } from "../../shared/crypto/contexts";
import { fieldCipher } from "../../shared/crypto/encryption";
import { randomId } from "../../shared/crypto/random";
import { certificateView, issueCertificate, type PrivateJwk, pem } from "../../shared/crypto/x509";
import { DAY_MS, DEFAULT_VALIDITY_DAYS, type KeyType, publishedKeys } from "../../shared/key-ring";
import type { TenantConfig } from "../../shared/types";
import type { Jwk, NewSigningKey, SigningKeyRecord } from "../../shared/schemas/signing-keys";

/** Binds a private key ciphertext to its kid (AES-GCM additional data, SPEC §5.12). */
const keyContext = encryptionContext.signingKey;

/** What a new key pair is for. */
export interface KeyOptions {
  type?: KeyType;
  alg?: string;
  /** Certificate subject and issuer (the tenant). */
  commonName: string;
  validityDays?: number;
  now?: number;
}

/**
 * Generates a tenant signing key pair in the worker (CPU work stays out of the objects), issues its
 * self-signed certificate and encrypts the private half for storage.
 */
export async function generateSigningKey(encryptionKey: string | undefined, options: KeyOptions): Promise<NewSigningKey> {
  const { type = "jwt_signing", alg = "RS256", commonName, now = clockNow() } = options;
  const validityDays = options.validityDays ?? DEFAULT_VALIDITY_DAYS[type];
  const cipher = await fieldCipher(encryptionKey);
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const kid = randomId("", 32);
  const { kty, n, e, crv, x, y } = await exportJWK(publicKey);
  const publicJwk: Jwk = { kty, n, e, crv, x, y, kid, alg, use: "sig" };
  const privateJwk = await exportJWK(privateKey);
  const expiresAt = now + validityDays * DAY_MS;
  const der = await issueCertificate(privateJwk as PrivateJwk, { commonName, notBefore: now, notAfter: expiresAt });
  return {
    kid,
    type,
    alg,
    public_jwk: publicJwk,
    private_jwk_enc: await cipher.encrypt(JSON.stringify(privateJwk), keyContext(kid)),
    cert: pem("CERTIFICATE", der),
    expires_at: expiresAt,
  };
}

/** A new certificate over an existing key pair (same kid, same public key), valid from `now`. */
export async function renewCertificate(
  encryptionKey: string | undefined,
  key: SigningKeyRecord,
  options: { commonName: string; validityDays: number; now: number },
): Promise<{ cert: string; expires_at: number }> {
  const cipher = await fieldCipher(encryptionKey);
  const privateJwk = JSON.parse(await cipher.decrypt(key.private_jwk_enc, keyContext(key.kid))) as PrivateJwk;
  const expiresAt = options.now + options.validityDays * DAY_MS;
  const der = await issueCertificate(privateJwk, { commonName: options.commonName, notBefore: options.now, notAfter: expiresAt });
  return { cert: pem("CERTIFICATE", der), expires_at: expiresAt };
}

/**
 * A certificate for a key made before keys carried one: over its own key pair, valid from its creation to
 * its expiry, or for the longest validity the API allows (3650 days) when it has none. The key's own
 * lifecycle (activation, grace, expiry) is left as it was.
 */
export async function legacyCertificate(encryptionKey: string | undefined, key: SigningKeyRecord, commonName: string): Promise<string> {
  const cipher = await fieldCipher(encryptionKey);
  const privateJwk = JSON.parse(await cipher.decrypt(key.private_jwk_enc, keyContext(key.kid))) as PrivateJwk;
  const notBefore = Date.parse(key.created_at);
  const notAfter = key.expires_at ? Date.parse(key.expires_at) : notBefore + 3650 * DAY_MS;
  return pem("CERTIFICATE", await issueCertificate(privateJwk, { commonName, notBefore, notAfter }));
}

/** One JWKS entry: the public members, plus `x5c`/`x5t` from the certificate (RFC 7517 §4.7-4.8). */
export async function publicJwk(key: SigningKeyRecord): Promise<Jwk> {
  const { kty, n, e, crv, x, y, kid, alg, use } = key.public_jwk;
  const cert = key.cert ? await certificateView(key.cert) : undefined;
  const entry = { kty, use, n, e, crv, x, y, kid, alg, x5t: cert?.x5t, x5c: cert?.x5c };
  return Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)) as Jwk;
}

/**
 * Public keys for the JWKS at `now`: every published jwt_signing key (next keys and keys in their grace
 * period included; revoked, expired and retired keys excluded).
 */
export async function publicJwks(config: TenantConfig, now = clockNow()): Promise<{ keys: Jwk[] }> {
  return { keys: await Promise.all(publishedKeys(config.signingKeys, now).map(publicJwk)) };
}

/** Identifies the published set at `now`, for memoizing values derived from it within one snapshot. */
export const publishedSetKey = (config: TenantConfig, now = clockNow()) =>
  publishedKeys(config.signingKeys, now)
    .map((k) => `${k.kid}:${k.expires_at}`)
    .join(",");

// Key opening and signing live in src/shared/crypto/jwt.ts (the tenant object signs logout tokens too).
export { importSigningKey, signJwt } from "../../shared/crypto/jwt";
