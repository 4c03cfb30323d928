import { DurableObject, RpcTarget } from "cloudflare:workers";
import { now } from "../../shared/clock";
import { applyMigrations, Sql } from "../sql";
import { nextCleanupAt, runUserCleanup } from "./cleanup";
import { ConsoleSessions } from "./console-sessions";
import { activeBlocks, type AttemptAdmission, type AttemptOrigin, beginAttempt, clearFailures, LOCKOUT_ATTEMPTS, LOCKOUT_WINDOW_MS, type LoginBlock, settleAttempt } from "./login-throttle";
import { beginMfa, consumeTotpStep, type MfaAdmission, settleMfa } from "./mfa-throttle";
import { userMigrations } from "./migrations";
import { installMeter, meterEnabled } from "../meter";
import * as refresh from "./refresh-families";
import type {
  ListPage,
  ListWindow,
  NewRefreshToken,
  RefreshLifetimes,
  RefreshRevocationFilter,
  RefreshRotation,
  RefreshTokenRecord,
  RotateOutcome,
} from "../../shared/types";

/** Wait before a cleanup run that failed (the tenant object unreachable) is tried again. */
const CLEANUP_RETRY_MS = 60_000;

/** Makes sure the object's alarm fires no later than `at` (a new expiry; null: none). */
type ExpiryHint = (at: number | null) => void;

/**
 * Keeps the user object's one alarm no later than every family head's expiry (cleanup.ts), at the least
 * cost on the hot paths: it is told of new expiries only (a family issued, a first or an earlier expiry at
 * a rotation, a failed login), reads the alarm time lazily once per object start (a cold start does no
 * storage work for it), and writes only when an expiry is earlier than the alarm already set.
 */
class AlarmKeeper {
  /** The alarm as last read or set; undefined until read after a start. */
  private known: number | null | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly storage: DurableObjectStorage) {}

  readonly expiresAt: ExpiryHint = (at) => {
    if (at === null) return;
    if (this.known !== undefined) {
      if (this.known === null || at < this.known) this.set(at);
      return;
    }
    this.queue = this.queue
      .then(async () => {
        if (this.known === undefined) this.known = await this.storage.getAlarm();
        if (this.known === null || at < this.known) this.set(at);
      })
      .catch((error) => console.warn("user object: could not arm the cleanup alarm", error));
  };

  /** Records (and sets, or clears) the alarm. */
  set(at: number | null): void {
    this.known = at;
    void (at === null ? this.storage.deleteAlarm() : this.storage.setAlarm(at));
  }
}

const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));

/** The earliest expiry of a token record (absolute or idle), or null. */
const tokenExpiry = (t: RefreshTokenRecord) => {
  const times = [ms(t.expires_at), ms(t.idle_expires_at)].filter((x): x is number => x !== null);
  return times.length ? Math.min(...times) : null;
};

/** The password-attempt facade (`stub.attempts()`): one command before bcrypt, one after. */
export class Attempts extends RpcTarget {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly expiresAt: ExpiryHint = () => {},
  ) {
    super();
  }

  /** See {@link beginAttempt}. */
  begin(maxAttempts: number | null = LOCKOUT_ATTEMPTS, origin?: AttemptOrigin): AttemptAdmission {
    const at = now();
    const admission = this.storage.transactionSync(() => beginAttempt(this.sql, at, maxAttempts, origin));
    if (admission.admitted && maxAttempts !== null) this.expiresAt(at + LOCKOUT_WINDOW_MS);
    return admission;
  }

  /** See {@link settleAttempt}. */
  settle(succeeded: boolean, origin?: AttemptOrigin): void {
    this.storage.transactionSync(() => settleAttempt(this.sql, succeeded, origin));
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
    private readonly expiresAt: ExpiryHint = () => {},
  ) {
    super();
  }

  private commit<T>(fn: (sql: Sql, at: number) => T): T {
    return this.storage.transactionSync(() => fn(this.sql, now()));
  }

  /** Starts a family, or says why not (see {@link refresh.issueRefreshToken}). */
  issue(token: NewRefreshToken): RefreshTokenRecord | refresh.IssueRefusal {
    const issued = this.commit((sql, at) => refresh.issueRefreshToken(sql, token, at));
    if (typeof issued !== "string") this.expiresAt(tokenExpiry(issued));
    return issued;
  }

  rotate(rotation: RefreshRotation, lifetimes: RefreshLifetimes): RotateOutcome {
    // No alarm work on the hot path: a successor normally expires later than its predecessor, whose
    // expiry the alarm already covers; only a first or an earlier expiry (a shortened policy) moves it.
    let earlier: number | null = null;
    const outcome = this.commit((sql, at) => refresh.rotateRefreshToken(sql, rotation, lifetimes, at, (t) => (earlier = t)));
    this.expiresAt(earlier);
    return outcome;
  }

  /** RFC 7009: revokes the family of a presented token when it belongs to this client; false otherwise. */
  revokePresented(presented: { id: string; token_hash: string; client_id: string }): boolean {
    return this.commit((sql, at) => refresh.revokePresentedFamily(sql, presented, at));
  }

  /** A replayed code's family (RFC 6749 §4.1.2): revoked, or refused before it is issued. See {@link refresh.refuseFamily}. */
  revokeFamily(id: string): boolean {
    const at = now();
    const revoked = this.storage.transactionSync(() => refresh.refuseFamily(this.sql, id, at));
    if (!revoked) this.expiresAt(at + refresh.ENDED_SESSION_RETENTION_MS);
    return revoked;
  }

  get(id: string): RefreshTokenRecord | null {
    return refresh.getRefreshToken(this.sql, id);
  }

  list(window: ListWindow, filter: { client_id?: string } = {}): ListPage<RefreshTokenRecord> {
    return refresh.listRefreshTokens(this.sql, window, filter);
  }

  /** PATCH /refresh-tokens/{id}: the family's metadata; null for an unknown or revoked token. */
  setMetadata(id: string, metadata: Record<string, string>): RefreshTokenRecord | null {
    return this.commit((sql) => refresh.setRefreshTokenMetadata(sql, id, metadata));
  }

  /** POST /refresh-tokens/revoke with ids: the family of each known id, in one transaction. */
  revokeFamilies(ids: string[]): number {
    return this.commit((sql, at) => refresh.revokeFamiliesOf(sql, ids, at));
  }

  /** POST /refresh-tokens/revoke with user_id [+ client_id [+ audience]]: a soft revoke of whole families. */
  revokeMatching(filter: RefreshRevocationFilter): number {
    return this.commit((sql, at) => refresh.revokeMatching(sql, filter, at));
  }

  /** SPEC §3.3: revokes the rest of the family, then deletes the row. */
  delete(id: string): boolean {
    return this.commit((sql, at) => refresh.deleteRefreshToken(sql, id, at));
  }

  /** Soft revoke of every token (DELETE /users/{id}/refresh-tokens). */
  revokeAll(endedSessionIds: string[] = []): number {
    const at = now();
    const revoked = this.storage.transactionSync(() => {
      refresh.recordEndedSessions(this.sql, endedSessionIds, at);
      return refresh.revokeAllRefreshTokens(this.sql, at);
    });
    if (endedSessionIds.length) this.expiresAt(at + refresh.ENDED_SESSION_RETENTION_MS);
    return revoked;
  }

  /** Every token issued under these sessions (session revocation, blocking the user). */
  revokeBySessions(sessionIds: string[]): number {
    const at = now();
    const revoked = this.storage.transactionSync(() => refresh.revokeBySessions(this.sql, sessionIds, at));
    // The ended sessions it remembers are removed by the alarm once their retention is over.
    if (sessionIds.length) this.expiresAt(at + refresh.ENDED_SESSION_RETENTION_MS);
    return revoked;
  }
}

/**
 * Per-user state, one object per tenant+user (ARCHITECTURE.md §2): refresh-token families and the
 * failed-login throttle, serialized where the races happen instead of on the tenant.
 */
export class UserObject extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly alarmKeeper: AlarmKeeper;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sqlStorage = ctx.storage.sql;
    if (meterEnabled(env, ctx.id.name?.split("/")[0] ?? "")) installMeter(this, ctx.storage, sqlStorage, `user:${ctx.id.name}`);
    this.sql = new Sql(sqlStorage);
    this.alarmKeeper = new AlarmKeeper(ctx.storage);
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, userMigrations));
  }

  attempts(): Attempts {
    return new Attempts(this.ctx.storage, this.sql, this.alarmKeeper.expiresAt);
  }

  mfa(): MfaAttempts {
    return new MfaAttempts(this.ctx.storage, this.sql);
  }

  /** The failed-login locks in force (GET /api/v2/user-blocks), flat: no facade stub per call. See {@link activeBlocks}. */
  loginBlocks(maxAttempts: number, perIp: boolean): LoginBlock[] {
    return activeBlocks(this.sql, now(), maxAttempts, perIp);
  }

  /** Lifts every failed-login lock (DELETE /api/v2/user-blocks); returns how many failures were forgotten. */
  unblockLogins(): number {
    return this.ctx.storage.transactionSync(() => clearFailures(this.sql));
  }

  private benchTable = false;

  /**
   * `npm run bench` only (the rotation floor): the least a rotation must do in this object, one upsert of a
   * row's hash in a transaction. Writes only its own `bench_floor` table.
   */
  benchRotateFloor(id: string, hash: string): boolean {
    if (!this.benchTable) {
      this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS bench_floor (id TEXT PRIMARY KEY, hash TEXT NOT NULL)");
      this.benchTable = true;
    }
    return this.ctx.storage.transactionSync(
      () => this.ctx.storage.sql.exec("INSERT INTO bench_floor (id, hash) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET hash = excluded.hash RETURNING id", id, hash).toArray().length === 1,
    );
  }

  private chainTable = false;

  /**
   * `npm run bench` only (the rotation floor with reuse detection, issue 31): the least a rotation that can
   * tell a replayed token must do here, in one transaction: read the presented row, insert the successor,
   * mark the predecessor rotated. Writes only its own `bench_chain` table.
   */
  benchRotateChainFloor(presented: string, successor: string, hash: string): boolean {
    if (!this.chainTable) {
      this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS bench_chain (id TEXT PRIMARY KEY, hash TEXT NOT NULL, rotated_to TEXT, created_at INTEGER NOT NULL)");
      this.chainTable = true;
    }
    const sql = this.ctx.storage.sql;
    return this.ctx.storage.transactionSync(() => {
      const row = sql.exec("SELECT * FROM bench_chain WHERE id = ?", presented).toArray()[0];
      if (row?.rotated_to != null) return false;
      sql.exec("INSERT INTO bench_chain (id, hash, created_at) VALUES (?, ?, ?)", successor, hash, Date.now());
      if (row) sql.exec("UPDATE bench_chain SET rotated_to = ? WHERE id = ?", successor, presented);
      return true;
    });
  }

  /** The admin console's sessions of this operator (issue 30): `stub.consoleSessions().touch(hash)`. */
  consoleSessions(): ConsoleSessions {
    return new ConsoleSessions(this.ctx.storage, this.sql);
  }

  /** Refresh-token families (SPEC §2.8, §3.3): `stub.refreshTokens().issue(...)`. */
  refreshTokens(): RefreshTokens {
    return new RefreshTokens(this.ctx.storage, this.sql, this.alarmKeeper.expiresAt);
  }

  /**
   * The refresh grant's one call, flat (STYLE.md: hot paths stay flat methods, no facade stub per call).
   * See {@link RefreshTokens.rotate}.
   */
  rotateRefreshToken(rotation: RefreshRotation, lifetimes: RefreshLifetimes): RotateOutcome {
    return this.refreshTokens().rotate(rotation, lifetimes);
  }

  /**
   * A revocation cascade's call (SPEC §3.3), flat so no facade stub outlives it: the tokens issued under
   * the given sessions, or every token of the user (`null`: blocking, deletion). Idempotent.
   */
  revokeRefreshTokens(sessionIds: string[] | null, endedSessionIds: string[] = []): number {
    const tokens = this.refreshTokens();
    // Blocking and deletion revoke everything and name the sessions they ended: none may start a family later.
    return sessionIds === null ? tokens.revokeAll(endedSessionIds) : tokens.revokeBySessions(sessionIds);
  }

  /** The alarm: one bounded cleanup run (src/objects/user/cleanup.ts), then the next due time. */
  async alarm(): Promise<void> {
    let next: number | null;
    try {
      const { more } = await runUserCleanup({
        sql: this.sql,
        transaction: (fn) => this.ctx.storage.transactionSync(fn),
        now,
        config: () => this.tenantConfig(),
      });
      next = more ? now() : nextCleanupAt(this.sql);
    } catch (error) {
      // The tenant could not be asked for the clients' policies: nothing was deleted; try again later.
      console.warn("user object cleanup failed; retrying later", error);
      next = now() + CLEANUP_RETRY_MS;
    }
    this.alarmKeeper.set(next);
  }

  /** The tenant's configuration (client refresh policies), from the tenant object this user belongs to. */
  private tenantConfig() {
    const name = this.ctx.id.name ?? "";
    const tenantId = name.slice(0, name.indexOf("/"));
    return this.env.TENANT.getByName(tenantId).getConfig(tenantId);
  }

  /**
   * Forgets everything this object holds for its user (DELETE /users/{id}, after the tenant's commit):
   * every table and any alarm, then an empty schema again, so the object stays usable and a second wipe
   * is a no-op.
   */
  async wipe(): Promise<void> {
    // Through the keeper, so its cached alarm is forgotten too: a later expiry hint (a cascade landing after
    // the wipe) then arms the alarm again instead of trusting a time that no longer exists.
    this.alarmKeeper.set(null);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    applyMigrations(this.ctx.storage, userMigrations);
  }
}
