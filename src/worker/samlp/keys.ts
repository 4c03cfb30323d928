/**
 * Which keys SAML uses (SPEC §2.9, §4.2 "Signing keys"): the RS256 key that signs now in the
 * `saml_encryption` bucket when the tenant rotated one there, else the tenant's RS256 `jwt_signing` key
 * (the reference platform signs SAML with the tenant's application signing key). Because the signer is
 * derived from the key times, a key in its grace period never signs: during a grace period the current
 * key signs SAML assertions. Metadata lists the signing certificate and, during a scheduled rotation, the
 * next key's, so SPs can trust it before it activates.
 */
import { now as clockNow } from "../../shared/clock";
import { encryptionContext } from "../../shared/crypto/contexts";
import { toBase64 } from "../../shared/crypto/encoding";
import { fieldCipher } from "../../shared/crypto/encryption";
import { derOf } from "../../shared/crypto/x509";
import { type KeyType, roleAt, signingKeyAt } from "../../shared/key-ring";
import { importRsaSigningKey, type SignatureAlgorithm } from "../../shared/saml/xmldsig";
import type { TenantConfig } from "../../shared/types";
import type { SigningKeyRecord } from "../../shared/schemas/signing-keys";
import type { Settings } from "../settings";
import { ensureCertificates } from "../tenant/certificates";
import { memoized, tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";

const ALG = "RS256";

const base64Der = (pemText: string) => toBase64(derOf(pemText));

/** The bucket SAML uses now. */
function samlBucket(config: TenantConfig, now: number): KeyType {
  return signingKeyAt(config.signingKeys, now, "saml_encryption", ALG) ? "saml_encryption" : "jwt_signing";
}

/** The signing key and the certificates to publish (signing first, then next keys), at `now`. */
export function samlKeys(config: TenantConfig, now: number): { signing: SigningKeyRecord | undefined; published: SigningKeyRecord[] } {
  const bucket = samlBucket(config, now);
  const signing = signingKeyAt(config.signingKeys, now, bucket, ALG);
  const next = config.signingKeys.filter((k) => k.type === bucket && k.alg === ALG && roleAt(config.signingKeys, k, now).next);
  return { signing, published: [...(signing ? [signing] : []), ...next] };
}

/** Base64 DER certificates for the metadata, certificates backfilled first for keys that pre-date them. */
export async function metadataCertificates(env: Env, settings: Settings, tenantId: string): Promise<string[]> {
  await ensureCertificates(env, settings, tenantId);
  const config = await tenantConfig(tenantId, tenantObject(env, tenantId), settings);
  return samlKeys(config, clockNow()).published.flatMap((k) => (k.cert ? [base64Der(k.cert)] : []));
}

/** The key that signs SAML now, imported for the hash of the signature algorithm, with its certificate. */
export async function samlSigner(
  env: Env,
  settings: Settings,
  tenantId: string,
  algorithm: SignatureAlgorithm,
): Promise<{ key: CryptoKey; certificate: string } | null> {
  await ensureCertificates(env, settings, tenantId);
  const source = tenantObject(env, tenantId);
  const config = await tenantConfig(tenantId, source, settings);
  const record = samlKeys(config, clockNow()).signing;
  if (!record?.cert) return null;
  const hash = algorithm === "rsa-sha1" ? "SHA-1" : "SHA-256";
  const cert = record.cert;
  return memoized(tenantId, source, settings, `saml-signer:${record.kid}:${hash}`, async () => {
    const cipher = await fieldCipher(env.ENCRYPTION_KEY);
    const jwk = JSON.parse(await cipher.decrypt(record.private_jwk_enc, encryptionContext.signingKey(record.kid))) as JsonWebKey;
    return { key: await importRsaSigningKey(jwk, hash), certificate: base64Der(cert) };
  });
}
