import { importJWK, type JWTPayload } from "jose";
import type { SigningKeyRecord } from "../schemas/signing-keys";
import { encryptionContext } from "./contexts";
import { fieldCipher } from "./encryption";
import { toBase64Url, utf8 } from "./encoding";

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
 * Signs a JWT (RFC 7515 compact serialization) with the given key; `typ` names the token kind (RFC 8725
 * §3.11 explicit typing). No `kid` for an API's HS256 secret, which is not a published key. One WebCrypto
 * call over a cached protected header: the token endpoint signs on every request, and a general JOSE library
 * spent as long building the token as signing it (docs/benchmarks.md). Verification stays with `jose`.
 */
export async function signJwt(payload: JWTPayload, key: CryptoKey, kid: string | undefined, alg: string, typ = "JWT"): Promise<string> {
  const input = `${protectedHeader(alg, typ, kid)}.${toBase64Url(utf8(JSON.stringify(payload)))}`;
  const signature = await crypto.subtle.sign(signatureParams(alg, key), key, utf8(input));
  return `${input}.${toBase64Url(new Uint8Array(signature))}`;
}

const headers = new Map<string, string>();

/** The base64url protected header for an algorithm, type and key id (few distinct values; cached). */
function protectedHeader(alg: string, typ: string, kid: string | undefined): string {
  const cacheKey = `${alg} ${typ} ${kid ?? ""}`;
  let header = headers.get(cacheKey);
  if (!header) {
    if (headers.size >= 1000) headers.clear();
    header = toBase64Url(utf8(JSON.stringify({ alg, typ, ...(kid ? { kid } : {}) })));
    headers.set(cacheKey, header);
  }
  return header;
}

/**
 * WebCrypto parameters of a JWS algorithm (RFC 7518 §3, RFC 8037), checked against the key so a key can never
 * sign under another algorithm's name. ECDSA signatures come out as R || S, the JWS form.
 */
function signatureParams(alg: string, key: CryptoKey): Parameters<SubtleCrypto["sign"]>[0] {
  const name = key.algorithm.name;
  const hash = (key.algorithm as { hash?: { name?: string } }).hash?.name;
  switch (alg) {
    case "RS256":
      if (name === "RSASSA-PKCS1-v1_5" && hash === "SHA-256") return { name };
      break;
    case "RS512":
      if (name === "RSASSA-PKCS1-v1_5" && hash === "SHA-512") return { name };
      break;
    case "PS256":
      if (name === "RSA-PSS" && hash === "SHA-256") return { name, saltLength: 32 };
      break;
    case "ES256":
      if (name === "ECDSA" && (key.algorithm as { namedCurve?: string }).namedCurve === "P-256") return { name, hash: "SHA-256" };
      break;
    case "EdDSA":
      if (name === "Ed25519" || name === "NODE-ED25519") return key.algorithm;
      break;
    case "HS256":
      if (name === "HMAC" && hash === "SHA-256") return { name };
      break;
  }
  throw new TypeError(`a ${name} key cannot sign ${alg}`);
}
