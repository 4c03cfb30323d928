import { z } from "zod";

/**
 * Proxy routes (SPEC §2.3; issue 16 point 2): `match` selects requests of a host, `handlers` is the chain
 * that serves them. Each handler type has its own strict options schema, validated on write (the
 * management API) and again when the dispatcher loads a route.
 */

const header = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, "header names are HTTP tokens");
const headerValue = z.string().max(4096).regex(/^[^\r\n]*$/, "header values are one line");
const origin = z.union([z.literal("*"), z.url().max(2048).refine((u) => new URL(u).origin === u.replace(/\/$/, ""), "an origin has no path")]);
const path = z.string().min(1).max(1024).startsWith("/", "match.path starts with /");

export const HANDLER_TYPES = [
  "cors",
  "headers",
  "basic_auth",
  "redirect",
  "rewrite_location",
  "http",
  "dispatch_namespace",
  "service_binding",
  "static",
  "cache",
] as const;
export type HandlerType = (typeof HANDLER_TYPES)[number];

const headerEdits = z.strictObject({
  set: z.record(header, headerValue).optional(),
  remove: z.array(header).max(64).optional(),
});

/** Options of each handler type (what a write must send). */
export const handlerOptions = {
  cors: z.strictObject({
    origins: z.array(origin).min(1).max(100),
    methods: z.array(z.string().regex(/^[A-Z]{3,10}$/)).max(16).optional(),
    headers: z.array(header).max(64).optional(),
    credentials: z.boolean().optional(),
    max_age: z.number().int().min(0).max(86_400).optional(),
  }),
  headers: z.strictObject({ request: headerEdits.optional(), response: headerEdits.optional() }),
  basic_auth: z.strictObject({
    username: z.string().min(1).max(256).regex(/^[^:]*$/, "username must not contain ':'"),
    /** Write-only: stored as `password_sha256`, never returned. */
    password: z.string().min(8).max(256).optional(),
    password_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    realm: z.string().max(128).regex(/^[^"\r\n]*$/).optional(),
  }).refine((o) => o.password !== undefined || o.password_sha256 !== undefined, "basic_auth needs a password"),
  redirect: z.strictObject({
    location: z.url().max(2048),
    status: z.union([z.literal(301), z.literal(302), z.literal(303), z.literal(307), z.literal(308)]).optional(),
    preserve_path: z.boolean().optional(),
  }),
  rewrite_location: z.strictObject({ from: z.url().max(2048).optional(), to: z.url().max(2048).optional() }),
  http: z.strictObject({ url: z.url().max(2048).refine((u) => /^https?:/.test(u), "http upstreams are http(s) URLs"), preserve_host: z.boolean().optional() }),
  dispatch_namespace: z.strictObject({
    binding: z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/).optional(),
    script_name: z.string().min(1).max(256).regex(/^[A-Za-z0-9{}_.-]+$/).optional(),
  }),
  service_binding: z.strictObject({ binding: z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/) }),
  static: z.strictObject({
    status: z.number().int().min(200).max(599),
    body: z.string().max(65_536),
    content_type: z.string().max(128).regex(/^[^\r\n]*$/).optional(),
  }),
  cache: z.strictObject({ ttl_seconds: z.number().int().min(1).max(86_400) }),
} as const;

export type HandlerOptions<T extends HandlerType> = z.infer<(typeof handlerOptions)[T]>;

export const proxyHandler = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("cors"), options: handlerOptions.cors }),
  z.strictObject({ type: z.literal("headers"), options: handlerOptions.headers }),
  z.strictObject({ type: z.literal("basic_auth"), options: handlerOptions.basic_auth }),
  z.strictObject({ type: z.literal("redirect"), options: handlerOptions.redirect }),
  z.strictObject({ type: z.literal("rewrite_location"), options: handlerOptions.rewrite_location }),
  z.strictObject({ type: z.literal("http"), options: handlerOptions.http }),
  z.strictObject({ type: z.literal("dispatch_namespace"), options: handlerOptions.dispatch_namespace }),
  z.strictObject({ type: z.literal("service_binding"), options: handlerOptions.service_binding }),
  z.strictObject({ type: z.literal("static"), options: handlerOptions.static }),
  z.strictObject({ type: z.literal("cache"), options: handlerOptions.cache }),
]);
export type ProxyHandler = { [T in HandlerType]: { type: T; options: HandlerOptions<T> } }[HandlerType];

export const routeMatch = z.strictObject({
  /** `/*` (everything), `/api/*` (a prefix), `/exact`, or `*` anywhere as a wildcard. @default "/*" */
  path: path.optional(),
  methods: z.array(z.string().regex(/^[A-Z]{3,10}$/)).max(16).optional(),
});

export const createProxyRouteBody = z.strictObject({
  tenant_id: z.string().min(1).max(63),
  custom_domain_id: z.string().min(1).max(64).nullable().optional(),
  priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
  match: routeMatch.optional(),
  handlers: z.array(proxyHandler).min(1).max(16),
});

export const updateProxyRouteBody = z
  .strictObject({
    priority: z.number().int().min(-1_000_000).max(1_000_000),
    match: routeMatch,
    handlers: z.array(proxyHandler).min(1).max(16),
  })
  .partial()
  .refine((patch) => Object.keys(patch).length > 0, "At least one property must be provided");

export type CreateProxyRouteInput = z.infer<typeof createProxyRouteBody>;
export type UpdateProxyRouteInput = z.infer<typeof updateProxyRouteBody>;

/** A proxy route (SPEC §2.3) as the API shows it; basic_auth passwords appear only as their SHA-256. */
export interface ProxyRoute {
  id: string;
  tenant_id: string;
  /** Null: the route applies to every host of the tenant (its platform subdomain and its domains). */
  custom_domain_id: string | null;
  priority: number;
  match: { path?: string; methods?: string[] };
  handlers: ProxyHandler[];
  created_at: string;
  updated_at: string;
}

/** What the dispatcher needs to serve a host (HostDirectory.lookup). */
export interface HostEntry {
  host: string;
  tenant: {
    id: string;
    deployment_type: "shared" | "wfp";
    provisioning_state: "pending" | "ready" | "failed";
    worker_script_name: string;
    worker_version: string;
  };
  custom_domain: { id: string; domain: string } | null;
  /** Ascending priority (then oldest first): the first match wins. */
  routes: ProxyRoute[];
}
