import type { MiddlewareHandler } from "hono";
import { problem } from "../../shared/errors";
import type { AppEnv } from "../context";

/**
 * Rate limits on the management API (issue 28 point 4), per target tenant and per client within it.
 *
 * Every answer after authentication carries the reference platform's headers: `x-ratelimit-limit`,
 * `x-ratelimit-remaining` and `x-ratelimit-reset` (the UNIX time, in seconds, when the window ends). Over the
 * limit the answer is 429 `too_many_requests` with `Retry-After` (seconds), which the `auth0` SDK and the
 * deploy CLI wait out before retrying.
 *
 * Two sources of truth, on purpose:
 * - The Workers rate-limit bindings (MANAGEMENT_CLIENT_LIMITER, MANAGEMENT_TENANT_LIMITER in wrangler.toml)
 *   count across every isolate and location, so they are the authority for the generous default: when one
 *   says no, the answer is 429 whatever this isolate counted. Their `limit()` answers only `{ success }`: no
 *   remaining count and no reset time, so they cannot fill the headers.
 * - So each isolate also keeps an honest fixed window per key (below), which gives the headers their numbers
 *   and enforces the configured limit. With several isolates the headers describe this isolate's view: a
 *   client spread over isolates may be refused by the binding while a header still shows some remaining (the
 *   429 then says `remaining: 0` and waits a whole binding period, which is never shorter than the truth).
 *
 * Configuration (environment variables; the binding's own limit and period live in wrangler.toml and should be
 * kept equal to the defaults here or above them):
 * - MANAGEMENT_RATE_LIMIT_CLIENT (requests per window per client of a tenant, default 1000)
 * - MANAGEMENT_RATE_LIMIT_TENANT (requests per window for all clients of a tenant together, default 5000)
 * - MANAGEMENT_RATE_LIMIT_PERIOD_SECONDS (the window, default 60)
 * - MANAGEMENT_RATE_LIMIT_TENANTS: JSON overrides for chosen tenants, by id or id prefix ending in `*`:
 *   `{"big-*": {"client": 5000, "tenant": 20000}, "acme": {"period": 10}}` (the longest matching key wins).
 */

export interface RateLimitPolicy {
  client: number;
  tenant: number;
  periodSeconds: number;
}

const DEFAULTS: RateLimitPolicy = { client: 1000, tenant: 5000, periodSeconds: 60 };

type Vars = Record<string, unknown>;

const positive = (value: unknown, fallback: number) => {
  const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

const parsedOverrides = new Map<string, Record<string, Partial<Record<"client" | "tenant" | "period", unknown>>>>();

function overridesFrom(raw: unknown): Record<string, Partial<Record<"client" | "tenant" | "period", unknown>>> {
  if (typeof raw !== "string" || raw.trim() === "") return {};
  let cached = parsedOverrides.get(raw);
  if (!cached) {
    try {
      const value = JSON.parse(raw) as unknown;
      cached = value && typeof value === "object" && !Array.isArray(value) ? (value as typeof cached & object) : {};
    } catch {
      // A malformed override must not take the API down: the defaults apply (and the operator sees no override).
      cached = {};
    }
    parsedOverrides.set(raw, cached);
  }
  return cached;
}

/**
 * The policy for one tenant: defaults, then the environment, then the longest matching override. `prefix`
 * names the variables (`{prefix}_CLIENT`, `_TENANT`, `_PERIOD_SECONDS`, `_TENANTS`): the management API's,
 * or the authentication endpoints' (src/worker/middleware/auth-rate-limit.ts).
 */
export function policyFor(env: Vars, tenantId: string, prefix = "MANAGEMENT_RATE_LIMIT", defaults: RateLimitPolicy = DEFAULTS): RateLimitPolicy {
  const base: RateLimitPolicy = {
    client: positive(env[`${prefix}_CLIENT`], defaults.client),
    tenant: positive(env[`${prefix}_TENANT`], defaults.tenant),
    periodSeconds: positive(env[`${prefix}_PERIOD_SECONDS`], defaults.periodSeconds),
  };
  let best: { length: number; value: Partial<Record<"client" | "tenant" | "period", unknown>> } | null = null;
  for (const [key, value] of Object.entries(overridesFrom(env[`${prefix}_TENANTS`]))) {
    const matches = key.endsWith("*") ? tenantId.startsWith(key.slice(0, -1)) : tenantId === key;
    if (matches && (!best || key.length > best.length) && value && typeof value === "object") best = { length: key.length, value };
  }
  if (!best) return base;
  return {
    client: positive(best.value.client, base.client),
    tenant: positive(best.value.tenant, base.tenant),
    periodSeconds: positive(best.value.period, base.periodSeconds),
  };
}

interface Window {
  start: number;
  count: number;
}

/** This isolate's fixed windows, keyed `{kind}:{tenant}[:{client}]`; expired ones are swept when it grows. */
const windows = new Map<string, Window>();
const SWEEP_AT = 10_000;

/** Counts one request in a key's window; returns what is left and when the window ends (ms). */
export function countRequest(key: string, limit: number, periodMs: number, now = Date.now()): { allowed: boolean; remaining: number; resetMs: number } {
  if (windows.size >= SWEEP_AT) {
    for (const [k, w] of windows) if (now - w.start >= periodMs) windows.delete(k);
  }
  let window = windows.get(key);
  if (!window || now - window.start >= periodMs) {
    window = { start: now, count: 0 };
    windows.set(key, window);
  }
  const allowed = window.count < limit;
  if (allowed) window.count++;
  return { allowed, remaining: Math.max(0, limit - window.count), resetMs: window.start + periodMs };
}

export interface LimiterBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** The binding's answer; a missing or failing binding never refuses (the isolate window still limits). */
export async function bindingAllows(binding: LimiterBinding | undefined, key: string): Promise<boolean> {
  if (!binding) return true;
  try {
    return (await binding.limit({ key })).success;
  } catch {
    return true;
  }
}

/** The management API's rate limit; mounted right after authentication, which names the tenant and client. */
export const managementRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const env = c.env as unknown as Vars & { MANAGEMENT_CLIENT_LIMITER?: LimiterBinding; MANAGEMENT_TENANT_LIMITER?: LimiterBinding };
  const tenantId = c.var.tenant.id;
  const auth = c.var.auth;
  // An end user's token (current-user calls) is limited as its own client, the user, whatever application
  // it was issued to, and all end users of a tenant together in a window of their own, the size of the tenant's:
  // one user (or many users of one application) cannot use up what the tenant's administrators and other users
  // need, and many signed-up users together cannot exceed one tenant's budget. A token without azp is limited as
  // its subject too.
  const isEndUser = auth.kind === "user";
  const client = isEndUser || !auth.clientId ? `user:${auth.subject}` : auth.clientId;
  const tenantKey = isEndUser ? `${tenantId}:end-users` : tenantId;
  const policy = policyFor(env, tenantId);
  const periodMs = policy.periodSeconds * 1000;
  const now = Date.now();
  const perClient = countRequest(`client:${tenantId}:${client}`, policy.client, periodMs, now);
  const perTenant = perClient.allowed ? countRequest(`tenant:${tenantKey}`, policy.tenant, periodMs, now) : null;
  // The headers describe the tighter of the two limits a request is counted against.
  const tenantTighter = perTenant !== null && (!perTenant.allowed || perTenant.remaining < perClient.remaining);
  const shown = tenantTighter && perTenant ? { limit: policy.tenant, ...perTenant } : { limit: policy.client, ...perClient };
  let allowed = perClient.allowed && (perTenant?.allowed ?? false);
  let resetMs = shown.resetMs;
  let remaining = shown.remaining;
  if (allowed) {
    const [clientOk, tenantOk] = await Promise.all([
      bindingAllows(env.MANAGEMENT_CLIENT_LIMITER, `${tenantId}:${client}`),
      bindingAllows(env.MANAGEMENT_TENANT_LIMITER, tenantKey),
    ]);
    if (!clientOk || !tenantOk) {
      // The binding saw more than this isolate did (other isolates served the rest): it does not say when
      // its window ends, so the wait is a whole period, never shorter than the truth.
      allowed = false;
      remaining = 0;
      resetMs = Math.max(resetMs, now + periodMs);
    }
  }
  const headers = {
    "x-ratelimit-limit": String(shown.limit),
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset": String(Math.ceil(resetMs / 1000)),
  };
  if (!allowed) {
    const error = problem(tenantTighter ? "tenant_rate_limited" : "client_rate_limited", { limit: shown.limit, period: policy.periodSeconds });
    for (const [name, value] of Object.entries(headers)) error.withHeader(name, value);
    throw error.withHeader("Retry-After", String(Math.max(1, Math.ceil((resetMs - now) / 1000))));
  }
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
};
