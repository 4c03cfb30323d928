import type { MiddlewareHandler } from "hono";
import { OAuthError } from "../../shared/errors";
import type { ClientRecord } from "../../shared/types";
import type { AppContext, AppEnv } from "../context";
import { memoized } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";

const normalizeOrigin = (origin: string) => origin.replace(/\/$/, "");

/** Every web origin any application of the tenant lists, once per configuration snapshot. */
function tenantWebOrigins(c: AppContext): Promise<Set<string>> {
  const id = c.var.tenant.id;
  return memoized(id, tenantObject(c.env, id), c.var.settings, "login-web-origins", (config) => {
    const origins = new Set<string>();
    for (const client of config.clients) for (const origin of client.web_origins) origins.add(normalizeOrigin(origin));
    return origins;
  });
}

function appendVary(headers: Headers): void {
  const vary = headers.get("Vary");
  if (!vary) headers.set("Vary", "Origin");
  else if (!vary.split(",").some((v) => v.trim().toLowerCase() === "origin")) headers.set("Vary", `${vary}, Origin`);
}

/**
 * CORS for the browser-facing JSON endpoints (/co/authenticate, /dbconnections/signup). A preflight cannot
 * show which application asks (client_id is in the body), so the header decision covers the web_origins of
 * all the tenant's applications; the handler then refuses, with `assertClientOrigin`, an origin that is not
 * the requesting application's own. One function answers preflight and actual requests; `Vary: Origin`
 * once; a refused preflight is 204 without CORS headers (as on the management API).
 */
export function browserCors(options: { credentials: boolean }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header("origin");
    const allowed = origin !== undefined && (await tenantWebOrigins(c)).has(normalizeOrigin(origin));
    const grant = (headers: Headers) => {
      if (!allowed) return;
      headers.set("Access-Control-Allow-Origin", origin);
      if (options.credentials) headers.set("Access-Control-Allow-Credentials", "true");
    };
    if (c.req.method === "OPTIONS") {
      const headers = new Headers();
      grant(headers);
      if (allowed && c.req.header("access-control-request-method")) {
        headers.set("Access-Control-Allow-Methods", "POST");
        headers.set("Access-Control-Allow-Headers", c.req.header("access-control-request-headers") ?? "Content-Type");
        headers.set("Access-Control-Max-Age", "600");
      }
      appendVary(headers);
      return new Response(null, { status: 204, headers });
    }
    await next();
    grant(c.res.headers);
    appendVary(c.res.headers);
  };
}

/**
 * A browser request (one with an Origin) must come from the application's own web_origins. Requests
 * without Origin come from servers, where CORS has no meaning.
 */
export function assertClientOrigin(c: AppContext, client: ClientRecord): void {
  const origin = c.req.header("origin");
  if (origin === undefined) return;
  if (!client.web_origins.some((o) => normalizeOrigin(o) === normalizeOrigin(origin))) {
    throw new OAuthError("access_denied", `Origin ${origin} is not allowed for this application`, 403);
  }
}
