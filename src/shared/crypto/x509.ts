/**
 * Self-signed X.509 v3 certificates (RFC 5280) and their PKCS#7 certificate-only chain (RFC 2315 /
 * RFC 5652 "degenerate" SignedData), built with a small DER encoder over WebCrypto so that it runs in
 * workerd without a dependency. Each signing key carries one certificate over its own public key, signed
 * by its own private key, as the reference platform's keys do (`cert`, `pkcs7`, `fingerprint`,
 * `thumbprint`, JWKS `x5c`/`x5t`).
 */
import { toBase64Url } from "./encoding";

type Bytes = Uint8Array;

function concat(parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function length(n: number): Bytes {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** One DER TLV. */
const tlv = (tag: number, ...content: Bytes[]): Bytes => {
  const body = concat(content);
  return concat([Uint8Array.of(tag), length(body.length), body]);
};
const seq = (...c: Bytes[]) => tlv(0x30, ...c);
const set = (...c: Bytes[]) => tlv(0x31, ...c);
const explicit = (n: number, ...c: Bytes[]) => tlv(0xa0 + n, ...c);
const NULL = Uint8Array.of(0x05, 0x00);

/** A non-negative INTEGER from big-endian magnitude bytes (minimal, sign bit cleared). */
function integer(magnitude: Bytes): Bytes {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const trimmed = magnitude.subarray(i);
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? concat([Uint8Array.of(0), trimmed]) : trimmed);
}

function oid(dotted: string): Bytes {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a + b];
  for (const arc of rest) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(out));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. */
function time(ms: number): Bytes {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const year = Number(iso.slice(0, 4));
  return year < 2050 ? tlv(0x17, new TextEncoder().encode(`${iso.slice(2)}Z`)) : tlv(0x18, new TextEncoder().encode(`${iso}Z`));
}

const name = (commonName: string) => seq(set(seq(oid("2.5.4.3"), tlv(0x0c, new TextEncoder().encode(commonName)))));

/** The private key as a JWK (with `d`): what the key generator holds before encrypting it. */
export type PrivateJwk = JsonWebKey & { crv?: string };

interface CertSigner {
  algorithmId: Bytes;
  sign(tbs: Bytes): Promise<Bytes>;
}

/** ECDSA signatures in X.509 are DER `Ecdsa-Sig-Value` (RFC 5480 §2.2), WebCrypto gives raw r||s. */
function ecdsaDer(raw: Bytes): Bytes {
  const half = raw.length / 2;
  return seq(integer(raw.subarray(0, half)), integer(raw.subarray(half)));
}

/**
 * The certificate signature uses the key's own family: sha256WithRSAEncryption for RSA keys (RS256 and
 * PS256 alike, RFC 4055), ecdsa-with-SHA256 for P-256 (RFC 5758), Ed25519 (RFC 8410).
 */
async function certSigner(privateJwk: PrivateJwk): Promise<CertSigner> {
  const { alg: _alg, key_ops: _ops, use: _use, ...jwk } = privateJwk as PrivateJwk & { use?: string };
  if (jwk.kty === "RSA") {
    const key = await crypto.subtle.importKey("jwk", jwk, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
    return {
      algorithmId: seq(oid("1.2.840.113549.1.1.11"), NULL),
      sign: async (tbs) => new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, tbs)),
    };
  }
  if (jwk.kty === "EC" && jwk.crv === "P-256") {
    const key = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    return {
      algorithmId: seq(oid("1.2.840.10045.4.3.2")),
      sign: async (tbs) => ecdsaDer(new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, tbs))),
    };
  }
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") {
    const key = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
    return {
      algorithmId: seq(oid("1.3.101.112")),
      sign: async (tbs) => new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, key, tbs)),
    };
  }
  throw new Error(`Unsupported key type for a certificate: ${jwk.kty}/${jwk.crv ?? ""}`);
}

/** The DER SubjectPublicKeyInfo of the key's public half. */
async function spki(privateJwk: PrivateJwk): Promise<Bytes> {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, alg: _alg, key_ops: _ops, ...pub } = privateJwk;
  const algorithm =
    pub.kty === "RSA"
      ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
      : pub.kty === "EC"
        ? { name: "ECDSA", namedCurve: pub.crv as string }
        : { name: "Ed25519" };
  const key = await crypto.subtle.importKey("jwk", { ...pub, ext: true }, algorithm, true, ["verify"]);
  return new Uint8Array((await crypto.subtle.exportKey("spki", key)) as ArrayBuffer);
}

/** What a certificate states. */
export interface CertificateRequest {
  /** Subject and issuer common name (self-signed). */
  commonName: string;
  notBefore: number;
  notAfter: number;
}

/**
 * Issues a self-signed certificate over the key pair: serial random (RFC 5280 §4.1.2.2, positive, ≤ 20
 * octets), basicConstraints CA:FALSE (critical), keyUsage digitalSignature (critical).
 */
export async function issueCertificate(privateJwk: PrivateJwk, request: CertificateRequest): Promise<Bytes> {
  const signer = await certSigner(privateJwk);
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const TRUE = Uint8Array.of(0x01, 0x01, 0xff);
  const extensions = explicit(
    3,
    seq(
      seq(oid("2.5.29.19"), TRUE, tlv(0x04, seq())),
      // keyUsage: BIT STRING with 7 unused bits, digitalSignature (bit 0).
      seq(oid("2.5.29.15"), TRUE, tlv(0x04, Uint8Array.of(0x03, 0x02, 0x07, 0x80))),
    ),
  );
  const tbs = seq(
    explicit(0, integer(Uint8Array.of(2))),
    integer(serial),
    signer.algorithmId,
    name(request.commonName),
    seq(time(request.notBefore), time(request.notAfter)),
    name(request.commonName),
    await spki(privateJwk),
    extensions,
  );
  const signature = await signer.sign(tbs);
  return seq(tbs, signer.algorithmId, tlv(0x03, Uint8Array.of(0), signature));
}

/** A degenerate PKCS#7 SignedData carrying only the certificate chain (RFC 2315 §9.1, "certs-only"). */
export function pkcs7Chain(certificates: Bytes[]): Bytes {
  const signedData = seq(
    integer(Uint8Array.of(1)),
    set(),
    seq(oid("1.2.840.113549.1.7.1")),
    tlv(0xa0, ...certificates),
    set(),
  );
  return seq(oid("1.2.840.113549.1.7.2"), explicit(0, signedData));
}

function base64(bytes: Bytes): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** PEM armour (RFC 7468), 64-character lines, CRLF line ends as the reference platform emits them. */
export function pem(label: "CERTIFICATE" | "PKCS7", der: Bytes): string {
  const body = base64(der).match(/.{1,64}/g)?.join("\r\n") ?? "";
  return `-----BEGIN ${label}-----\r\n${body}\r\n-----END ${label}-----\r\n`;
}

/** The DER bytes of a PEM certificate. */
export function derOf(pemText: string): Bytes {
  const b64 = pemText.replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
}

/** The public certificate fields of a key as the reference platform presents them. */
export interface CertificateView {
  cert: string;
  pkcs7: string;
  /** SHA-1 of the DER, upper-case hex with colons. */
  fingerprint: string;
  /** SHA-1 of the DER, upper-case hex. */
  thumbprint: string;
  /** JWKS `x5c`: standard base64 DER (RFC 7517 §4.7). */
  x5c: string[];
  /**
   * JWKS `x5t` as the reference platform publishes it: base64url of the upper-case hex thumbprint text (its
   * documented sample JWKS has `x5t` = `kid` = base64url("65AF69...E36B"), the hex SHA-1 of the `x5c`
   * certificate), not of the 20 raw digest bytes that RFC 7517 §4.8 describes. Clients use it only as an
   * identifier, so matching the reference byte for byte is what keeps existing integrations unchanged.
   */
  x5t: string;
}

/** Derives every published representation of a certificate. */
export async function certificateView(certPem: string): Promise<CertificateView> {
  const der = derOf(certPem);
  const sha1 = new Uint8Array(await crypto.subtle.digest("SHA-1", der));
  const hex = [...sha1].map((b) => b.toString(16).padStart(2, "0").toUpperCase());
  return {
    cert: certPem,
    pkcs7: pem("PKCS7", pkcs7Chain([der])),
    fingerprint: hex.join(":"),
    thumbprint: hex.join(""),
    x5c: [base64(der)],
    x5t: toBase64Url(new TextEncoder().encode(hex.join(""))),
  };
}

/** One DER TLV read from `bytes`: its tag and where its contents start and end. */
interface Read {
  tag: number;
  start: number;
  end: number;
}

/**
 * Reads the TLV at `at`, which must end by `limit`; null when it does not fit or is not DER this reader
 * handles (high tag numbers, indefinite or over-long lengths). Never reads past `limit`, never throws.
 */
function readTlv(bytes: Bytes, at: number, limit: number): Read | null {
  if (at + 2 > limit) return null;
  const tag = bytes[at] ?? 0;
  if ((tag & 0x1f) === 0x1f) return null;
  let size = bytes[at + 1] ?? 0;
  let start = at + 2;
  if (size & 0x80) {
    const octets = size & 0x7f;
    if (octets === 0 || octets > 3 || start + octets > limit) return null;
    size = 0;
    for (let i = 0; i < octets; i++) size = size * 256 + (bytes[start + i] ?? 0);
    start += octets;
  }
  if (start + size > limit) return null;
  return { tag, start, end: start + size };
}

/** @default 16384: the longest certificate text accepted (a 4096-bit RSA certificate is under 2 KB). */
export const MAX_CERTIFICATE_CHARS = 16_384;
/** rsaEncryption (1.2.840.113549.1.1.1), as its DER OBJECT IDENTIFIER. */
const RSA_ENCRYPTION = oid("1.2.840.113549.1.1.1");

/** The DER bytes of a certificate given as PEM or as bare base64 DER; null when it is neither. */
export function certificateDer(text: string): Bytes | null {
  if (text.length > MAX_CERTIFICATE_CHARS) return null;
  const armoured = /^\s*-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----\s*$/.exec(text);
  if (text.includes("-----") && !armoured) return null;
  const b64 = (armoured ? (armoured[1] ?? "") : text).replace(/\s+/g, "");
  if (!b64 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) return null;
  try {
    return Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * The DER SubjectPublicKeyInfo of an X.509 certificate (RFC 5280 §4.1) whose key is RSA (rsaEncryption),
 * read by a bounded walk: Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL,
 * serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, ... }, ... }. Null for anything
 * else (not a certificate, truncated, trailing bytes, another key type). The certificate's own signature,
 * validity and extensions are not checked: it only carries the SP's key, as the reference platform uses it.
 */
export function rsaSpkiOfCertificate(der: Bytes): Bytes | null {
  const certificate = readTlv(der, 0, der.length);
  if (certificate?.tag !== 0x30 || certificate.end !== der.length) return null;
  const tbs = readTlv(der, certificate.start, certificate.end);
  if (tbs?.tag !== 0x30) return null;
  let at = tbs.start;
  const first = readTlv(der, at, tbs.end);
  if (first?.tag === 0xa0) at = first.end;
  // serialNumber INTEGER, then signature, issuer, validity and subject, four SEQUENCEs.
  const expected = [0x02, 0x30, 0x30, 0x30, 0x30];
  for (const tag of expected) {
    const field = readTlv(der, at, tbs.end);
    if (!field || field.tag !== tag) return null;
    at = field.end;
  }
  const spki = readTlv(der, at, tbs.end);
  if (spki?.tag !== 0x30) return null;
  const algorithm = readTlv(der, spki.start, spki.end);
  if (algorithm?.tag !== 0x30) return null;
  const algorithmOid = readTlv(der, algorithm.start, algorithm.end);
  if (algorithmOid?.tag !== 0x06) return null;
  const oidContent = der.subarray(algorithmOid.start, algorithmOid.end);
  const rsaContent = RSA_ENCRYPTION.subarray(2);
  if (oidContent.length !== rsaContent.length || !oidContent.every((b, i) => b === rsaContent[i])) return null;
  const key = readTlv(der, algorithm.end, spki.end);
  if (key?.tag !== 0x03 || key.end !== spki.end) return null;
  return der.slice(at, spki.end);
}
