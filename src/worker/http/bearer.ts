/** RFC 6750 §2.1: `Bearer` and a b64token, nothing else. */
const BEARER = /^Bearer ([A-Za-z0-9\-_.~+/]+=*)$/;

/** The token of an `Authorization: Bearer ...` header, or null when the header is malformed. */
export function parseBearer(header: string): string | null {
  return BEARER.exec(header.trim())?.[1] ?? null;
}
