import { DurableObject } from "cloudflare:workers";
import { applyMigrations, Sql } from "../sql";
import { clearLoginFailures, isLockedOut, recordLoginFailure } from "./login-throttle";
import { userMigrations } from "./migrations";
import * as refresh from "./refresh-families";
import type { ListPage, ListWindow, NewRefreshToken, RefreshLifetimes, RefreshRotation, RefreshTokenRecord, RotateOutcome } from "../../shared/types";

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

  // Refresh-token families (SPEC §2.8, §3.3): each call is one transaction, serialized per user.

  issueRefreshToken(token: NewRefreshToken): RefreshTokenRecord {
    return this.ctx.storage.transactionSync(() => refresh.issueRefreshToken(this.sql, token, Date.now()));
  }

  rotateRefreshToken(rotation: RefreshRotation, lifetimes: RefreshLifetimes): RotateOutcome {
    return this.ctx.storage.transactionSync(() => refresh.rotateRefreshToken(this.sql, rotation, lifetimes, Date.now()));
  }

  /** RFC 7009: revokes the family of a presented token when it belongs to this client; false otherwise. */
  revokeRefreshTokenFamily(presented: { id: string; token_hash: string; client_id: string }): boolean {
    return this.ctx.storage.transactionSync(() => refresh.revokePresentedFamily(this.sql, presented, Date.now()));
  }

  /** Code replay (RFC 6749 §4.1.2): revokes the family whose first token had this id. */
  revokeRefreshFamilyById(id: string): boolean {
    return this.ctx.storage.transactionSync(() => refresh.revokeFamilyOf(this.sql, id, Date.now()));
  }

  getRefreshToken(id: string): RefreshTokenRecord | null {
    return refresh.getRefreshToken(this.sql, id);
  }

  listRefreshTokens(window: ListWindow): ListPage<RefreshTokenRecord> {
    return refresh.listRefreshTokens(this.sql, window);
  }

  deleteRefreshToken(id: string): boolean {
    return this.ctx.storage.transactionSync(() => refresh.deleteRefreshToken(this.sql, id, Date.now()));
  }

  revokeAllRefreshTokens(): number {
    return this.ctx.storage.transactionSync(() => refresh.revokeAllRefreshTokens(this.sql, Date.now()));
  }

  revokeRefreshTokensBySessions(sessionIds: string[]): number {
    return this.ctx.storage.transactionSync(() => refresh.revokeBySessions(this.sql, sessionIds, Date.now()));
  }
}
