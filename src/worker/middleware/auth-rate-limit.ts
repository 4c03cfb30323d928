import type { MiddlewareHandler } from "hono";
import { OAuthError } from "../../shared/errors";
import type { AppEnv } from "../context";
import { bindingAllows, countRequest, type LimiterBinding, policyFor, type RateLimitPolicy } from "../management/rate-limit";

/**
 * The authentication endpoints' per-tenant limit (issue 31 point 4, docs/capacity.md): every request of the
 * authentication API and the login pages that reaches a tenant counts against one window per tenant, so that a
 * tenant pushed past its object's capacity gets a prompt 429 `too_many_requests` with `Retry-After` instead of
 * requests queueing in its object until they time out. Discovery, JWKS and CORS preflights are not counted
 * (they never reach the object).
 *
 * Like the management API's limit (src/worker/management/rate-limit.ts): the Workers rate-limit binding
 * AUTH_TENANT_LIMITER (wrangler.toml, keyed by tenant) is the cross-isolate authority, and each isolate keeps a
 * fixed window that enforces the configured limit and says when it ends. Configuration:
 * - AUTH_RATE_LIMIT_TENANT (requests per window per tenant, default 120,000: 2,000/s over a minute)
 * - AUTH_RATE_LIMIT_PERIOD_SECONDS (the window, default 60)
 * - AUTH_RATE_LIMIT_TENANTS: JSON overrides by tenant id or id prefix ending in `*`, e.g.
 *   `{"big-*": {"tenant": 600000}, "small": {"tenant": 6000, "period": 10}}`.
 */
export const AUTH_DEFAULTS: RateLimitPolicy = { client: 120_000, tenant: 120_000, periodSeconds: 60 };

const UNCOUNTED = /^\/\.well-known\//;

export const authRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === "OPTIONS" || UNCOUNTED.test(c.req.path)) return next();
  const env = c.env as unknown as Record<string, unknown> & { AUTH_TENANT_LIMITER?: LimiterBinding };
  const tenantId = c.get("tenant").id;
  const policy = policyFor(env, tenantId, "AUTH_RATE_LIMIT", AUTH_DEFAULTS);
  const periodMs = policy.periodSeconds * 1000;
  const now = Date.now();
  const counted = countRequest(`auth:${tenantId}`, policy.tenant, periodMs, now);
  let resetMs = counted.resetMs;
  let allowed = counted.allowed;
  if (allowed && !(await bindingAllows(env.AUTH_TENANT_LIMITER, tenantId))) {
    // Other isolates served the rest of the window; the binding does not say when it ends: a whole period.
    allowed = false;
    resetMs = Math.max(resetMs, now + periodMs);
  }
  if (!allowed) {
    const retry = Math.max(1, Math.ceil((resetMs - now) / 1000));
    const description = `Too many requests for this tenant (${policy.tenant} per ${policy.periodSeconds} s); retry after ${retry} s`;
    throw new OAuthError("too_many_requests", description, 429).withHeader("Retry-After", String(retry));
  }
  await next();
};
