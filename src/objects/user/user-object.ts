import { DurableObject, RpcTarget } from "cloudflare:workers";
import { now } from "../../shared/clock";
import { applyMigrations, Sql } from "../sql";
import { type AttemptAdmission, beginAttempt, LOCKOUT_ATTEMPTS, settleAttempt } from "./login-throttle";
import { beginMfa, consumeTotpStep, type MfaAdmission, settleMfa } from "./mfa-throttle";
import { userMigrations } from "./migrations";
import * as refresh from "./refresh-families";
import type { ListPage, ListWindow, NewRefreshToken, RefreshLifetimes, RefreshRotation, RefreshTokenRecord, RotateOutcome } from "../../shared/types";

/** The password-attempt facade (`stub.attempts()`): one command before bcrypt, one after. */
export class Attempts extends RpcTarget {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
  ) {
    super();
  }

  /** See {@link beginAttempt}. */
  begin(maxAttempts: number | null = LOCKOUT_ATTEMPTS): AttemptAdmission {
    return this.storage.transactionSync(() => beginAttempt(this.sql, now(), maxAttempts));
  }

  /** See {@link settleAttempt}. */
  settle(succeeded: boolean): void {
    this.storage.transactionSync(() => settleAttempt(this.sql, succeeded));
  }
}

/** Second-factor attempts (`stub.mfa()`): the lock of issue 12 point 3 and single-use TOTP steps. */
export class MfaAttempts extends RpcTarget {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
  ) {
    super();
  }

  /** See {@link beginMfa}. */
  begin(): MfaAdmission {
    return this.storage.transactionSync(() => beginMfa(this.sql, now()));
  }

  /** See {@link settleMfa}. */
  settle(succeeded: boolean): void {
    this.storage.transactionSync(() => settleMfa(this.sql, succeeded));
  }

  /** See {@link consumeTotpStep}. */
  consumeTotpStep(methodId: string, step: number): boolean {
    return this.storage.transactionSync(() => consumeTotpStep(this.sql, methodId, step, now()));
  }
}

/** The refresh-token facade: each command is one transaction, serialized per user. */
export class RefreshTokens extends RpcTarget {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
  ) {
    super();
  }

  private commit<T>(fn: (sql: Sql, at: number) => T): T {
    return this.storage.transactionSync(() => fn(this.sql, now()));
  }

  issue(token: NewRefreshToken): RefreshTokenRecord {
    return this.commit((sql, at) => refresh.issueRefreshToken(sql, token, at));
  }

  rotate(rotation: RefreshRotation, lifetimes: RefreshLifetimes): RotateOutcome {
    return this.commit((sql, at) => refresh.rotateRefreshToken(sql, rotation, lifetimes, at));
  }

  /** RFC 7009: revokes the family of a presented token when it belongs to this client; false otherwise. */
  revokePresented(presented: { id: string; token_hash: string; client_id: string }): boolean {
    return this.commit((sql, at) => refresh.revokePresentedFamily(sql, presented, at));
  }

  /** Revokes the family a token id belongs to (code replay, RFC 6749 §4.1.2). */
  revokeFamily(id: string): boolean {
    return this.commit((sql, at) => refresh.revokeFamilyOf(sql, id, at));
  }

  get(id: string): RefreshTokenRecord | null {
    return refresh.getRefreshToken(this.sql, id);
  }

  list(window: ListWindow): ListPage<RefreshTokenRecord> {
    return refresh.listRefreshTokens(this.sql, window);
  }

  /** SPEC §3.3: revokes the rest of the family, then deletes the row. */
  delete(id: string): boolean {
    return this.commit((sql, at) => refresh.deleteRefreshToken(sql, id, at));
  }

  /** Soft revoke of every token (DELETE /users/{id}/refresh-tokens). */
  revokeAll(): number {
    return this.commit((sql, at) => refresh.revokeAllRefreshTokens(sql, at));
  }

  /** Every token issued under these sessions (session revocation, blocking the user). */
  revokeBySessions(sessionIds: string[]): number {
    return this.commit((sql, at) => refresh.revokeBySessions(sql, sessionIds, at));
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

  mfa(): MfaAttempts {
    return new MfaAttempts(this.ctx.storage, this.sql);
  }

  /** Refresh-token families (SPEC §2.8, §3.3): `stub.refreshTokens().rotate(...)`. */
  refreshTokens(): RefreshTokens {
    return new RefreshTokens(this.ctx.storage, this.sql);
  }
}
