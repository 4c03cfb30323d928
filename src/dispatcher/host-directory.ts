import { now as currentTime } from "../shared/clock";
import type { HostEntry } from "../shared/types";
import { HostCache } from "../worker/routing/host-cache";

/**
 * How the dispatcher learns what serves a host (issue 16 point 2). One method, so the source can change
 * without touching routing: today the tenants' platform subdomains (`<tenant_id>.<apex>`) and the
 * registry's custom domains, with the tenant's proxy routes.
 */
export interface HostDirectory {
  lookup(host: string): Promise<HostEntry | null>;
}

/** What the registry answers (PlatformObject over RPC; a fake in unit tests). */
export interface RegistryReader {
  hostEntry(host: string, tenantId: string, customDomain: { id: string; domain: string } | null): Promise<HostEntry | null>;
  customDomainByHost(host: string): Promise<{ id: string; domain: string; tenant_id: string } | null>;
}

/**
 * A custom domain's owner by exact host. SEAM for issue 15 (branch `domains`): the coordinator replaces the
 * default (the registry's `custom_domains` rows, read as they are on main) with that work's resolution.
 */
export type CustomDomainResolver = (host: string) => Promise<{ id: string; domain: string; tenant_id: string } | null>;

/** `<label>.<apex>` -> label, when it is one DNS label (a tenant id is one, SPEC §2.1). */
export function subdomainLabel(host: string, apexHost: string): string | null {
  const suffix = `.${apexHost}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  return /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? label : null;
}

/** The registry-backed directory: platform subdomains first, then custom domains. */
export class RegistryHostDirectory implements HostDirectory {
  private readonly customDomains: CustomDomainResolver;

  private readonly registry: () => RegistryReader;

  /**
   * @param registry the registry, or a factory of it: a Durable Object stub is bound to the request that made
   *   it, so a directory that outlives a request (the cached one) takes a factory and makes one per lookup.
   */
  constructor(
    registry: RegistryReader | (() => RegistryReader),
    private readonly apexHost: string,
    customDomains?: CustomDomainResolver,
  ) {
    this.registry = typeof registry === "function" ? registry : () => registry;
    this.customDomains = customDomains ?? ((host) => this.registry().customDomainByHost(host));
  }

  async lookup(host: string): Promise<HostEntry | null> {
    const label = subdomainLabel(host, this.apexHost);
    if (label !== null) return this.registry().hostEntry(host, label, null);
    // Hosts under the apex are tenant subdomains or nothing: never probed as custom domains.
    if (host.endsWith(`.${this.apexHost}`)) return null;
    // Domains are names: a port (a development host reached through a resolver mapping) is not part of one.
    const domain = await this.customDomains(host.replace(/:\d+$/, ""));
    if (!domain) return null;
    return this.registry().hostEntry(host, domain.tenant_id, { id: domain.id, domain: domain.domain });
  }
}

/**
 * Per-isolate cache in front of a directory (SPEC "Per-tenant deployment details" 5, §8): answers live
 * `ttlMs` (about 30 s); misses and tenants that are not `ready` yet live `negativeTtlMs`, so a new host or
 * a finished provisioning shows up quickly.
 */
export class CachedHostDirectory implements HostDirectory {
  private readonly cache: HostCache<HostEntry>;
  private readonly shortLived: HostCache<HostEntry>;

  constructor(
    private readonly inner: HostDirectory,
    ttlMs: number,
    negativeTtlMs: number,
    private readonly clock: () => number = currentTime,
  ) {
    this.cache = new HostCache(ttlMs, negativeTtlMs);
    // Non-ready entries: positive values with the negative lifetime.
    this.shortLived = new HostCache(negativeTtlMs, negativeTtlMs);
  }

  async lookup(host: string): Promise<HostEntry | null> {
    const now = this.clock();
    const pending = this.shortLived.get(host, now);
    if (pending !== undefined) return pending;
    const cached = this.cache.get(host, now);
    if (cached !== undefined) return cached;
    const entry = await this.inner.lookup(host);
    if (entry && entry.tenant.provisioning_state !== "ready") this.shortLived.set(host, entry, now);
    else this.cache.set(host, entry, now);
    return entry;
  }

  forget(host?: string): void {
    if (host === undefined) {
      this.cache.clear();
      this.shortLived.clear();
    } else {
      this.cache.delete(host);
      this.shortLived.delete(host);
    }
  }
}
