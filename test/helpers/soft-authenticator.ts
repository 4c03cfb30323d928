import { fromBase64Url, toBase64Url } from "../../src/shared/crypto/encoding";

/**
 * A software WebAuthn authenticator for integration tests: ES256 (P-256) credentials, `none` attestation,
 * and assertions signed exactly as WebAuthn Level 2 §6.1 / §6.3.3 describe (authenticator data, SHA-256 of
 * clientDataJSON, DER ECDSA signature). The server verifies them with @simplewebauthn/server, so a test sees
 * the real verification: origin, RP ID hash, challenge, flags, counter and signature.
 */

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor> | { [key: string]: Cbor };

function head(major: number, n: number): number[] {
  if (n < 24) return [(major << 5) | n];
  if (n < 256) return [(major << 5) | 24, n];
  if (n < 65536) return [(major << 5) | 25, n >> 8, n & 0xff];
  return [(major << 5) | 26, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

/** Minimal CBOR (RFC 8949) encoder: integers, text, bytes, arrays, maps. */
export function cbor(value: Cbor): Uint8Array {
  const out: number[] = [];
  const put = (v: Cbor) => {
    if (typeof v === "number") out.push(...(v >= 0 ? head(0, v) : head(1, -1 - v)));
    else if (typeof v === "string") {
      const bytes = new TextEncoder().encode(v);
      out.push(...head(3, bytes.length), ...bytes);
    } else if (v instanceof Uint8Array) out.push(...head(2, v.length), ...v);
    else if (Array.isArray(v)) {
      out.push(...head(4, v.length));
      v.forEach(put);
    } else {
      const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
      out.push(...head(5, entries.length));
      for (const [k, item] of entries) {
        put(k as Cbor);
        put(item);
      }
    }
  };
  put(value);
  return Uint8Array.from(out);
}

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const sha256 = async (data: Uint8Array | string) => new Uint8Array(await crypto.subtle.digest("SHA-256", typeof data === "string" ? new TextEncoder().encode(data) : data));

/** Raw r||s to DER Ecdsa-Sig-Value. */
function der(raw: Uint8Array): Uint8Array {
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

export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

/** One credential on the soft authenticator. */
export interface SoftCredential {
  id: string;
  keys: CryptoKeyPair;
  /** COSE public key, base64url (what the server stores). */
  publicKey: string;
  counter: number;
  userHandle: string | null;
}

export async function newCredential(userHandle: string | null = null): Promise<SoftCredential> {
  const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", keys.publicKey)) as JsonWebKey;
  const cose = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, fromBase64Url(jwk.x as string)], [-3, fromBase64Url(jwk.y as string)]]));
  return { id: toBase64Url(crypto.getRandomValues(new Uint8Array(16))), keys, publicKey: toBase64Url(cose), counter: 0, userHandle };
}

function clientData(type: "webauthn.create" | "webauthn.get", challenge: string, origin: string): string {
  return JSON.stringify({ type, challenge, origin, crossOrigin: false });
}

async function authData(rpId: string, flags: number, counter: number, attested?: Uint8Array): Promise<Uint8Array> {
  const count = Uint8Array.of((counter >>> 24) & 0xff, (counter >>> 16) & 0xff, (counter >>> 8) & 0xff, counter & 0xff);
  return concat(await sha256(rpId), Uint8Array.of(flags), count, attested ?? new Uint8Array());
}

/** A `navigator.credentials.create()` answer in the JSON shape the browser library posts. */
export async function attest(
  credential: SoftCredential,
  options: { challenge: string; rpId: string; origin: string; flags?: number; transports?: string[] },
) {
  const idBytes = fromBase64Url(credential.id);
  const attested = concat(new Uint8Array(16), Uint8Array.of(idBytes.length >> 8, idBytes.length & 0xff), idBytes, fromBase64Url(credential.publicKey));
  const flags = (options.flags ?? FLAGS.UP | FLAGS.UV) | FLAGS.AT;
  const data = await authData(options.rpId, flags, credential.counter, attested);
  const attestationObject = cbor({ fmt: "none", attStmt: {}, authData: data });
  return {
    id: credential.id,
    rawId: credential.id,
    type: "public-key",
    response: {
      clientDataJSON: toBase64Url(new TextEncoder().encode(clientData("webauthn.create", options.challenge, options.origin))),
      attestationObject: toBase64Url(attestationObject),
      transports: options.transports ?? ["usb"],
    },
    clientExtensionResults: {},
  };
}

/** A `navigator.credentials.get()` answer; the counter moves by one unless `counter` fixes it. */
export async function assert(
  credential: SoftCredential,
  options: { challenge: string; rpId: string; origin: string; flags?: number; counter?: number },
) {
  credential.counter = options.counter ?? credential.counter + 1;
  const data = await authData(options.rpId, options.flags ?? FLAGS.UP | FLAGS.UV, credential.counter);
  const clientDataJSON = new TextEncoder().encode(clientData("webauthn.get", options.challenge, options.origin));
  const signed = concat(data, await sha256(clientDataJSON));
  const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, credential.keys.privateKey, signed));
  return {
    id: credential.id,
    rawId: credential.id,
    type: "public-key",
    response: {
      clientDataJSON: toBase64Url(clientDataJSON),
      authenticatorData: toBase64Url(data),
      signature: toBase64Url(der(raw)),
      ...(credential.userHandle ? { userHandle: credential.userHandle } : {}),
    },
    clientExtensionResults: {},
  };
}

/** The WebAuthn options a page embeds (`<script type="application/json" id="webauthn-options">`). */
export function pageOptions(html: string): { challenge: string; rpId?: string; rp?: { id: string }; allowCredentials?: { id: string }[]; user?: { id: string }; userVerification?: string; authenticatorSelection?: Record<string, string> } {
  const json = /<script type="application\/json" id="webauthn-options">(.*?)<\/script>/s.exec(html)?.[1];
  if (!json) throw new Error("no WebAuthn options in the page");
  return JSON.parse(json);
}
