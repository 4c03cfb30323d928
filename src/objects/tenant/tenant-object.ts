import { DurableObject } from "cloudflare:workers";
import type { TenantConfig, TenantSeed } from "../../shared/types";
import { applyMigrations, Sql } from "../sql";
import { configVersion, readConfig } from "./config";
import { tenantMigrations } from "./migrations";
import { seedTenant } from "./seed";

/**
 * One tenant: every row it owns, in its own SQLite (ARCHITECTURE.md §2). This class is the RPC surface
 * only: each method runs one module function, writes inside one `transactionSync`.
 */
export class TenantObject extends DurableObject<Env> {
  protected readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, tenantMigrations));
  }

  private tx<T>(fn: () => T): T {
    return this.ctx.storage.transactionSync(fn);
  }

  /** Everything a token request needs, in one read. */
  getConfig(tenantId: string): TenantConfig {
    return readConfig(this.sql, tenantId);
  }

  /** The configuration version alone, for cheap cache revalidation. */
  getConfigVersion(): number {
    return configVersion(this.sql);
  }

  /** Idempotent seed; the worker prepared keys, ciphertexts and hashes. */
  seed(seed: TenantSeed): { created: string[] } {
    return this.tx(() => seedTenant(this.sql, seed, Date.now()));
  }

  /** Deletes every row of this tenant (tenant deletion). */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
