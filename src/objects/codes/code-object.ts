import { DurableObject } from "cloudflare:workers";
import { now } from "../../shared/clock";
import type { CodeExchangeLog, SealedCodeOutcome, SealedCodeRedemption } from "../../shared/types";
import { installMeter, meterEnabled } from "../meter";
import { applyMigrations, Sql } from "../sql";
import { codeMigrations } from "./migrations";

/**
 * One of a tenant's code shards (issue 31, ARCHITECTURE.md §2): where the single use of sealed authorization
 * codes is serialized, off the tenant object. A code carries its own facts (sealed by the worker, src/worker/
 * oauth/tokens/sealed-code.ts), so the tenant object writes nothing when it is issued; its redemption is one
 * transaction here, chosen by the code's id (`codeShardName`), which records the code as redeemed and its
 * `seacft` log event together. The alarm carries those events to the tenant's logs in batches (one tenant
 * commit for many exchanges, by id so a batch delivered twice writes each row once) and forgets redeemed
 * codes once they have expired (a replay of an expired code is refused as expired anyway).
 */

/** How long a redemption's log event waits for others before its batch goes to the tenant's logs. */
export const FLUSH_DELAY_MS = 250;
/** The most log events one tenant commit takes. */
const BATCH = 500;
/** Batches per alarm run before the rest waits for the next one. */
const BATCHES_PER_RUN = 8;
/** Retry of a batch the tenant object did not take (doubling, at most {@link MAX_RETRY_MS}). */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 300_000;

export class CodeObject extends DurableObject<Env> {
  private readonly sql: Sql;
  /** The alarm as this instance last set it (null: none; undefined: not known since start). */
  private alarmAt: number | null | undefined;
  private retryMs = FIRST_RETRY_MS;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    if (meterEnabled(env, this.tenantId())) installMeter(this, ctx.storage, ctx.storage.sql, `codes:${ctx.id.name}`);
    this.sql = new Sql(ctx.storage.sql);
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, codeMigrations));
  }

  /**
   * Redeems a sealed code exactly once: a code redeemed before answers `consumed` (with what its first
   * redemption issued, so the worker revokes it), whatever this attempt brings; one the worker found not
   * consumable (expired, another client, redirect_uri or PKCE verifier) is left as it is; otherwise the code
   * is recorded as redeemed together with its log event, in one transaction.
   */
  redeem(r: SealedCodeRedemption): SealedCodeOutcome {
    const at = now();
    const outcome = this.ctx.storage.transactionSync((): SealedCodeOutcome => {
      const before = this.sql.first<{ user_id: string; access_jti: string; redeemed_at: number }>`
        SELECT user_id, access_jti, redeemed_at FROM redeemed_codes WHERE id = ${r.id}`;
      if (before) return { ok: false, reason: "consumed", user_id: before.user_id, access_jti: before.access_jti, redeemed_at: Number(before.redeemed_at) };
      if (!r.consumable) return { ok: false, reason: "unconsumed" };
      this.sql.run`INSERT INTO redeemed_codes (id, user_id, access_jti, expires_at, redeemed_at)
        VALUES (${r.id}, ${r.user_id}, ${r.access_jti}, ${r.expires_at}, ${at})`;
      this.sql.run`INSERT INTO pending_logs (id, entry, at) VALUES (${r.log.id}, ${JSON.stringify(r.log)}, ${r.log.at})`;
      return { ok: true };
    });
    if (outcome.ok) this.armNoLaterThan(at + FLUSH_DELAY_MS);
    return outcome;
  }

  /** Log events waiting for the tenant's logs (tests, operators). */
  pendingLogs(): number {
    return this.sql.first<{ n: number }>`SELECT count(*) AS n FROM pending_logs`?.n ?? 0;
  }

  /**
   * Delivers the waiting log events to the tenant's logs, oldest first, in batches; a row is deleted only
   * after the tenant object committed it. Returns how many were delivered; throws when the tenant did not
   * take a batch (the rows stay).
   */
  async flushLogs(): Promise<number> {
    let delivered = 0;
    for (let run = 0; run < BATCHES_PER_RUN; run++) {
      const rows = this.sql.all<{ id: string; entry: string }>`SELECT id, entry FROM pending_logs ORDER BY at, id LIMIT ${BATCH}`;
      if (rows.length === 0) break;
      const entries = rows.map((row) => JSON.parse(row.entry) as CodeExchangeLog);
      await this.env.TENANT.getByName(this.tenantId()).appendCodeExchanges(entries);
      const ids = JSON.stringify(rows.map((row) => row.id));
      this.ctx.storage.transactionSync(() => this.sql.run`DELETE FROM pending_logs WHERE id IN (SELECT value FROM json_each(${ids}))`);
      delivered += rows.length;
      if (rows.length < BATCH) break;
    }
    return delivered;
  }

  /** The alarm: the waiting log events to the tenant, expired redemptions forgotten, then the next due time. */
  async alarm(): Promise<void> {
    this.alarmAt = null;
    let failed = false;
    try {
      await this.flushLogs();
      this.retryMs = FIRST_RETRY_MS;
    } catch (error) {
      failed = true;
      console.warn(`code shard ${this.ctx.id.name}: the tenant did not take a batch of log events; retrying in ${this.retryMs} ms`, error);
      this.armNoLaterThan(now() + this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    }
    const at = now();
    this.ctx.storage.transactionSync(() => this.sql.run`DELETE FROM redeemed_codes WHERE expires_at <= ${at}`);
    const pending = this.sql.first<{ at: number | null }>`SELECT min(at) AS at FROM pending_logs`?.at ?? null;
    const expiry = this.sql.first<{ at: number | null }>`SELECT min(expires_at) AS at FROM redeemed_codes`?.at ?? null;
    if (pending !== null && !failed) this.armNoLaterThan(at + FLUSH_DELAY_MS);
    if (expiry !== null) this.armNoLaterThan(expiry);
  }

  /**
   * Forgets everything this shard holds (tenant deletion, after the tenant stopped resolving): its rows and
   * its alarm, then an empty schema again, so the object stays usable and a second wipe is a no-op.
   */
  async wipe(): Promise<void> {
    this.alarmAt = null;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    applyMigrations(this.ctx.storage, codeMigrations);
  }

  /** Makes sure the alarm fires no later than `at` (one storage write only when it moves earlier). */
  private armNoLaterThan(at: number): void {
    if (this.alarmAt != null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  private tenantId(): string {
    const name = this.ctx.id.name ?? "";
    return name.slice(0, name.indexOf("/"));
  }
}
