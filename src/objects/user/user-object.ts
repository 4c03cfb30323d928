import { DurableObject } from "cloudflare:workers";
import { applyMigrations, Sql } from "../sql";
import { clearLoginFailures, isLockedOut, recordLoginFailure } from "./login-throttle";
import { userMigrations } from "./migrations";

/**
 * Per-user state, one object per tenant+user (ARCHITECTURE.md §2): refresh-token families and the
 * failed-login throttle, serialized where the races happen instead of on the tenant.
 */
export class UserObject extends DurableObject<Env> {
  private readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, userMigrations));
  }

  recordLoginFailure(): { locked: boolean; failures: number } {
    return this.ctx.storage.transactionSync(() => recordLoginFailure(this.sql, Date.now()));
  }

  isLockedOut(): boolean {
    return isLockedOut(this.sql, Date.now());
  }

  clearLoginFailures(): void {
    clearLoginFailures(this.sql);
  }
}
