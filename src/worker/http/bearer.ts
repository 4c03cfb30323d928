/** RFC 6750 §2.1: `Bearer` and a b64token, nothing else. */
const BEARER = /^Bearer ([A-Za-z0-9\-_.~+/]+=*)$/;

/** The token of an `Authorization: Bearer ...` header, or null when the header is malformed. */
export function parseBearer(header: string): string | null {
  return BEARER.exec(header.trim())?.[1] ?? null;
}

/** RFC 9449 §7.1: `DPoP` and the same token68 syntax. */
const DPOP = /^DPoP ([A-Za-z0-9\-_.~+/]+=*)$/;

/** The access token of an `Authorization` header in the Bearer or the DPoP scheme, or null when malformed. */
export function parseAuthorization(header: string): { scheme: "Bearer" | "DPoP"; token: string } | null {
  const bearer = parseBearer(header);
  if (bearer) return { scheme: "Bearer", token: bearer };
  const dpop = DPOP.exec(header.trim())?.[1];
  return dpop ? { scheme: "DPoP", token: dpop } : null;
}
