import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

/** The SSO session cookie: `<session id>.<secret>`; only the secret's hash is stored. */
export const SESSION_COOKIE = "gh_session";
/** Double-submit CSRF cookie for the login forms. */
export const CSRF_COOKIE = "gh_csrf";

/**
 * `Secure` is relaxed only for plain-http localhost development (browsers treat localhost as a secure
 * context, but a Secure cookie would not be set over http at all by some clients).
 */
export function isInsecureLocalhost(url: string | URL): boolean {
  const { protocol, hostname } = typeof url === "string" ? new URL(url) : url;
  return protocol === "http:" && (hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "127.0.0.1");
}

interface CookieOptions {
  maxAgeS?: number;
  sameSite?: "Lax" | "Strict" | "None";
  path?: string;
}

/**
 * The attributes a cookie gets on this request's origin. `SameSite=None` needs `Secure` (browsers refuse it
 * otherwise); browsers accept Secure cookies from http://localhost, and on any other plain-http origin
 * `None` falls back to `Lax`.
 */
function attributes(c: Context, sameSite: "Lax" | "Strict" | "None"): { secure: boolean; sameSite: "Lax" | "Strict" | "None" } {
  // One parse of the request URL for both questions (issue 29 point 1: every login page sets a cookie).
  const url = new URL(c.req.url);
  const local = isInsecureLocalhost(url);
  const https = url.protocol === "https:";
  if (sameSite === "None") return https || local ? { secure: true, sameSite } : { secure: false, sameSite: "Lax" };
  // A development deployment (an http ISSUER) reached over plain http on another name, such as a custom
  // domain mapped to this machine: a Secure cookie would never come back. Production issuers are https.
  const developmentHttp = !https && (c.var as { settings?: { issuerProtocol?: string } }).settings?.issuerProtocol === "http:";
  return { secure: !local && !developmentHttp, sameSite };
}

/** Sets an HttpOnly cookie with the service's defaults (Secure except on http://localhost, SameSite). */
export function setSecureCookie(c: Context, name: string, value: string, options: CookieOptions = {}): void {
  setCookie(c, name, value, {
    httpOnly: true,
    ...attributes(c, options.sameSite ?? "Lax"),
    path: options.path ?? "/",
    ...(options.maxAgeS !== undefined ? { maxAge: options.maxAgeS } : {}),
  });
}

export function readCookie(c: Context, name: string): string | undefined {
  return getCookie(c, name);
}

export function clearCookie(c: Context, name: string, path = "/", sameSite: "Lax" | "Strict" | "None" = "Lax"): void {
  deleteCookie(c, name, { path, httpOnly: true, ...attributes(c, sameSite) });
}

/** Headers for every HTML page and /authorize: no framing (clickjacking), no caching. */
export function pageSecurityHeaders(c: Context): void {
  c.header("Content-Security-Policy", "frame-ancestors 'none'; base-uri 'none'; object-src 'none'");
  c.header("X-Frame-Options", "DENY");
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "no-referrer");
  c.header("X-Content-Type-Options", "nosniff");
}
