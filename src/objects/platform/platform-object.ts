import { DurableObject } from "cloudflare:workers";
import type { Result } from "../../shared/errors";
import type { HostResolution, Tenant, TenantInput, TenantPatch } from "../../shared/types";
import { applyMigrations, Sql } from "../sql";
import { addCustomDomain, type CustomDomain, listCustomDomains, resolveCustomDomain } from "./domains";
import { platformMigrations } from "./migrations";
import * as tenants from "./tenants";

/**
 * The singleton registry (ARCHITECTURE.md §2): tenants, custom domains, proxy routes, tenant operations.
 * This class is its RPC surface only; the work lives in the modules beside it.
 */
export class PlatformObject extends DurableObject<Env> {
  private readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, platformMigrations));
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

  createTenant(input: TenantInput): Result<Tenant> {
    return tenants.createTenant(this.sql, input, Date.now());
  }

  updateTenant(id: string, patch: TenantPatch): Result<Tenant> {
    return tenants.updateTenant(this.sql, id, patch, Date.now());
  }

  deleteTenant(id: string): boolean {
    return tenants.deleteTenant(this.sql, id);
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
