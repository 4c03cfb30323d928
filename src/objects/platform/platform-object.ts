import { DurableObject } from "cloudflare:workers";
import { now } from "../../shared/clock";
import type { AuditContext, HostEntry, HostResolution } from "../../shared/types";
import { applyMigrations, schemaVersion, Sql } from "../sql";
import { SYSTEM_CONTEXT } from "../tenant/core/audit";
import { outboxOptionsFrom, Publisher } from "../tenant/core/publisher";
import { DeploySecrets } from "./deploy-secrets";
import { Domains, resolveCustomDomain } from "./domains";
import { platformMigrations } from "./migrations";
import { tenantLogsDestination } from "./outbox";
import type { PlatformCore } from "./rpc";
import { Operations } from "./operations";
import { hostEntry, ProxyRoutes } from "./proxy-routes";
import { countTenants, getTenant, Tenants } from "./tenants";

/**
 * The singleton registry (ARCHITECTURE.md §2): tenants, custom domains, proxy routes, tenant operations.
 * This class is its RPC surface only: the host-resolution reads stay flat (hot), each resource is a facade.
 */
export class PlatformObject extends DurableObject<Env> {
  private readonly core: PlatformCore;
  /** The registry's write path and relay: tenant writes commit with their audit events (issue 8). */
  readonly outbox: Publisher;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = new Sql(ctx.storage.sql);
    const options = outboxOptionsFrom(env as unknown as Record<string, unknown>);
    // The registry has no logs table of its own: with the outbox off its events are not recorded.
    const outbox = new Publisher(ctx.storage, sql, "platform", options, [tenantLogsDestination(env)]);
    outbox.now = now;
    this.outbox = outbox;
    this.core = { sql, storage: ctx.storage, now: () => outbox.now(), commit: (fn) => outbox.commit(fn) };
    ctx.blockConcurrencyWhile(async () => {
      applyMigrations(ctx.storage, platformMigrations);
      this.outbox.schedule();
    });
  }

  /** The alarm: relays the registry's events to the tenants' logs. */
  async alarm(): Promise<void> {
    await this.outbox.alarm();
  }

  /** Cron safety net: re-arms the alarm at the earliest due job. */
  pokeOutbox(): number | null {
    return this.outbox.schedule();
  }

  /** The object's schema: its last applied migration (issue 16: a deployment's apply-migrations and verify steps). */
  schemaVersion(): string | null {
    return schemaVersion(this.ctx.storage);
  }

  /** Host resolution for the front worker's cache: custom domain by exact lowercased host. */
  resolveCustomDomain(host: string): HostResolution | null {
    return resolveCustomDomain(this.core.sql, host);
  }

  /**
   * The dispatcher's host lookup (issue 16, HostDirectory): the tenant's routing facts and its proxy routes
   * for this host. The caller has already mapped the host to a tenant (subdomain) or to a custom domain.
   */
  hostEntry(host: string, tenantId: string, customDomain: { id: string; domain: string } | null = null): HostEntry | null {
    return hostEntry(this.core.sql, host, tenantId, customDomain);
  }

  /** A ready custom domain by host, with its id: the dispatcher routes exactly the hosts the worker's resolution serves. */
  customDomainByHost(host: string): { id: string; domain: string; tenant_id: string } | null {
    return this.core.sql.first<{ id: string; domain: string; tenant_id: string }>`
      SELECT id, domain, tenant_id FROM custom_domains WHERE lower(domain) = ${host.toLowerCase()} AND status = 'ready'` ?? null;
  }

  /** Proxy routes (SPEC §2.3); writes record `proxy_route.*` audit events in the acting tenant's logs. */
  proxyRoutes(audit: AuditContext = SYSTEM_CONTEXT, logTenantId: string | null = null): ProxyRoutes {
    return new ProxyRoutes(this.core, audit, logTenantId);
  }

  /** Whether a tenant id exists (subdomain resolution). */
  hasTenant(id: string): boolean {
    return getTenant(this.core.sql, id) !== null;
  }

  countTenants(): number {
    return countTenants(this.core.sql);
  }

  /**
   * Tenants; writes record `tenant.*` audit events with the caller's context, logged in the acting tenant's
   * logs (`logTenantId`).
   */
  tenants(audit: AuditContext = SYSTEM_CONTEXT, logTenantId: string | null = null): Tenants {
    return new Tenants(this.core, audit, logTenantId);
  }

  /** The operations journal (issue 16); opening an operation records `tenant_operation.created`. */
  operations(audit: AuditContext = SYSTEM_CONTEXT, logTenantId: string | null = null): Operations {
    return new Operations(this.core, audit, logTenantId);
  }

  /** The per-tenant copies' generated secrets, sealed by the worker (issue 16; platform migration 0006). */
  deploySecrets(audit: AuditContext = SYSTEM_CONTEXT, logTenantId: string | null = null): DeploySecrets {
    return new DeploySecrets(this.core, audit, logTenantId);
  }

  /** Custom domains; writes record `custom_domain.*` audit events in the acting tenant's logs. */
  domains(audit: AuditContext = SYSTEM_CONTEXT, logTenantId: string | null = null): Domains {
    return new Domains(this.core, audit, logTenantId);
  }
}
