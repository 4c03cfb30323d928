import type { HostEntry, ProxyRoute } from "../shared/types";

/**
 * `match.path` patterns: `/*` matches everything, `*` anywhere matches any run of characters (slashes
 * included), anything else is literal and exact. `/api/*` also matches `/api` itself.
 */
export function pathMatches(pattern: string | undefined, path: string): boolean {
  if (pattern === undefined || pattern === "/*" || pattern === "*") return true;
  if (!pattern.includes("*")) return pattern === path;
  if (pattern.endsWith("/*") && path === pattern.slice(0, -2)) return true;
  const regex = new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return regex.test(path);
}

export function routeMatches(route: Pick<ProxyRoute, "match">, request: { method: string; path: string }): boolean {
  if (route.match.methods && !route.match.methods.includes(request.method.toUpperCase())) return false;
  return pathMatches(route.match.path, request.path);
}

/** The catch-all route a host gets when it has none of its own (SPEC "Dispatcher" 2). */
export function synthesizedRoute(entry: HostEntry): ProxyRoute {
  const at = new Date(0).toISOString();
  return {
    id: "synthesized",
    tenant_id: entry.tenant.id,
    custom_domain_id: entry.custom_domain?.id ?? null,
    priority: Number.MAX_SAFE_INTEGER,
    match: { path: "/*" },
    // A shared tenant is served by the shared worker; a wfp tenant by its own script.
    handlers:
      entry.tenant.deployment_type === "wfp"
        ? [{ type: "dispatch_namespace", options: {} }]
        : [{ type: "service_binding", options: { binding: "CONTROL_PLANE" } }],
    created_at: at,
    updated_at: at,
  };
}

/** The first route (ascending priority, as stored) that matches; the synthesized catch-all when the host has none. */
export function selectRoute(entry: HostEntry, request: { method: string; path: string }): ProxyRoute | null {
  if (entry.routes.length === 0) return synthesizedRoute(entry);
  const sorted = [...entry.routes].sort((a, b) => a.priority - b.priority);
  return sorted.find((route) => routeMatches(route, request)) ?? null;
}
