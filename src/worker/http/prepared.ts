import { base64url } from "jose";

/**
 * A response body serialized once (issue 31: JWKS and discovery per configuration snapshot) and answered
 * from its bytes: no JSON.stringify, no header merging per request. The ETag is a strong validator of the
 * bytes (RFC 9110 §8.8.3); a conditional GET whose `If-None-Match` names it gets 304 without a body
 * (RFC 9110 §13.1.2).
 */
export interface PreparedBody {
  bytes: Uint8Array;
  etag: string;
  /** Headers already built for this body, by the caller's key (cache variant and max-age). */
  headers: Map<string, PreparedHeaders>;
}

/**
 * A 200's and a 304's headers, built once. A Response copies a `Headers` init natively (workerd's Headers
 * constructor clones it), with none of the per-pair string conversions a list or a record costs, and never
 * shares it: these objects are never handed out, so they never change.
 */
interface PreparedHeaders {
  ok: Headers;
  notModified: Headers;
}

const encoder = new TextEncoder();

/** The bytes of `text` with their ETag (the first 128 bits of their SHA-256, base64url). */
export async function prepareBody(text: string): Promise<PreparedBody> {
  const bytes = encoder.encode(text);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return { bytes, etag: `"${base64url.encode(digest.slice(0, 16))}"`, headers: new Map() };
}

/** Whether an `If-None-Match` field value matches `etag` (weak comparison, RFC 9110 §13.1.2). */
export function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  const wanted = ifNoneMatch.trim();
  if (wanted === "*") return true;
  return wanted.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

/**
 * A 200 answer of a prepared JSON body (304 when the request already holds it), with the headers that
 * `build` gives for `key`, built on the first request of that key only.
 */
export function preparedJson(request: Request, body: PreparedBody, key: string, build: () => Record<string, string>): Response {
  let headers = body.headers.get(key);
  if (!headers) {
    const common: [string, string][] = [["ETag", body.etag], ...Object.entries(build())];
    headers = { ok: new Headers([["Content-Type", "application/json"], ...common]), notModified: new Headers(common) };
    // A handful of keys per body (two cache variants, max-ages near a key transition): bounded anyway.
    if (body.headers.size > 64) body.headers.clear();
    body.headers.set(key, headers);
  }
  if (matchesEtag(request.headers.get("If-None-Match"), body.etag)) {
    return new Response(null, { status: 304, headers: headers.notModified });
  }
  return new Response(body.bytes, { status: 200, headers: headers.ok });
}
