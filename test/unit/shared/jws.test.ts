import { generateKeyPair, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { fromBase64Url, toBase64, toBase64Url } from "../../../src/shared/crypto/encoding";
import { signJwt } from "../../../src/shared/crypto/jwt";

describe("base64url and compact JWS signing", () => {
  it("base64url encodes every length and byte value as RFC 4648 §5 without padding, and round-trips", () => {
    for (let length = 0; length < 200; length++) {
      const bytes = crypto.getRandomValues(new Uint8Array(length));
      const encoded = toBase64Url(bytes);
      expect(encoded).toBe(toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
      expect(fromBase64Url(encoded)).toEqual(bytes);
    }
    expect(toBase64Url(new Uint8Array([0xfb, 0xff, 0xbf]))).toBe("-_-_");
  });

  it("tokens signed with each algorithm verify with jose, carry the header asked for, and a key never signs another algorithm", async () => {
    const cases = [
      { alg: "RS256", options: { modulusLength: 2048 } },
      { alg: "PS256", options: { modulusLength: 2048 } },
      { alg: "ES256", options: {} },
      { alg: "EdDSA", options: {} },
    ];
    for (const { alg, options } of cases) {
      const pair = await generateKeyPair(alg, { ...options, extractable: true });
      const token = await signJwt({ sub: "u1", aud: "urn:api", n: "ü✓" }, pair.privateKey, "kid-1", alg, "at+jwt");
      const { payload, protectedHeader } = await jwtVerify(token, pair.publicKey, { algorithms: [alg] });
      expect(protectedHeader).toEqual({ alg, typ: "at+jwt", kid: "kid-1" });
      expect(payload).toEqual({ sub: "u1", aud: "urn:api", n: "ü✓" });
      // The same key under another algorithm's name is refused, never signed.
      await expect(signJwt({ sub: "u1" }, pair.privateKey, "kid-1", alg === "ES256" ? "RS256" : "ES256")).rejects.toThrow(/cannot sign/);
    }
    // HS256 as an API's or a client's secret is used: its UTF-8 bytes as a WebCrypto HMAC key.
    const raw = new TextEncoder().encode("an API signing secret");
    const secret = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const hs = await signJwt({ sub: "u2" }, secret, undefined, "HS256");
    const verified = await jwtVerify(hs, raw, { algorithms: ["HS256"] });
    expect(verified.protectedHeader).toEqual({ alg: "HS256", typ: "JWT" });
    await expect(signJwt({ sub: "u2" }, secret, undefined, "RS256")).rejects.toThrow(/cannot sign/);
  });
});
