import { env, runInDurableObject } from "cloudflare:test";
import { exportJWK, importX509 } from "jose";
import { describe, expect, it } from "vitest";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { createTenant } from "../helpers/api";
import { jwks, listKeys, onTenant } from "../helpers/keys";

/**
 * Keys made before keys carried certificates (issue 14 point 1): they get one over their own key pair the
 * first time anything needs it, so every key has cert/pkcs7/fingerprint/thumbprint and every JWKS entry
 * has x5c/x5t.
 */

/**
 * Turns the tenant's keys into keys of the pre-certificate era (no cert value) before this isolate has read
 * the tenant's configuration again, and answers each key's stored times.
 */
async function dropCertificates(tenantId: string): Promise<{ kid: string; created_at: number; expires_at: number }[]> {
  return runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => {
    const sql = (o as unknown as { ctx: DurableObjectState }).ctx.storage.sql;
    sql.exec("UPDATE signing_keys SET cert = NULL");
    return sql.exec<{ kid: string; created_at: number; expires_at: number }>("SELECT kid, created_at, expires_at FROM signing_keys").toArray();
  });
}

/** notBefore and notAfter of a certificate: its first two UTCTime values (tag 0x17, 13 characters). */
function validity(pem: string): [number, number] {
  const der = atob(pem.replace(/-----[A-Z ]+-----|\s/g, ""));
  // UTCTime: tag 0x17, length 13 (String.fromCharCode keeps the control characters out of a regex literal).
  const marker = String.fromCharCode(0x17, 0x0d);
  const times = [...der.matchAll(new RegExp(`${marker}(\\d{12})Z`, "g"))].map((m) => {
    const t = m[1] ?? "";
    return Date.UTC(2000 + Number(t.slice(0, 2)), Number(t.slice(2, 4)) - 1, Number(t.slice(4, 6)), Number(t.slice(6, 8)), Number(t.slice(8, 10)), Number(t.slice(10, 12)));
  });
  return [times[0] ?? Number.NaN, times[1] ?? Number.NaN];
}

describe("certificates for keys that pre-date them", () => {
  it("a key without a certificate is listed with one over its own public key, the same on every read", async () => {
    const tenant = await createTenant();
    const rotated = await onTenant(tenant, "POST", "/keys/signing/rotate", { grace_days: 3 });
    expect(rotated.status).toBe(201);
    await dropCertificates(tenant);

    const keys = await listKeys(tenant);
    expect(keys).toHaveLength(2);
    const published = (await jwks(tenant)).keys;
    for (const key of keys) {
      expect(key.cert).toMatch(/^-----BEGIN CERTIFICATE-----\r\n/);
      expect(key.pkcs7).toMatch(/^-----BEGIN PKCS7-----\r\n/);
      expect(key.thumbprint).toMatch(/^[0-9A-F]{40}$/);
      expect(key.fingerprint.replace(/:/g, "")).toBe(key.thumbprint);
      const fromCert = await exportJWK(await importX509(key.cert, "RS256", { extractable: true }));
      const entry = published.find((k) => k.kid === key.kid);
      expect(entry, "both keys are in their grace or current: published").toBeDefined();
      expect(entry).toMatchObject({ n: fromCert.n, e: fromCert.e, x5c: [expect.any(String)], x5t: expect.any(String) });
      expect(entry?.x5t).toBe(btoa(key.thumbprint).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
    }
    // Issued once: a second read answers the same certificate.
    expect((await listKeys(tenant)).map((k) => k.cert)).toEqual(keys.map((k) => k.cert));
  });

  it("the JWKS alone backfills: x5c appears without any management call", async () => {
    const tenant = await createTenant();
    await dropCertificates(tenant);
    const [entry] = (await jwks(tenant)).keys;
    expect(entry?.x5c).toEqual([expect.any(String)]);
    const [key] = await listKeys(tenant);
    expect(key?.cert.replace(/-----[A-Z ]+-----|\s/g, "")).toBe((entry?.x5c as string[] | undefined)?.[0]);
  });

  it("the backfilled certificate runs from the key's creation to its expiry", async () => {
    const tenant = await createTenant();
    const [stored] = await dropCertificates(tenant);
    const [key] = await listKeys(tenant);
    expect(key?.kid).toBe(stored?.kid);
    const [validFrom, validTo] = validity(key?.cert ?? "");
    // Whole seconds in the certificate.
    expect(Math.abs(validFrom - (stored?.created_at ?? 0))).toBeLessThan(1000);
    expect(Math.abs(validTo - (stored?.expires_at ?? 0))).toBeLessThan(1000);
    expect(Date.parse(key?.expires_at ?? "")).toBe(stored?.expires_at);
  });
});
