import { now as currentTime } from "../shared/clock";
import { proxyHandler } from "../shared/schemas/platform/proxy-routes";
import type { TenantNamespace } from "../worker/deploy/namespace";
import { type ChainContext, ResponseCache, runChain } from "./handlers";
import type { HostDirectory } from "./host-directory";
import { selectRoute } from "./match";

/**
 * The dispatcher (SPEC §1 topology 2, "Per-tenant deployment details"): stateless; resolves the request's
 * host through a HostDirectory, picks the first matching proxy route by ascending priority (a synthesized
 * catch-all when the host has none), and runs its handler chain.
 *
 * - The apex host (the control plane: management API, control-plane login) goes to the CONTROL_PLANE service.
 * - An unknown host, or a tenant whose provisioning has not completed, is 404 `Unknown host` (platform
 *   subdomains route once provisioning completes).
 * - A route whose handlers fail validation (written before a schema change) answers 502, never runs.
 */
export interface DispatcherDeps {
  directory: HostDirectory;
  apexHost: string;
  bindings: Record<string, unknown>;
  namespace: TenantNamespace | null;
  scriptNameTemplate?: string;
  fetch?: typeof fetch;
  cache?: ResponseCache;
  now?: () => number;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store" } });

/** The request's host: `x-forwarded-host` first, lowercased, port kept (as the service resolves it). */
export function hostOf(request: Request): string {
  const forwarded = request.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
  return (forwarded || request.headers.get("host") || new URL(request.url).host).toLowerCase();
}

/** The apex, or a loopback alias of a localhost apex (127.0.0.1:port), as the service itself treats it. */
function isApex(host: string, apexHost: string): boolean {
  if (host === apexHost) return true;
  const [name, port] = apexHost.split(":");
  if (name !== "localhost") return false;
  return host === `127.0.0.1${port ? `:${port}` : ""}` || host === `[::1]${port ? `:${port}` : ""}`;
}

export async function dispatch(request: Request, deps: DispatcherDeps): Promise<Response> {
  const host = hostOf(request);
  const now = deps.now ?? currentTime;
  if (isApex(host, deps.apexHost)) {
    const controlPlane = deps.bindings.CONTROL_PLANE as Fetcher | undefined;
    if (!controlPlane) return json(502, { error: "control_plane_unavailable", message: "The CONTROL_PLANE service is not bound" });
    return controlPlane.fetch(request);
  }
  const entry = await deps.directory.lookup(host);
  if (entry?.tenant.provisioning_state !== "ready") {
    return json(404, { error: "unknown_host", message: "Unknown host" });
  }
  const url = new URL(request.url);
  const route = selectRoute(entry, { method: request.method, path: url.pathname });
  if (!route) return json(404, { error: "no_route", message: `No route of ${host} matches ${url.pathname}` });
  const handlers = [];
  for (const raw of route.handlers) {
    const parsed = proxyHandler.safeParse(raw);
    if (!parsed.success) return json(502, { error: "invalid_route", message: `Proxy route ${route.id} has an invalid ${raw.type} handler` });
    handlers.push(parsed.data);
  }
  const ctx: ChainContext = {
    request,
    entry,
    bindings: deps.bindings,
    namespace: deps.namespace,
    scriptNameTemplate: deps.scriptNameTemplate,
    fetch: deps.fetch ?? ((input, init) => fetch(input, init)),
    cache: deps.cache ?? new ResponseCache(),
    now,
  };
  return runChain(ctx, handlers);
}
