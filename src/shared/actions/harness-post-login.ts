import { CACHE_LIMITS } from "./cache";

/** The longest URL `api.redirect.sendUserTo` may send a browser to, query and `state` included. */
export const MAX_REDIRECT_URL_LENGTH = 4096;

/** `api.multifactor.enable` providers this service can honour (`duo` is refused with its own message). */
export const MFA_PROVIDERS = ["any", "guardian", "google-authenticator"] as const;
/** The reference's factor types `api.authentication.*` accepts here (`email`, `push-notification`: no such factor). */
export const ACTION_FACTORS = ["otp", "phone", "webauthn-platform", "webauthn-roaming", "recovery-code"] as const;

/**
 * The post-login members of the sandbox's `api` that need more than recording a command (issue 32 point 3),
 * as text for the harness module: `api.redirect` (sendUserTo with the login's `state`, HS256 session tokens
 * with `encodeToken`/`validateToken`) and `api.cache` (a mirror of the trigger's entries, checked against the
 * limits as the code writes, so `set` can answer an error). `ctx` is what the host passed for this run:
 * `redirect` (`state`: the one this request came back with, or the fresh one; `next`: the state of a redirect
 * asked for now; whether the login can be interactive; the tenant's domain; the user id) and `cache`.
 */
export const POST_LOGIN_API = `
import { createHmac, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";

const CACHE = ${JSON.stringify(CACHE_LIMITS)};
const MAX_URL = ${MAX_REDIRECT_URL_LENGTH};
const b64u = (text) => Buffer.from(text).toString("base64url");
const hs256 = (secret, input) => createHmac("sha256", secret).update(input).digest("base64url");
const needSecret = (secret, what) => {
  if (typeof secret !== "string" || !secret) throw new TypeError(what + " needs options.secret, a non-empty string");
};
const nowS = () => Math.floor(Date.now() / 1000);

function redirectApi(push, ctx, request) {
  const r = ctx.redirect || null;
  return {
    canRedirect() { return Boolean(r && r.can); },
    sendUserTo(url, options) {
      if (!r || !r.can) throw new Error("api.redirect.sendUserTo cannot be used in this flow: it cannot show a page to the user (refresh token exchange, prompt=none)");
      let target;
      try { target = new URL(String(url)); } catch { target = null; }
      if (!target || (target.protocol !== "https:" && target.protocol !== "http:")) throw new TypeError("api.redirect.sendUserTo needs an absolute http or https URL");
      const query = options === undefined || options === null ? undefined : options.query;
      if (query !== undefined && (query === null || typeof query !== "object")) throw new TypeError("api.redirect.sendUserTo: options.query must be an object");
      for (const [name, value] of Object.entries(query || {})) {
        if (name !== "state" && value !== undefined) target.searchParams.set(name, String(value));
      }
      target.searchParams.set("state", r.next);
      if (target.href.length > MAX_URL) throw new RangeError("api.redirect.sendUserTo: the URL with its query is longer than " + MAX_URL + " characters");
      push({ type: "redirect", url: target.href });
    },
    encodeToken(options) {
      if (!r) throw new Error("api.redirect.encodeToken cannot be used in this flow");
      const { secret, payload, expiresInSeconds } = options || {};
      needSecret(secret, "api.redirect.encodeToken");
      if (payload !== undefined && (payload === null || typeof payload !== "object" || Array.isArray(payload))) throw new TypeError("api.redirect.encodeToken: options.payload must be an object");
      const ttl = expiresInSeconds === undefined ? 900 : Number(expiresInSeconds);
      if (!Number.isFinite(ttl) || ttl <= 0) throw new TypeError("api.redirect.encodeToken: options.expiresInSeconds must be a positive number");
      const iat = nowS();
      const claims = { ...JSON.parse(JSON.stringify(payload || {})), iss: r.domain, sub: r.user_id, iat, exp: iat + Math.floor(ttl), state: r.next };
      const signed = b64u(JSON.stringify({ alg: "HS256", typ: "JWT" })) + "." + b64u(JSON.stringify(claims));
      return signed + "." + hs256(secret, signed);
    },
    validateToken(options) {
      if (!r) throw new Error("api.redirect.validateToken cannot be used in this flow");
      const { secret, tokenParameterName } = options || {};
      needSecret(secret, "api.redirect.validateToken");
      const name = tokenParameterName === undefined ? "session_token" : String(tokenParameterName);
      const token = request.query[name] ?? request.body[name];
      if (typeof token !== "string" || !token) throw new Error("The " + name + " parameter is missing");
      const parts = token.split(".");
      let header = null, claims = null;
      try {
        header = JSON.parse(Buffer.from(parts[0], "base64url").toString());
        claims = JSON.parse(Buffer.from(parts[1], "base64url").toString());
      } catch {}
      if (parts.length !== 3 || !header || !claims || typeof claims !== "object") throw new Error("The " + name + " parameter is not a signed token");
      if (header.alg !== "HS256") throw new Error("The " + name + " must be signed with HS256");
      const expected = Buffer.from(hs256(secret, parts[0] + "." + parts[1]));
      const given = Buffer.from(parts[2]);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new Error("The " + name + " has an invalid signature");
      if (typeof claims.exp !== "number" || claims.exp <= nowS()) throw new Error("The " + name + " has expired");
      if (claims.state !== r.state) throw new Error("The " + name + " was not issued for this login (state mismatch)");
      return claims;
    },
  };
}

const MFA_PROVIDERS = ${JSON.stringify(MFA_PROVIDERS)};
const FACTORS = ${JSON.stringify(ACTION_FACTORS)};

function multifactorApi(push, api) {
  return {
    enable(provider, options) {
      const name = String(provider);
      if (name === "duo") throw new Error("api.multifactor.enable: the duo provider is not supported by this service");
      if (!MFA_PROVIDERS.includes(name)) throw new TypeError("api.multifactor.enable: provider must be one of " + MFA_PROVIDERS.join(", "));
      if (options !== undefined && options !== null && typeof options !== "object") throw new TypeError("api.multifactor.enable: options must be an object");
      push({ type: "mfa", provider: name, allow_remember_browser: Boolean(options && options.allowRememberBrowser === true) });
      return api;
    },
  };
}

// A factor is { type, options? } as the reference has it; the type must be one this service has.
function factorType(factor, what, op) {
  const type = factor && typeof factor === "object" ? String(factor.type) : "";
  if (type === "email" || type === "push-notification") throw new Error(what + ": the " + type + " factor is not available on this service");
  if (!FACTORS.includes(type)) throw new TypeError(what + ": each factor is an object whose type is one of " + FACTORS.join(", "));
  if (op === "enroll" && type === "recovery-code") throw new TypeError(what + ": recovery codes are challenged, not enrolled");
  return type;
}

function authenticationApi(push, api) {
  const request = (op, what, list) => {
    if (!Array.isArray(list) || list.length === 0) throw new TypeError(what + " needs at least one factor");
    if (list.length > 8) throw new TypeError(what + " takes at most 8 factors");
    const factors = [...new Set(list.map((f) => factorType(f, what, op)))];
    push({ type: "authentication", op, factors });
    return api;
  };
  const extra = (options, what) => {
    const more = options === undefined || options === null ? undefined : options.additionalFactors;
    if (more !== undefined && !Array.isArray(more)) throw new TypeError(what + ": options.additionalFactors must be an array");
    return more || [];
  };
  return {
    challengeWith(factor, options) { return request("challenge", "api.authentication.challengeWith", [factor, ...extra(options, "api.authentication.challengeWith")]); },
    challengeWithAny(factors) { return request("challenge", "api.authentication.challengeWithAny", factors); },
    enrollWith(factor, options) { return request("enroll", "api.authentication.enrollWith", [factor, ...extra(options, "api.authentication.enrollWith")]); },
    enrollWithAny(factors) { return request("enroll", "api.authentication.enrollWithAny", factors); },
  };
}

function refreshTokenApi(push, api, event) {
  const refreshing = Boolean(event && event.transaction && event.transaction.protocol === "oauth2-refresh-token");
  return {
    revoke(reason) {
      if (!refreshing) throw new Error("api.refreshToken.revoke can only be used in a refresh token exchange (event.transaction.protocol oauth2-refresh-token)");
      push({ type: "revoke_refresh_token", reason: reason === undefined || reason === null ? null : String(reason) });
      return api;
    },
  };
}

function cacheApi(push, ctx) {
  const entries = new Map((ctx.cache || []).map((e) => [e.key, { value: e.value, expires_at: e.expires_at }]));
  const size = (text) => Buffer.byteLength(text);
  const total = () => { let n = 0; for (const [k, e] of entries) n += size(k) + size(e.value); return n; };
  const fail = (code, message) => ({ type: "error", code, message });
  const keyOf = (key) => (typeof key === "string" ? key : String(key));
  return {
    get(key) {
      const e = entries.get(keyOf(key));
      return e && e.expires_at > Date.now() ? { value: e.value, expires_at: e.expires_at } : undefined;
    },
    set(key, value, options) {
      const k = keyOf(key);
      if (!k || size(k) > CACHE.maxKeyBytes) return fail("INVALID_KEY", "keys are 1 to " + CACHE.maxKeyBytes + " bytes");
      if (typeof value !== "string") return fail("INVALID_VALUE", "values are strings");
      if (size(value) > CACHE.maxValueBytes) return fail("VALUE_TOO_LARGE", "values are at most " + CACHE.maxValueBytes + " bytes");
      const now = Date.now();
      let expires = now + CACHE.defaultTtlMs;
      if (options && options.ttl !== undefined) {
        const ttl = Number(options.ttl);
        if (!(ttl > 0)) return fail("INVALID_TTL", "ttl is a positive number of milliseconds");
        expires = now + ttl;
      } else if (options && options.expires_at !== undefined) {
        const at = Number(options.expires_at);
        if (!(at > now)) return fail("INVALID_TTL", "expires_at is a future time in milliseconds since the epoch");
        expires = at;
      }
      expires = Math.floor(Math.min(expires, now + CACHE.maxTtlMs));
      const before = entries.get(k);
      entries.set(k, { value, expires_at: expires });
      if (entries.size > CACHE.maxEntries || total() > CACHE.maxTotalBytes) {
        if (before) entries.set(k, before); else entries.delete(k);
        return fail("CACHE_FULL", "a trigger caches at most " + CACHE.maxEntries + " entries and " + CACHE.maxTotalBytes + " bytes");
      }
      push({ type: "cache", op: "set", key: k, value, expires_at: expires });
      return { type: "success", record: { value, expires_at: expires } };
    },
    delete(key) {
      const k = keyOf(key);
      entries.delete(k);
      push({ type: "cache", op: "delete", key: k });
      return { type: "success" };
    },
  };
}
`;
