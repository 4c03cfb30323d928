import { DurableObject, RpcTarget } from "cloudflare:workers";
import { now } from "../../shared/clock";
import { applyMigrations, Sql } from "../sql";
import { type AttemptAdmission, beginAttempt, settleAttempt } from "./login-throttle";
import { userMigrations } from "./migrations";

/** The password-attempt facade (`stub.attempts()`): one command before bcrypt, one after. */
export class Attempts extends RpcTarget {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
  ) {
    super();
  }

  /** See {@link beginAttempt}. */
  begin(): AttemptAdmission {
    return this.storage.transactionSync(() => beginAttempt(this.sql, now()));
  }

  /** See {@link settleAttempt}. */
  settle(succeeded: boolean): void {
    this.storage.transactionSync(() => settleAttempt(this.sql, succeeded));
  }
}

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

  attempts(): Attempts {
    return new Attempts(this.ctx.storage, this.sql);
  }
}
