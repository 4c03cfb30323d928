import { encryptionContext } from "../../shared/crypto/contexts";
import { exportJWK, generateKeyPair, importJWK, type JWTPayload, SignJWT } from "jose";
import { fieldCipher } from "../../shared/crypto/encryption";
import { randomId } from "../../shared/crypto/random";
import type { Jwk, SigningKeyRecord, TenantConfig, TenantSeed } from "../../shared/types";

/** Context string binding a private key ciphertext to its kid (AES-GCM additional data). */

/**
 * Generates a tenant signing key pair in the worker (CPU work stays out of the objects) and encrypts the
 * private half for storage.
 */
export async function generateSigningKey(encryptionKey: string | undefined, alg = "RS256"): Promise<TenantSeed["signingKey"]> {
  const cipher = await fieldCipher(encryptionKey);
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const kid = randomId("", 32);
  const { kty, n, e, crv, x, y } = await exportJWK(publicKey);
  const publicJwk: Jwk = { kty, n, e, crv, x, y, kid, alg, use: "sig" };
  const privateJwk = JSON.stringify(await exportJWK(privateKey));
  return { kid, alg, public_jwk: publicJwk, private_jwk_enc: await cipher.encrypt(privateJwk, encryptionContext.signingKey(kid)) };
}

/** The key that signs now: the current, unrevoked jwt_signing key. */
export function currentSigningKey(config: TenantConfig): SigningKeyRecord | undefined {
  return config.signingKeys.find((k) => k.type === "jwt_signing" && k.is_current && !k.revoked_at);
}

/** Public keys for the JWKS: every unrevoked jwt_signing key (the next and previous ones included). */
export function publicJwks(config: TenantConfig): { keys: Jwk[] } {
  return {
    keys: config.signingKeys
      .filter((k) => k.type === "jwt_signing" && !k.revoked_at)
      .map((k) => {
        const { kty, n, e, crv, x, y, kid, alg, use } = k.public_jwk;
        return Object.fromEntries(Object.entries({ kty, n, e, crv, x, y, kid, alg, use }).filter(([, v]) => v !== undefined)) as Jwk;
      }),
  };
}

/** Opens a stored private key into a non-extractable CryptoKey. */
export async function importSigningKey(encryptionKey: string | undefined, key: SigningKeyRecord): Promise<CryptoKey> {
  const cipher = await fieldCipher(encryptionKey);
  const jwk = JSON.parse(await cipher.decrypt(key.private_jwk_enc, encryptionContext.signingKey(key.kid)));
  return (await importJWK(jwk, key.alg, { extractable: false })) as CryptoKey;
}

/** Signs a JWT with the given key. */
export function signJwt(payload: JWTPayload, key: CryptoKey, kid: string, alg: string, typ = "JWT"): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg, kid, typ }).sign(key);
}
