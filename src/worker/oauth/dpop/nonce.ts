import { fieldCipher } from "../../../shared/crypto/encryption";
import { toBase64Url, utf8 } from "../../../shared/crypto/encoding";
import { equalDigests } from "../../../shared/crypto/compare";
import type { TenantConfig } from "../../../shared/types";

/**
 * DPoP server nonces (RFC 9449 §8, §9), stateless: a nonce names a time window and carries an HMAC of the
 * tenant and that window under a key derived from ENCRYPTION_KEY, so every isolate issues and checks the
 * same nonces without storage. A nonce is good for its window and the next one (between 5 and 10 minutes).
 */

/** @default 300 */
export const DPOP_NONCE_WINDOW_S = 300;

/** The tenant flag (`PATCH /api/v2/tenants/settings {"flags": {"dpop_require_nonce": true}}`) that requires nonces. */
export const DPOP_NONCE_FLAG = "dpop_require_nonce";

/** Whether the tenant requires DPoP proofs to carry a server nonce. */
export function requiresDpopNonce(config: TenantConfig): boolean {
  const flags = config.settings.flags as Record<string, unknown> | undefined;
  return flags?.[DPOP_NONCE_FLAG] === true;
}

const nonceKeys = new Map<string, Promise<CryptoKey>>();

function nonceKey(encryptionKey: string | undefined): Promise<CryptoKey> {
  const cacheKey = encryptionKey ?? "";
  let key = nonceKeys.get(cacheKey);
  if (!key) {
    key = fieldCipher(encryptionKey).then(() =>
      crypto.subtle
        .importKey("raw", utf8(encryptionKey as string), "HKDF", false, ["deriveKey"])
        .then((material) =>
          crypto.subtle.deriveKey(
            { name: "HKDF", hash: "SHA-256", salt: utf8("gatehouse"), info: utf8("dpop-nonce/v1") },
            material,
            { name: "HMAC", hash: "SHA-256", length: 256 },
            false,
            ["sign"],
          ),
        ),
    );
    nonceKeys.set(cacheKey, key);
    key.catch(() => nonceKeys.delete(cacheKey));
  }
  return key;
}

async function mac(encryptionKey: string | undefined, tenantId: string, window: number): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await nonceKey(encryptionKey), utf8(`dpop-nonce:${tenantId}:${window}`)));
}

const windowAt = (nowS: number) => Math.floor(nowS / DPOP_NONCE_WINDOW_S);

/** The nonce to hand out now (the `DPoP-Nonce` response header). */
export async function currentDpopNonce(encryptionKey: string | undefined, tenantId: string, nowS: number): Promise<string> {
  const window = windowAt(nowS);
  return `${window.toString(36)}.${toBase64Url(await mac(encryptionKey, tenantId, window))}`;
}

/** Whether a proof's nonce is one this tenant issued in the current or the previous window. */
export async function isValidDpopNonce(encryptionKey: string | undefined, tenantId: string, nonce: unknown, nowS: number): Promise<boolean> {
  if (typeof nonce !== "string" || nonce.length > 128) return false;
  const [windowText, given] = nonce.split(".");
  if (!windowText || !given || !/^[0-9a-z]{1,12}$/.test(windowText)) return false;
  const window = Number.parseInt(windowText, 36);
  const current = windowAt(nowS);
  if (window !== current && window !== current - 1) return false;
  const expected = toBase64Url(await mac(encryptionKey, tenantId, window));
  return given.length === expected.length && equalDigests(utf8(given), utf8(expected));
}
