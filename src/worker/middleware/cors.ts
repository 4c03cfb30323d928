import type { MiddlewareHandler } from "hono";
import type { AppContext, AppEnv } from "../context";
import { resolveTenant } from "../routing/resolve-tenant";
import { memoized } from "../tenant/config-cache";
import { directory, tenantObject } from "../tenant/stubs";

/** Request headers a browser may send to /oauth/token and /oauth/revoke (SPEC §4.1 rule 4). */
const TOKEN_ALLOWED_HEADERS = "Tenant-Id, Content-Type, Auth0-Client, Gatehouse-Client, Upgrade-Insecure-Requests";

function appendVary(headers: Headers): void {
  const vary = headers.get("Vary");
  if (!vary) headers.set("Vary", "Origin");
  else if (!vary.split(",").map((v) => v.trim().toLowerCase()).includes("origin")) headers.set("Vary", `${vary}, Origin`);
}

/**
 * /oauth/token and /oauth/revoke: any presented Origin is reflected, POST only (SPEC §4.1 rule 4). These
 * endpoints authenticate the client themselves, so the origin is not a security boundary here.
 */
export const tokenCors: MiddlewareHandler<AppEnv> = async (c, next) => {
  const origin = c.req.header("origin");
  if (c.req.method === "OPTIONS") {
    const headers = new Headers();
    if (origin) {
      headers.set("Access-Control-Allow-Origin", origin);
      headers.set("Access-Control-Allow-Methods", "POST");
      headers.set("Access-Control-Allow-Headers", TOKEN_ALLOWED_HEADERS);
      headers.set("Access-Control-Max-Age", "86400");
    }
    appendVary(headers);
    return new Response(null, { status: 204, headers });
  }
  await next();
  if (origin) c.res.headers.set("Access-Control-Allow-Origin", origin);
  appendVary(c.res.headers);
};

/** The management origins of a tenant: configured allowedOrigins plus every client's web_origins, once per snapshot. */
async function managementOrigins(c: AppContext, tenantId: string): Promise<Set<string>> {
  return memoized(tenantId, tenantObject(c.env, tenantId), c.var.settings, "management-origins", (config) => {
    const origins = new Set(c.var.settings.allowedOrigins);
    for (const client of config.clients) for (const origin of client.web_origins) origins.add(origin.replace(/\/$/, ""));
    return origins;
  });
}

/**
 * Management API CORS (SPEC §5.10): an origin is allowed when configured or listed in a web_origins of the
 * resolved tenant's applications. Preflight and actual responses come from this one function; `Vary: Origin`
 * is sent once; a refused preflight is 204 without CORS headers.
 */
export const managementCors: MiddlewareHandler<AppEnv> = async (c, next) => {
  const origin = c.req.header("origin");
  const allowed = async () => {
    if (!origin) return false;
    const tenant = await resolveTenant(c.req.raw, c.var.settings, directory(c.env, c.var.settings)).catch(() => null);
    return tenant !== null && (await managementOrigins(c, tenant.id)).has(origin);
  };
  if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method")) {
    const headers = new Headers();
    if (await allowed()) {
      headers.set("Access-Control-Allow-Origin", origin as string);
      headers.set("Access-Control-Allow-Methods", "GET, POST, PATCH, PUT, DELETE");
      headers.set("Access-Control-Allow-Headers", c.req.header("access-control-request-headers") ?? "Authorization, Content-Type");
      headers.set("Access-Control-Max-Age", "600");
    }
    appendVary(headers);
    return new Response(null, { status: 204, headers });
  }
  await next();
  if (await allowed()) {
    c.res.headers.set("Access-Control-Allow-Origin", origin as string);
    c.res.headers.set("Access-Control-Expose-Headers", "Content-Type");
  }
  appendVary(c.res.headers);
};
