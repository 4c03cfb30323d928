import { DurableObject } from "cloudflare:workers";
import { now } from "../../shared/clock";
import type { HostResolution } from "../../shared/types";
import { applyMigrations, Sql } from "../sql";
import { Domains, resolveCustomDomain } from "./domains";
import { platformMigrations } from "./migrations";
import type { PlatformCore } from "./rpc";
import { countTenants, getTenant, Tenants } from "./tenants";

/**
 * The singleton registry (ARCHITECTURE.md §2): tenants, custom domains, proxy routes, tenant operations.
 * This class is its RPC surface only: the host-resolution reads stay flat (hot), each resource is a facade.
 */
export class PlatformObject extends DurableObject<Env> {
  private readonly core: PlatformCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.core = { sql: new Sql(ctx.storage.sql), storage: ctx.storage, now };
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, platformMigrations));
  }

  /** Host resolution for the front worker's cache: custom domain by exact lowercased host. */
  resolveCustomDomain(host: string): HostResolution | null {
    return resolveCustomDomain(this.core.sql, host);
  }

  /** Whether a tenant id exists (subdomain resolution). */
  hasTenant(id: string): boolean {
    return getTenant(this.core.sql, id) !== null;
  }

  countTenants(): number {
    return countTenants(this.core.sql);
  }

  tenants(): Tenants {
    return new Tenants(this.core);
  }

  domains(): Domains {
    return new Domains(this.core);
  }
}
