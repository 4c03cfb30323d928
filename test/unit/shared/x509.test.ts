import { exportJWK, generateKeyPair, importX509 } from "jose";
import { describe, expect, it } from "vitest";
import { certificateView, derOf, issueCertificate, pem, type PrivateJwk } from "../../../src/shared/crypto/x509";

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
