import { now as currentTime } from "../../shared/clock";
import { problem } from "../../shared/errors";
import type { Settings } from "../settings";
import { HostCache } from "./host-cache";

/** The tenant a request is for, and the issuer that tenant has on this host (ARCHITECTURE.md §5). */
export interface TenantContext {
  id: string;
  issuer: string;
  /** How the tenant was found, for diagnostics and tests. */
  via: "token" | "header" | "subdomain" | "custom_domain" | "query" | "single_tenant" | "apex";
  customDomain: string | null;
}

/** What the resolver needs from the registry (PlatformObject over RPC, or a fake in unit tests). */
export interface TenantDirectory {
  hasTenant(id: string): Promise<boolean>;
  resolveCustomDomain(host: string): Promise<{ tenantId: string; customDomain: string | null } | null>;
  countTenants(): Promise<number>;
  /** The tenant of the control-plane organization with this name (`metadata.tenant_id`), for `useOrganizations`. */
  organizationTenant?(name: string): Promise<string | null>;
}

type Cached = { tenantId: string; customDomain: string | null; via: "subdomain" | "custom_domain" };

let hostCache: HostCache<Cached> | undefined;
let hostCacheKey = "";

function cacheFor(settings: Settings): HostCache<Cached> {
  const key = `${settings.hostCacheTtlMs}/${settings.hostCacheNegativeTtlMs}`;
  if (!hostCache || hostCacheKey !== key) {
    hostCache = new HostCache(settings.hostCacheTtlMs, settings.hostCacheNegativeTtlMs);
    hostCacheKey = key;
  }
  return hostCache;
}

/** Forgets cached resolutions (a tenant or domain was created or deleted through this isolate). */
export function forgetHost(host?: string): void {
  if (host === undefined) hostCache?.clear();
  else hostCache?.delete(host.toLowerCase());
}

/** The request's host: `x-forwarded-host` first (SPEC §5.5 step 4), lowercased, port kept. */
export function requestHost(request: Request): string {
  const forwarded = request.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
  const host = forwarded || request.headers.get("host") || new URL(request.url).host;
  return host.toLowerCase();
}

/** Whether the host is the issuer apex, or a loopback alias of a localhost apex (127.0.0.1:port). */
export function isApexHost(host: string, settings: Settings): boolean {
  if (host === settings.apexHost) return true;
  const [apexName, apexPort] = splitHost(settings.apexHost);
  if (apexName !== "localhost") return false;
  const [name, port] = splitHost(host);
  return port === apexPort && (name === "127.0.0.1" || name === "[::1]");
}

function splitHost(host: string): [string, string] {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  return [match?.[1] ?? host, match?.[2] ?? ""];
}

/** The host whose one-label subdomains are tenants: `baseDomain`, else the issuer's host. */
export const subdomainBase = (settings: Settings) => settings.baseDomain ?? settings.apexHost;

/** Whether a host lies under the apex or under the subdomain base (never a custom domain). */
const underBase = (host: string, settings: Settings) =>
  host.endsWith(`.${settings.apexHost}`) || host.endsWith(`.${subdomainBase(settings)}`);

/**
 * `{label}.{baseDomain}` -> label; one valid DNS label only. The control plane answers on the apex and
 * never also as `{control_plane}.{base}`: a second issuer for the same tenant (issue 6).
 */
export function subdomainTenant(host: string, settings: Settings): string | null {
  const suffix = `.${subdomainBase(settings)}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  if (label === settings.controlPlaneTenantId.toLowerCase()) return null;
  return /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? label : null;
}

/**
 * Issuer for a tenant reached on a host (ARCHITECTURE.md §5, SPEC §5.6). On a custom domain it is
 * `https://<domain>/`; only a development host that carries a port (wrangler dev on :8787, reached through a
 * resolver mapping) keeps that port and the issuer's scheme, so discovery, tokens and the URL a client
 * actually used agree.
 */
export function issuerFor(via: TenantContext["via"], host: string, settings: Settings, customDomain: string | null) {
  if (via === "custom_domain" && customDomain) {
    const [, port] = splitHost(host);
    return port ? `${settings.issuerProtocol}//${customDomain}:${port}/` : `https://${customDomain}/`;
  }
  if (via === "subdomain") return `${settings.issuerProtocol}//${host}/`;
  return settings.issuer;
}

/**
 * Caching headers for a public document that depends on the tenant (discovery, JWKS; issue 6). Request
 * headers that can select the tenant are named in `Vary`, so a shared cache never serves one tenant's
 * document for another; when a header or the query chose the tenant the response is also `private`.
 */
export function tenantCacheHeaders(tenant: TenantContext, maxAge: string): Record<string, string> {
  const chosenByRequest = tenant.via === "header" || tenant.via === "query";
  return {
    "Cache-Control": `${chosenByRequest ? "private" : "public"}, ${maxAge}`,
    Vary: "Tenant-Id, X-Forwarded-Host",
  };
}

/**
 * The explicit target of a request, when it names one (SPEC §5.5 steps 2-5): the `tenant-id` header, a
 * tenant subdomain of the apex (unknown -> 404 `Tenant not found`), a custom domain (exact lowercased host,
 * never probed for hosts under the apex), or the `tenant_id` query parameter. Null when none applies.
 */
export async function explicitTenant(
  request: Request,
  settings: Settings,
  directory: TenantDirectory,
  now = currentTime(),
  host = requestHost(request),
): Promise<TenantContext | null> {
  const header = request.headers.get("tenant-id")?.trim();
  if (header) {
    if (!(await directory.hasTenant(header))) throw problem("tenant_not_found");
    return { id: header, issuer: issuerFor("header", host, settings, null), via: "header", customDomain: null };
  }
  const byHost = await resolveHost(host, settings, directory, now);
  // An unknown tenant subdomain is 404 `Tenant not found` (SPEC §7), never another tenant.
  if (!byHost && !isApexHost(host, settings) && underBase(host, settings)) throw problem("tenant_not_found");
  if (byHost) {
    return {
      id: byHost.tenantId,
      issuer: issuerFor(byHost.via, host, settings, byHost.customDomain),
      via: byHost.via,
      customDomain: byHost.customDomain,
    };
  }
  // A request without a query string (every token request) names no query target: no URL to parse.
  const query = request.url.includes("?") ? new URL(request.url).searchParams.get("tenant_id")?.trim() : undefined;
  if (query) {
    if (!(await directory.hasTenant(query))) throw problem("tenant_not_found");
    return { id: query, issuer: settings.issuer, via: "query", customDomain: null };
  }
  return null;
}

/** How a host resolved to a tenant (the dispatcher and the identity app share it). */
export type HostMatch = Cached;

/**
 * The one host -> tenant resolution (SPEC §5.5 steps 3-4; the dispatcher reuses it): a tenant subdomain of
 * the issuer apex, else a `ready` custom domain by exact lowercased host name (a port is ignored: domains are
 * names). Hosts under the apex are never probed as custom domains; the apex itself resolves to nothing here.
 * Answers, misses included, are cached per isolate (misses for `hostCacheNegativeTtlMs`). Null: no tenant.
 */
export async function resolveHost(
  rawHost: string,
  settings: Settings,
  directory: TenantDirectory,
  now = currentTime(),
): Promise<HostMatch | null> {
  const host = rawHost.trim().toLowerCase();
  if (!host || isApexHost(host, settings)) return null;
  const cache = cacheFor(settings);
  const cached = cache.get(host, now);
  if (cached !== undefined) return cached;
  const label = subdomainTenant(host, settings);
  if (label !== null || underBase(host, settings)) {
    // Hosts under the apex (or the base domain) are tenant subdomains or nothing: never probed as custom
    // domains. Reserved labels are nobody's; a host's resolveSubdomain may map a label to another tenant id.
    const reserved = label !== null && settings.reservedSubdomains?.includes(label);
    const sub = label === null || reserved ? null : await subdomainTarget(label, settings, directory);
    const found = sub !== null && sub !== settings.controlPlaneTenantId && (await directory.hasTenant(sub));
    const value: Cached | null = found && sub ? { tenantId: sub, customDomain: null, via: "subdomain" } : null;
    cache.set(host, value, now);
    return value;
  }
  const [name] = splitHost(host);
  const apexName = splitHost(settings.apexHost)[0];
  const baseName = splitHost(subdomainBase(settings))[0];
  if (name === apexName || name.endsWith(`.${apexName}`) || name === baseName || name.endsWith(`.${baseName}`)) {
    cache.set(host, null, now);
    return null;
  }
  const domain = await directory.resolveCustomDomain(name);
  const value: Cached | null = domain ? { ...domain, via: "custom_domain" } : null;
  cache.set(host, value, now);
  return value;
}

/**
 * The tenant a subdomain label names (SPEC "Control-plane inheritance", subdomain routing): a custom
 * `resolveSubdomain` decides alone; else, with `useOrganizations` (default), the control-plane organization
 * of that name names its tenant (`metadata.tenant_id`, as tenant organizations do), and a label no
 * organization claims is the tenant id itself; without it the label is always the tenant id.
 */
async function subdomainTarget(label: string, settings: Settings, directory: TenantDirectory): Promise<string | null> {
  if (settings.resolveSubdomain) return settings.resolveSubdomain(label);
  if (settings.useOrganizations && directory.organizationTenant) return (await directory.organizationTenant(label)) ?? label;
  return label;
}

/**
 * Full resolution for the Auth API and login pages: the explicit target, else the only tenant when exactly
 * one exists (step 6), else the control-plane tenant on the apex host. Anything else is 404.
 */
export async function resolveTenant(
  request: Request,
  settings: Settings,
  directory: TenantDirectory,
  now = currentTime(),
): Promise<TenantContext> {
  const host = requestHost(request);
  const explicit = await explicitTenant(request, settings, directory, now, host);
  if (explicit) return explicit;
  if (isApexHost(host, settings)) {
    return { id: settings.controlPlaneTenantId, issuer: settings.issuer, via: "apex", customDomain: null };
  }
  if ((await directory.countTenants()) === 1) {
    return { id: settings.controlPlaneTenantId, issuer: settings.issuer, via: "single_tenant", customDomain: null };
  }
  throw problem("tenant_not_found");
}
