import { verifyAuthenticationResponse } from "@simplewebauthn/server";
import { Hono } from "hono";
import { sha256 } from "../shared/crypto/compare";
import { toBase64Url } from "../shared/crypto/encoding";
import type { AppEnv } from "./context";
import { matchTotp, newTotpSecret, totpCode } from "./login/mfa/totp";

/**
 * Bench-only probes of the MFA verifiers, run in the worker exactly as the login pages run them (mounted with
 * the other /__bench routes when BENCH_ROUTES=1): TOTP code checks (matchTotp: three steps, constant-time)
 * and WebAuthn assertion verifications (@simplewebauthn/server over ES256 assertions made here beforehand).
 */

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const count = (raw: string | undefined, fallback: number, max: number) => Math.min(Math.max(Number(raw ?? fallback) || fallback, 1), max);

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** COSE_Key (RFC 9053) of a P-256 public key: {1: 2, 3: -7, -1: 1, -2: x, -3: y} in canonical CBOR. */
function coseEc2(x: Uint8Array, y: Uint8Array): Uint8Array {
  const bytes = (b: Uint8Array) => concat(Uint8Array.of(0x58, b.length), b);
  return concat(Uint8Array.of(0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21), bytes(x), Uint8Array.of(0x22), bytes(y));
}

function derSignature(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const trimmed = b.subarray(i);
    const body = (trimmed[0] ?? 0) & 0x80 ? concat(Uint8Array.of(0), trimmed) : trimmed;
    return concat(Uint8Array.of(0x02, body.length), body);
  };
  const seq = concat(int(raw.subarray(0, 32)), int(raw.subarray(32)));
  return concat(Uint8Array.of(0x30, seq.length), seq);
}

/** `n` signed assertions of one credential (counters 1..n) over one challenge, and the stored credential. */
async function assertions(n: number, rpId: string, origin: string) {
  const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", keys.publicKey)) as JsonWebKey;
  const fromB64 = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0));
  const publicKey = new Uint8Array(coseEc2(fromB64(jwk.x as string), fromB64(jwk.y as string)));
  const id = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  const clientDataJSON = new TextEncoder().encode(JSON.stringify({ type: "webauthn.get", challenge, origin, crossOrigin: false }));
  const clientHash = await sha256(new TextDecoder().decode(clientDataJSON));
  const rpHash = await sha256(rpId);
  const list = [];
  for (let counter = 1; counter <= n; counter++) {
    const authData = concat(rpHash, Uint8Array.of(0x05), Uint8Array.of(counter >>> 24, (counter >>> 16) & 0xff, (counter >>> 8) & 0xff, counter & 0xff));
    const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, concat(authData, clientHash)));
    list.push({
      id,
      rawId: id,
      type: "public-key" as const,
      response: { clientDataJSON: toBase64Url(clientDataJSON), authenticatorData: toBase64Url(authData), signature: toBase64Url(derSignature(raw)) },
      clientExtensionResults: {},
    });
  }
  return { list, challenge, credential: { id, publicKey, counter: 0 } };
}

export function mfaBenchRoutes(): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  router.get("/totp", async (c) => {
    const n = count(c.req.query("n"), 2000, 50_000);
    const secret = newTotpSecret();
    const at = Date.now();
    const codes = Array.from({ length: 16 }, (_, i) => (i % 2 ? "000000" : totpCode(secret, at)));
    await tick();
    const start = Date.now();
    let matched = 0;
    for (let i = 0; i < n; i++) if ((await matchTotp(secret, codes[i % codes.length] as string, at)) !== null) matched++;
    await tick();
    const ms = Date.now() - start;
    return c.json({ n, matched, ms, per_second: ms > 0 ? Math.round((n * 1000) / ms) : null });
  });
  router.get("/webauthn", async (c) => {
    const n = count(c.req.query("n"), 300, 5000);
    const rpId = "localhost";
    const origin = "http://localhost";
    const { list, challenge, credential } = await assertions(n, rpId, origin);
    await tick();
    const start = Date.now();
    let verified = 0;
    for (const response of list) {
      const result = await verifyAuthenticationResponse({ response, expectedChallenge: challenge, expectedOrigin: origin, expectedRPID: rpId, credential, requireUserVerification: true });
      if (result.verified) {
        verified++;
        credential.counter = result.authenticationInfo.newCounter;
      }
    }
    await tick();
    const ms = Date.now() - start;
    return c.json({ n, verified, ms, per_second: ms > 0 && verified === n ? Math.round((n * 1000) / ms) : null });
  });
  return router;
}
