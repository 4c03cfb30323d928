import type { MiddlewareHandler } from "hono";
import { browserOrigins } from "../../shared/schemas/clients";
import type { AppContext, AppEnv } from "../context";
import { resolveTenant } from "../routing/resolve-tenant";
import { memoized } from "../tenant/config-cache";
import { directory, tenantObject } from "../tenant/stubs";

/**
 * The one CORS middleware (issue 7): three policies, one function answering preflight and actual requests.
 * Hono's `cors()` was considered and not used: it sends the allow-methods, allow-headers and credentials
 * headers on refused preflights too, and joins lists without spaces, both visible to clients and tests.
 * Everywhere: `Vary: Origin` once; a refused preflight is 204 without CORS headers.
 */
export interface CorsPolicy {
  /** Whether the request's Origin may read responses; run after the handler on actual requests. */
  allows(c: AppContext, origin: string): boolean | Promise<boolean>;
  /** `any`: every OPTIONS is answered here; `preflight`: only OPTIONS with Access-Control-Request-Method. */
  answers: "any" | "preflight";
  /** Whether methods, headers and max-age need Access-Control-Request-Method (else any allowed OPTIONS). */
  describeOnlyPreflights: boolean;
  methods: string;
  allowHeaders: (c: AppContext) => string;
  maxAgeS: number;
  credentials?: boolean;
  exposeHeaders?: string;
}

function appendVary(headers: Headers): void {
  const vary = headers.get("Vary");
  if (!vary) headers.set("Vary", "Origin");
  else if (!vary.split(",").some((v) => v.trim().toLowerCase() === "origin")) headers.set("Vary", `${vary}, Origin`);
}

/** Builds the middleware of one policy. */
export function cors(policy: CorsPolicy): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header("origin");
    const allowed = async () => origin !== undefined && origin !== "" && (await policy.allows(c, origin));
    const grant = (headers: Headers) => {
      headers.set("Access-Control-Allow-Origin", origin as string);
      if (policy.credentials) headers.set("Access-Control-Allow-Credentials", "true");
    };
    const isPreflight = c.req.method === "OPTIONS" && Boolean(c.req.header("access-control-request-method"));
    if (c.req.method === "OPTIONS" && (policy.answers === "any" || isPreflight)) {
      const headers = new Headers();
      if (await allowed()) {
        grant(headers);
        if (isPreflight || !policy.describeOnlyPreflights) {
          headers.set("Access-Control-Allow-Methods", policy.methods);
          headers.set("Access-Control-Allow-Headers", policy.allowHeaders(c));
          headers.set("Access-Control-Max-Age", String(policy.maxAgeS));
        }
      }
      appendVary(headers);
      return new Response(null, { status: 204, headers });
    }
    await next();
    if (await allowed()) {
      grant(c.res.headers);
      if (policy.exposeHeaders) c.res.headers.set("Access-Control-Expose-Headers", policy.exposeHeaders);
    }
    appendVary(c.res.headers);
  };
}

const normalizeOrigin = (origin: string) => origin.replace(/\/$/, "");

/**
 * Every web origin any application of the tenant lists (plus `extra`), once per configuration snapshot;
 * with `allowedOrigins`, their `allowed_origins` too (the cross-origin login endpoints).
 */
function webOrigins(c: AppContext, tenantId: string, key: string, extra: readonly string[], allowedOrigins = false): Promise<Set<string>> {
  return memoized(tenantId, tenantObject(c.env, tenantId), c.get("settings"), key, (config) => {
    const origins = new Set(extra);
    for (const client of config.clients) {
      for (const origin of allowedOrigins ? browserOrigins(client) : client.web_origins) origins.add(normalizeOrigin(origin));
    }
    return origins;
  });
}

/**
 * /oauth/token and /oauth/revoke: any presented Origin is reflected, POST only (SPEC §4.1 rule 4). These
 * endpoints authenticate the client themselves, so the origin is not a security boundary here.
 */
export const tokenCors = cors({
  allows: () => true,
  answers: "any",
  describeOnlyPreflights: false,
  methods: "POST",
  allowHeaders: () => "Tenant-Id, Content-Type, Auth0-Client, Gatehouse-Client, Upgrade-Insecure-Requests, DPoP",
  maxAgeS: 86_400,
  // RFC 9449 §8: a browser client must be able to read the server's nonce.
  exposeHeaders: "DPoP-Nonce",
});

/**
 * Management API CORS (SPEC §5.10): an origin is allowed when configured (MANAGEMENT_ALLOWED_ORIGINS) or
 * listed in a web_origins of the resolved tenant's applications.
 */
export const managementCors = cors({
  async allows(c, origin) {
    const tenant = await resolveTenant(c.req.raw, c.get("settings"), directory(c.env, c.get("settings"))).catch(() => null);
    if (tenant === null) return false;
    return (await webOrigins(c, tenant.id, "management-origins", c.get("settings").allowedOrigins)).has(origin);
  },
  answers: "preflight",
  describeOnlyPreflights: true,
  methods: "GET, POST, PATCH, PUT, DELETE",
  allowHeaders: (c) => c.req.header("access-control-request-headers") ?? "Authorization, Content-Type",
  maxAgeS: 600,
  // A browser client reads the rate-limit headers (issue 28 point 4) only when they are exposed.
  exposeHeaders: "Content-Type, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset",
});

/**
 * CORS for the browser-facing JSON endpoints (/co/authenticate, /dbconnections/signup). A preflight cannot
 * show which application asks (client_id is in the body), so the header decision covers the web_origins of
 * all the tenant's applications; the handler then refuses, with `assertClientOrigin`, an origin that is not
 * the requesting application's own.
 */
export function browserCors(options: { credentials: boolean }): MiddlewareHandler<AppEnv> {
  return cors({
    allows: async (c, origin) => (await webOrigins(c, c.get("tenant").id, "login-browser-origins", [], true)).has(normalizeOrigin(origin)),
    answers: "any",
    describeOnlyPreflights: true,
    methods: "POST",
    allowHeaders: (c) => c.req.header("access-control-request-headers") ?? "Content-Type",
    maxAgeS: 600,
    credentials: options.credentials,
  });
}
