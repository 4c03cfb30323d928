import { DurableObject } from "cloudflare:workers";
import { now } from "../../shared/clock";
import type { CodeRedemption, TenantConfig, TenantSeed } from "../../shared/types";
import { applyMigrations, Sql } from "../sql";
import { AttackProtectionRpc } from "./attack-protection";
import { BrandingRpc } from "./branding";
import { ClientGrants } from "./client-grants";
import { Clients } from "./clients";
import { configVersion, readConfig } from "./config";
import { Connections } from "./connections";
import { Logins, Sessions } from "./login";
import { tenantMigrations } from "./migrations";
import { ResourceServers } from "./resource-servers";
import type { TenantCore } from "./rpc";
import { seedTenant } from "./seed";
import { SigningKeys } from "./signing-keys";
import { Assertions, type CodeOutcome, Codes, consumeAuthorizationCode, Revocations, Tickets } from "./single-use";
import { Users } from "./users";

/**
 * One tenant: every row it owns, in its own SQLite (ARCHITECTURE.md §2). This class is the RPC surface
 * only: hot reads stay flat methods; every resource is a facade (`stub.clients().create(x)`, one round
 * trip by promise pipelining) whose writes all go through `TenantRpc.commit` (src/objects/tenant/rpc.ts).
 * Facades are methods, not getters: the vitest pool's stub wrapper resolves only top-level keys.
 */
export class TenantObject extends DurableObject<Env> {
  protected readonly core: TenantCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = new Sql(ctx.storage.sql);
    // afterCommit reschedules the alarm once the outbox exists (issue 8); until then there is nothing due.
    this.core = { sql, storage: ctx.storage, now, afterCommit: () => {} };
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, tenantMigrations));
  }

  /** Everything a token request needs, in one read (hot). */
  getConfig(tenantId: string): TenantConfig {
    return readConfig(this.core.sql, tenantId);
  }

  /** The configuration version alone, for cheap cache revalidation (hot). */
  getConfigVersion(): number {
    return configVersion(this.core.sql);
  }

  /**
   * Consumes an authorization code exactly once (hot). Its own transaction: a replay also revokes what
   * the code issued (RFC 6749 §4.1.2).
   */
  consumeAuthorizationCode(redemption: CodeRedemption): CodeOutcome {
    return this.core.storage.transactionSync(() => consumeAuthorizationCode(this.core.sql, redemption, this.core.now()));
  }

  /** Idempotent seed; the worker prepared keys, ciphertexts and hashes. Bumps the version if it created anything. */
  seed(seed: TenantSeed): { created: string[] } {
    return this.core.storage.transactionSync(() => seedTenant(this.core.sql, seed, this.core.now()));
  }

  clients(): Clients {
    return new Clients(this.core);
  }

  resourceServers(): ResourceServers {
    return new ResourceServers(this.core);
  }

  clientGrants(): ClientGrants {
    return new ClientGrants(this.core);
  }

  connections(): Connections {
    return new Connections(this.core);
  }

  branding(): BrandingRpc {
    return new BrandingRpc(this.core);
  }

  attackProtection(): AttackProtectionRpc {
    return new AttackProtectionRpc(this.core);
  }

  signingKeys(): SigningKeys {
    return new SigningKeys(this.core);
  }

  users(): Users {
    return new Users(this.core);
  }

  logins(): Logins {
    return new Logins(this.core);
  }

  sessions(): Sessions {
    return new Sessions(this.core);
  }

  codes(): Codes {
    return new Codes(this.core);
  }

  tickets(): Tickets {
    return new Tickets(this.core);
  }

  revocations(): Revocations {
    return new Revocations(this.core);
  }

  assertions(): Assertions {
    return new Assertions(this.core);
  }

  /** Deletes every row of this tenant (tenant deletion). */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
