import { DurableObject } from "cloudflare:workers";
import { fail, ok, type Result } from "../../shared/errors";
import type { AuditContext, HostResolution, Tenant, TenantInput, TenantPatch } from "../../shared/types";
import { applyMigrations, Sql } from "../sql";
import { audited, type WriteTx } from "../tenant/events";
import { outboxOptionsFrom, Publisher } from "../tenant/publisher";
import { addCustomDomain, type CustomDomain, listCustomDomains, resolveCustomDomain } from "./domains";
import { platformMigrations } from "./migrations";
import { tenantLogsDestination } from "./outbox";
import * as tenants from "./tenants";

/**
 * The singleton registry (ARCHITECTURE.md §2): tenants, custom domains, proxy routes, tenant operations.
 * This class is its RPC surface only; the work lives in the modules beside it.
 */
export class PlatformObject extends DurableObject<Env> {
  private readonly sql: Sql;
  /** The registry's write path and relay: tenant writes commit with their audit events (issue 8). */
  readonly outbox: Publisher;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    const options = outboxOptionsFrom(env as unknown as Record<string, unknown>);
    // The registry has no logs table of its own: with the outbox off its events are not recorded.
    this.outbox = new Publisher(ctx.storage, this.sql, "platform", options, [tenantLogsDestination(env)]);
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

  /** A tenant write with its `tenant.*` audit event, logged in the acting tenant's logs. */
  private tenantWrite<T>(audit: AuditContext, logTenantId: string, fn: (tx: WriteTx) => Result<T>, write: Parameters<typeof audited<T>>[3]): Result<T> {
    return this.outbox.commit((tx) => {
      const routed: WriteTx = {
        ...tx,
        emit: (event) => tx.emit({ ...event, lane: "network", payload: { ...event.payload, log_tenant_id: logTenantId } as typeof event.payload }),
      };
      return audited(routed, audit, fn(tx), write);
    });
  }

  getTenant(id: string): Tenant | null {
    return tenants.getTenant(this.sql, id);
  }

  /** Idempotent bootstrap insert; tells the caller whether the tenant's seed still has to run. */
  ensureTenant(input: TenantInput): { seeded: boolean } {
    return tenants.ensureTenant(this.sql, input, Date.now());
  }

  markTenantSeeded(id: string): void {
    tenants.markSeeded(this.sql, id);
  }

  createTenant(input: TenantInput, audit: AuditContext, logTenantId: string): Result<Tenant> {
    return this.tenantWrite(audit, logTenantId, (tx) => tenants.createTenant(tx.sql, input, tx.now), { entity: "tenant", action: "created", id: input.id, after: (t) => t });
  }

  updateTenant(id: string, patch: TenantPatch, audit: AuditContext, logTenantId: string): Result<Tenant> {
    const before = tenants.getTenant(this.sql, id);
    return this.tenantWrite(audit, logTenantId, (tx) => tenants.updateTenant(tx.sql, id, patch, tx.now), { entity: "tenant", action: "updated", id, before, after: (t) => t });
  }

  deleteTenant(id: string, audit: AuditContext, logTenantId: string): boolean {
    const before = tenants.getTenant(this.sql, id);
    const result = this.tenantWrite(audit, logTenantId, (tx) => (tenants.deleteTenant(tx.sql, id) ? ok(true) : fail(404, "Tenant not found")), { entity: "tenant", action: "deleted", id, before });
    return result.ok;
  }

  listTenants(offset: number, limit: number): { items: Tenant[]; total: number } {
    return tenants.listTenants(this.sql, offset, limit);
  }

  listTenantsAfter(after: { createdAt: number; id: string } | null, limit: number): Tenant[] {
    return tenants.listTenantsAfter(this.sql, after, limit);
  }

  countTenants(): number {
    return tenants.countTenants(this.sql);
  }

  /** Host resolution for the front worker's cache: custom domain by exact lowercased host. */
  resolveCustomDomain(host: string): HostResolution | null {
    return resolveCustomDomain(this.sql, host);
  }

  /** Whether a tenant id exists (subdomain resolution). */
  hasTenant(id: string): boolean {
    return tenants.getTenant(this.sql, id) !== null;
  }

  addCustomDomain(input: { tenant_id: string; domain: string; type: string }): Result<CustomDomain> {
    return addCustomDomain(this.sql, input, Date.now());
  }

  listCustomDomains(tenantId: string): CustomDomain[] {
    return listCustomDomains(this.sql, tenantId);
  }
}
