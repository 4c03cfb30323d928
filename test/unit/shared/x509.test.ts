import { exportJWK, generateKeyPair, importX509 } from "jose";
import { describe, expect, it } from "vitest";
import { certificateDer, certificateView, derOf, issueCertificate, pem, type PrivateJwk, rsaSpkiOfCertificate } from "../../../src/shared/crypto/x509";

/** A minimal DER reader for the test: the TLVs of one constructed value, each with its raw bytes. */
function children(der: Uint8Array): { tag: number; raw: Uint8Array; body: Uint8Array }[] {
  const read = (at: number) => {
    const tag = der[at] ?? 0;
    let len = der[at + 1] ?? 0;
    let head = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + (der[at + 2 + i] ?? 0);
      head += n;
    }
    return { tag, head, len };
  };
  const outer = read(0);
  const out = [];
  for (let at = outer.head; at < outer.head + outer.len; ) {
    const { tag, head, len } = read(at);
    out.push({ tag, raw: der.subarray(at, at + head + len), body: der.subarray(at + head, at + head + len) });
    at += head + len;
  }
  return out;
}

/** ECDSA-Sig-Value (DER) to WebCrypto's raw r||s. */
function rawEcdsa(sig: Uint8Array): Uint8Array {
  const [r, s] = children(sig).map((c) => {
    const v = c.body[0] === 0 ? c.body.subarray(1) : c.body;
    const out = new Uint8Array(32);
    out.set(v, 32 - v.length);
    return out;
  });
  return Uint8Array.from([...(r ?? []), ...(s ?? [])]);
}

const CASES = [
  { alg: "RS256", importAs: "RS256", verify: { name: "RSASSA-PKCS1-v1_5" } },
  { alg: "PS256", importAs: "RS256", verify: { name: "RSASSA-PKCS1-v1_5" } },
  { alg: "ES256", importAs: "ES256", verify: { name: "ECDSA", hash: "SHA-256" } },
  { alg: "EdDSA", importAs: "EdDSA", verify: { name: "Ed25519" } },
] as const;

describe("self-signed X.509 certificates", () => {
  for (const { alg, importAs, verify } of CASES) {
    it(`${alg}: an independent parser reads the key, and the self-signature verifies`, async () => {
      const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
      const now = Date.UTC(2026, 0, 1);
      const der = await issueCertificate((await exportJWK(privateKey)) as PrivateJwk, { commonName: "acme", notBefore: now, notAfter: now + 86_400_000 });
      const certPem = pem("CERTIFICATE", der);
      expect(derOf(certPem)).toEqual(der);
      const fromCert = await importX509(certPem, importAs, { extractable: true });
      const want = await exportJWK(publicKey);
      const got = await exportJWK(fromCert);
      expect({ n: got.n, e: got.e, x: got.x, y: got.y }).toEqual({ n: want.n, e: want.e, x: want.x, y: want.y });

      const [tbs, , signature] = children(der);
      expect(signature?.tag).toBe(0x03);
      const bits = (signature?.body ?? new Uint8Array()).subarray(1);
      const sig = alg === "ES256" ? rawEcdsa(bits) : bits;
      expect(await crypto.subtle.verify(verify, fromCert, sig, tbs?.raw ?? new Uint8Array())).toBe(true);
      // Validity is encoded as UTCTime (before 2050).
      expect(new TextDecoder().decode(der)).toContain("260101000000Z");

      const view = await certificateView(certPem);
      expect(view.x5c).toEqual([certPem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "")]);
      expect(view.pkcs7).toMatch(/^-----BEGIN PKCS7-----\r\n/);
      expect(view.thumbprint).toMatch(/^[0-9A-F]{40}$/);
    });
  }

  it("uses GeneralizedTime from 2050 (RFC 5280 §4.1.2.5)", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const der = await issueCertificate((await exportJWK(privateKey)) as PrivateJwk, {
      commonName: "acme",
      notBefore: Date.UTC(2049, 11, 31),
      notAfter: Date.UTC(2055, 5, 1),
    });
    const text = new TextDecoder().decode(der);
    expect(text).toContain("491231000000Z");
    expect(text).toContain("20550601000000Z");
  });
});

/**
 * The reference platform's documented sample JWKS (its "JSON Web Key Set properties" page): this x5c with
 * `kid` and `x5t` both "NjVBRjY5MDlCMUIwNzU4RTA2QzZFMDQ4QzQ2MDAyQjVDNjk1RTM2Qg".
 */
const REFERENCE_X5C =
  "MIIC+DCCAeCgAwIBAgIJBIGjYW6hFpn2MA0GCSqGSIb3DQEBBQUAMCMxITAfBgNVBAMTGGN1c3RvbWVyLWRlbW9zLmF1dGgwLmNvbTAeFw0xNjExMjIyMjIyMDVaFw0zMDA4MDEyMjIyMDVaMCMxITAfBgNVBAMTGGN1c3RvbWVyLWRlbW9zLmF1dGgwLmNvbTCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAMnjZc5bm/eGIHq09N9HKHahM7Y31P0ul+A2wwP4lSpIwFrWHzxw88/7Dwk9QMc+orGXX95R6av4GF+Es/nG3uK45ooMVMa/hYCh0Mtx3gnSuoTavQEkLzCvSwTqVwzZ+5noukWVqJuMKNwjL77GNcPLY7Xy2/skMCT5bR8UoWaufooQvYq6SyPcRAU4BtdquZRiBT4U5f+4pwNTxSvey7ki50yc1tG49Per/0zA4O6Tlpv8x7Red6m1bCNHt7+Z5nSl3RX/QYyAEUX1a28VcYmR41Osy+o2OUCXYdUAphDaHo4/8rbKTJhlu8jEcc1KoMXAKjgaVZtG/v5ltx6AXY0CAwEAAaMvMC0wDAYDVR0TBAUwAwEB/zAdBgNVHQ4EFgQUQxFG602h1cG+pnyvJoy9pGJJoCswDQYJKoZIhvcNAQEFBQADggEBAGvtCbzGNBUJPLICth3mLsX0Z4z8T8iu4tyoiuAshP/Ry/ZBnFnXmhD8vwgMZ2lTgUWwlrvlgN+fAtYKnwFO2G3BOCFw96Nm8So9sjTda9CCZ3dhoH57F/hVMBB0K6xhklAc0b5ZxUpCIN92v/w+xZoz1XQBHe8ZbRHaP1HpRM4M7DJk2G5cgUCyu3UBvYS41sHvzrxQ3z7vIePRA4WF4bEkfX12gvny0RsPkrbVMXX1Rj9t6V7QXrbPYBAO+43JvDGYawxYVvLhz+BJ45x50GFQmHszfY3BR9TPK8xmMmQwtIvLu1PMttNCs7niCYkSiUv2sc2mlq1i3IashGkkgmo=";

describe("certificate thumbprints in the reference platform's encoding", () => {
  it("x5t is base64url of the upper-case hex SHA-1 thumbprint, as in the reference's sample JWKS", async () => {
    const view = await certificateView(`-----BEGIN CERTIFICATE-----\n${REFERENCE_X5C}\n-----END CERTIFICATE-----\n`);
    expect(view.thumbprint).toBe("65AF6909B1B0758E06C6E048C46002B5C695E36B");
    expect(view.fingerprint).toBe("65:AF:69:09:B1:B0:75:8E:06:C6:E0:48:C4:60:02:B5:C6:95:E3:6B");
    expect(view.x5t).toBe("NjVBRjY5MDlCMUIwNzU4RTA2QzZFMDQ4QzQ2MDAyQjVDNjk1RTM2Qg");
    expect(view.x5c).toEqual([REFERENCE_X5C]);
  });
});

describe("reading a certificate's RSA public key (signed AuthnRequests)", () => {
  it("finds the SubjectPublicKeyInfo of PEM and bare base64 certificates; null, never a throw, on anything else", async () => {
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
    const der = await issueCertificate((await exportJWK(privateKey)) as PrivateJwk, { commonName: "sp", notBefore: Date.now(), notAfter: Date.now() + 86_400_000 });
    const spki = new Uint8Array((await crypto.subtle.exportKey("spki", publicKey)) as ArrayBuffer);
    expect(rsaSpkiOfCertificate(certificateDer(pem("CERTIFICATE", der)) ?? new Uint8Array())).toEqual(spki);
    const bare = btoa(String.fromCharCode(...der));
    expect(rsaSpkiOfCertificate(certificateDer(bare) ?? new Uint8Array())).toEqual(spki);
    // Every truncation, a trailing byte, flipped length bytes and random bytes: null.
    for (let n = 0; n < der.length; n += 7) expect(rsaSpkiOfCertificate(der.slice(0, n))).toBeNull();
    expect(rsaSpkiOfCertificate(Uint8Array.of(...der, 0))).toBeNull();
    for (const at of [1, 2, 3, 5, 6, 7]) {
      const broken = der.slice();
      broken[at] = 0xff;
      expect(() => rsaSpkiOfCertificate(broken)).not.toThrow();
    }
    for (let i = 0; i < 200; i++) expect(rsaSpkiOfCertificate(crypto.getRandomValues(new Uint8Array(64 + i)))).toBeNull();
    const ec = await generateKeyPair("ES256", { extractable: true });
    const ecDer = await issueCertificate((await exportJWK(ec.privateKey)) as PrivateJwk, { commonName: "sp", notBefore: Date.now(), notAfter: Date.now() + 86_400_000 });
    expect(rsaSpkiOfCertificate(ecDer)).toBeNull();
    for (const text of ["", "-----BEGIN CERTIFICATE-----", "%%%", "AAA", "x".repeat(20_000), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"]) {
      expect(certificateDer(text)).toBeNull();
    }
  });
});
