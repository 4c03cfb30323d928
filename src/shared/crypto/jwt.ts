import { importJWK, type JWTPayload, SignJWT } from "jose";
import type { SigningKeyRecord } from "../schemas/signing-keys";
import { encryptionContext } from "./contexts";
import { fieldCipher } from "./encryption";

/**
 * Opens a stored private signing key into a non-extractable CryptoKey. Shared by the worker (every token it
 * signs) and the tenant object (back-channel logout tokens its relay sends; see objects/tenant/backchannel.ts).
 */
export async function importSigningKey(encryptionKey: string | undefined, key: SigningKeyRecord): Promise<CryptoKey> {
  const cipher = await fieldCipher(encryptionKey);
  const jwk = JSON.parse(await cipher.decrypt(key.private_jwk_enc, encryptionContext.signingKey(key.kid)));
  return (await importJWK(jwk, key.alg, { extractable: false })) as CryptoKey;
}

/**
 * Signs a JWT with the given key; `typ` names the token kind (RFC 8725 §3.11 explicit typing). No `kid` for
 * an API's HS256 secret, which is not a published key.
 */
export function signJwt(payload: JWTPayload, key: CryptoKey, kid: string | undefined, alg: string, typ = "JWT"): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg, typ, ...(kid ? { kid } : {}) }).sign(key);
}
