import { sha256, timingSafeEqualText } from "../shared/crypto/compare";
import { toHex } from "./hex";
import type { HandlerOptions, HandlerType, ProxyHandler } from "../shared/schemas/platform/proxy-routes";
import { isSlotOf, scriptNameFor } from "../shared/script-name";
import type { HostEntry } from "../shared/types";
import type { TenantNamespace } from "../worker/deploy/namespace";

/**
 * The handler chain of a proxy route (SPEC §2.3; issue 16 point 2). Handlers run in order, each one
 * either answering or calling `next()` and adjusting what comes back; the terminal types (`redirect`,
 * `http`, `dispatch_namespace`, `service_binding`, `static`) answer. A chain that ends without an answer is 404.
 */
export interface ChainContext {
  request: Request;
  entry: HostEntry;
  /** Bindings by name (service bindings, dispatch namespaces) for `service_binding` and `dispatch_namespace`. */
  bindings: Record<string, unknown>;
  /** The namespace that serves `dispatch_namespace` without an explicit binding (null: not configured). */
  namespace: TenantNamespace | null;
  scriptNameTemplate: string | undefined;
  fetch: typeof fetch;
  cache: ResponseCache;
  now: () => number;
  /** Set by `http`: the upstream origin, which `rewrite_location` maps back to the public one. */
  upstreamOrigin?: string;
}

type Next = () => Promise<Response>;
type Handler<T extends HandlerType> = (ctx: ChainContext, options: HandlerOptions<T>, next: Next) => Promise<Response>;

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });

/** Responses with mutable headers (a fetched Response's headers may be immutable). */
const mutable = (res: Response) => new Response(res.body, res);

/** Per-isolate response cache of the `cache` handler (bounded, GET only). */
export class ResponseCache {
  private readonly entries = new Map<string, { expiresAt: number; status: number; headers: [string, string][]; body: ArrayBuffer }>();
  constructor(private readonly max = 500) {}
  get(key: string, now: number): Response | null {
    const hit = this.entries.get(key);
    if (!hit) return null;
    if (hit.expiresAt <= now) {
      this.entries.delete(key);
      return null;
    }
    const res = new Response(hit.body.slice(0), { status: hit.status, headers: hit.headers });
    res.headers.set("x-proxy-cache", "HIT");
    return res;
  }
  async put(key: string, res: Response, ttlMs: number, now: number): Promise<Response> {
    const body = await res.arrayBuffer();
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { expiresAt: now + ttlMs, status: res.status, headers: [...res.headers], body });
    const out = new Response(body.slice(0), res);
    out.headers.set("x-proxy-cache", "MISS");
    return out;
  }
  clear(): void {
    this.entries.clear();
  }
}

function allowedOrigin(origins: string[], origin: string | null): string | null {
  if (!origin) return null;
  if (origins.includes("*")) return "*";
  return origins.some((o) => o.replace(/\/$/, "") === origin) ? origin : null;
}

const HANDLERS: { [T in HandlerType]: Handler<T> } = {
  async cors(ctx, o, next) {
    const origin = ctx.request.headers.get("origin");
    const allowed = allowedOrigin(o.origins, origin);
    const corsHeaders = (h: Headers) => {
      if (!allowed) return;
      h.set("access-control-allow-origin", o.credentials && allowed === "*" ? (origin as string) : allowed);
      if (o.credentials) h.set("access-control-allow-credentials", "true");
      h.append("vary", "Origin");
    };
    if (ctx.request.method === "OPTIONS" && ctx.request.headers.has("access-control-request-method")) {
      const h = new Headers();
      corsHeaders(h);
      if (allowed) {
        h.set("access-control-allow-methods", (o.methods ?? ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).join(", "));
        h.set("access-control-allow-headers", (o.headers ?? ["authorization", "content-type"]).join(", "));
        h.set("access-control-max-age", String(o.max_age ?? 600));
      }
      return new Response(null, { status: 204, headers: h });
    }
    const res = mutable(await next());
    corsHeaders(res.headers);
    return res;
  },
  async headers(ctx, o, next) {
    if (o.request) {
      const h = new Headers(ctx.request.headers);
      for (const name of o.request.remove ?? []) h.delete(name);
      for (const [name, value] of Object.entries(o.request.set ?? {})) h.set(name, value);
      ctx.request = new Request(ctx.request, { headers: h });
    }
    const res = mutable(await next());
    for (const name of o.response?.remove ?? []) res.headers.delete(name);
    for (const [name, value] of Object.entries(o.response?.set ?? {})) res.headers.set(name, value);
    return res;
  },
  async basic_auth(ctx, o, next) {
    const challenge = { "www-authenticate": `Basic realm="${o.realm ?? "Restricted"}", charset="UTF-8"` };
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(ctx.request.headers.get("authorization") ?? "");
    let decoded = "";
    try {
      decoded = match ? new TextDecoder().decode(Uint8Array.from(atob(match[1] as string), (c) => c.charCodeAt(0))) : "";
    } catch {
      decoded = "";
    }
    const sep = decoded.indexOf(":");
    const user = sep >= 0 ? decoded.slice(0, sep) : "";
    const password = sep >= 0 ? decoded.slice(sep + 1) : "";
    const digest = toHex(await sha256(password));
    const userOk = await timingSafeEqualText(user, o.username);
    const passOk = await timingSafeEqualText(digest, o.password_sha256 ?? "");
    if (!match || !userOk || !passOk) return text(401, "Unauthorized", challenge);
    return next();
  },
  async redirect(ctx, o) {
    const url = new URL(ctx.request.url);
    const target = new URL(o.location);
    if (o.preserve_path) {
      target.pathname = `${target.pathname.replace(/\/$/, "")}${url.pathname}`;
      target.search = url.search;
    }
    return new Response(null, { status: o.status ?? 302, headers: { location: target.toString() } });
  },
  async rewrite_location(ctx, o, next) {
    const res = mutable(await next());
    const location = res.headers.get("location");
    const from = o.from ? new URL(o.from).origin : ctx.upstreamOrigin;
    const to = o.to ? new URL(o.to).origin : new URL(ctx.request.url).origin;
    if (location && from && location.startsWith(from)) res.headers.set("location", `${to}${location.slice(from.length)}`);
    return res;
  },
  async http(ctx, o) {
    const incoming = new URL(ctx.request.url);
    const upstream = new URL(o.url);
    const target = new URL(`${upstream.pathname.replace(/\/$/, "")}${incoming.pathname}${incoming.search}`, upstream.origin);
    ctx.upstreamOrigin = upstream.origin;
    const headers = new Headers(ctx.request.headers);
    headers.set("x-forwarded-host", incoming.host);
    headers.set("x-forwarded-proto", incoming.protocol.replace(":", ""));
    if (o.preserve_host) headers.set("host", incoming.host);
    else headers.delete("host");
    const hasBody = ctx.request.method !== "GET" && ctx.request.method !== "HEAD";
    return ctx.fetch(target.toString(), { method: ctx.request.method, headers, body: hasBody ? ctx.request.body : undefined, redirect: "manual" });
  },
  async dispatch_namespace(ctx, o) {
    const { entry } = ctx;
    const values = { tenant_id: entry.tenant.id, custom_domain_id: entry.custom_domain?.id, domain: entry.custom_domain?.domain, host: entry.host };
    const template = o.script_name ?? ctx.scriptNameTemplate;
    // The template names the copy; of its two slots (two-slot upgrades), the tenant row says which one is live.
    const base = template ? scriptNameFor(template, values) : null;
    const live = entry.tenant.worker_script_name;
    const script = base === null || isSlotOf(live, base) ? live : base;
    let res: Response | null;
    if (o.binding) {
      const binding = ctx.bindings[o.binding] as { get(name: string): { fetch(r: Request): Promise<Response> } } | undefined;
      if (!binding) return text(502, `Dispatch namespace binding ${o.binding} is not configured`);
      try {
        res = await binding.get(script).fetch(ctx.request);
      } catch (error) {
        if (error instanceof Error && /not found/i.test(error.message)) res = null;
        else throw error;
      }
    } else {
      if (!ctx.namespace) return text(502, "No dispatch namespace is configured");
      res = await ctx.namespace.fetchScript(script, ctx.request);
    }
    return res ?? text(404, `Script not found: ${script}`, { "x-dispatch-error": "script_not_found" });
  },
  async service_binding(ctx, o) {
    const binding = ctx.bindings[o.binding] as Fetcher | undefined;
    if (!binding || typeof binding.fetch !== "function") return text(502, `Service binding ${o.binding} is not configured`);
    return binding.fetch(ctx.request);
  },
  async static(_ctx, o) {
    return new Response(o.body, { status: o.status, headers: { "content-type": o.content_type ?? "text/plain; charset=utf-8" } });
  },
  async cache(ctx, o, next) {
    if (ctx.request.method !== "GET") return next();
    const key = `${ctx.entry.host} ${ctx.request.url}`;
    const hit = ctx.cache.get(key, ctx.now());
    if (hit) return hit;
    const res = await next();
    const cc = res.headers.get("cache-control") ?? "";
    if (res.status !== 200 || res.headers.has("set-cookie") || /private|no-store/i.test(cc)) return res;
    return ctx.cache.put(key, res, o.ttl_seconds * 1000, ctx.now());
  },
};

/** Runs a route's handlers in order. */
export function runChain(ctx: ChainContext, handlers: ProxyHandler[]): Promise<Response> {
  const step = (index: number): Promise<Response> => {
    const handler = handlers[index];
    if (!handler) return Promise.resolve(text(404, "No handler answered this route"));
    const run = HANDLERS[handler.type] as Handler<HandlerType>;
    return run(ctx, handler.options as HandlerOptions<HandlerType>, () => step(index + 1));
  };
  return step(0);
}
