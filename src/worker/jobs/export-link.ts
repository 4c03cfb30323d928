/**
 * Download links of users exports (issue 14 point 5): `location` is a URL served by this deployment,
 * `/jobs-exports/{tenant}/{job}.{json|csv}.gz?expires=...&signature=...`, signed with HMAC-SHA256 under a key
 * derived (HKDF) from `ENCRYPTION_KEY`. The signature binds the tenant, the job and the expiry, so a link
 * opens one export of one tenant until it expires; anyone holding a live link can download, as with the
 * reference platform's pre-signed storage URLs.
 */
import { nowSeconds } from "../../shared/clock";
import { fromBase64Url, toBase64Url, utf8 } from "../../shared/crypto/encoding";
import { EncryptionKeyError } from "../../shared/crypto/encryption";

/** How long a minted download link stays valid. @default 3,600 s */
export const EXPORT_LINK_TTL_S = 3_600;

const keys = new Map<string, Promise<CryptoKey>>();

function linkKey(secret: string | undefined): Promise<CryptoKey> {
  if (!secret) throw new EncryptionKeyError("ENCRYPTION_KEY is not configured: cannot sign export links");
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey("raw", utf8(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: utf8("gatehouse"), info: utf8("export-link/v1") },
        material,
        { name: "HMAC", hash: "SHA-256", length: 256 },
        false,
        ["sign", "verify"],
      );
    })();
    keys.set(secret, key);
  }
  return key;
}

const message = (tenant: string, job: string, expires: number) => utf8(`${tenant}\n${job}\n${expires}`);

/** The file name of an export: `{job}.json.gz` or `{job}.csv.gz`. */
export const exportFileName = (jobId: string, format: "json" | "csv") => `${jobId}.${format}.gz`;

/** A signed, expiring download URL for a completed export. */
export async function exportLocation(origin: string, secret: string | undefined, tenant: string, jobId: string, format: "json" | "csv"): Promise<string> {
  const expires = nowSeconds() + EXPORT_LINK_TTL_S;
  const signature = await crypto.subtle.sign("HMAC", await linkKey(secret), message(tenant, jobId, expires));
  const url = new URL(`/jobs-exports/${encodeURIComponent(tenant)}/${exportFileName(jobId, format)}`, origin);
  url.searchParams.set("expires", String(expires));
  url.searchParams.set("signature", toBase64Url(new Uint8Array(signature)));
  return url.toString();
}

/** Whether a download link is genuine and unexpired (HMAC verify compares in constant time). */
export async function linkIsValid(secret: string | undefined, tenant: string, jobId: string, expires: string | undefined, signature: string | undefined): Promise<boolean> {
  if (!expires || !signature || !/^\d{1,12}$/.test(expires) || Number(expires) < nowSeconds()) return false;
  let bytes: Uint8Array;
  try {
    bytes = fromBase64Url(signature);
  } catch {
    return false;
  }
  return crypto.subtle.verify("HMAC", await linkKey(secret), bytes, message(tenant, jobId, Number(expires)));
}
