import type { Sql } from "../sql";
import { buildAuditEvent, SYSTEM_CONTEXT } from "./core/audit";
import type { AuditContext } from "../../shared/types";
import { getBranding, updateBranding } from "./settings/branding";
import { audited } from "./core/events";
import { recordOutboxEvents } from "./core/outbox";
import type { Publisher } from "./core/publisher";
import { createUser } from "./users/user-writes";
import { meterLast, meterPause, meterReplay, meterStart, meterStop, type RecordedCalls } from "../meter";
import { dumpTables, restoreTables, type TableRows } from "./bench-replay";
import { RpcTarget } from "cloudflare:workers";

/**
 * Benchmark probes (`npm run bench`, reached only through /__bench when BENCH_ROUTES=1; never used by the
 * product). They run inside the tenant object so that figures measure the object, not HTTP.
 */

// workerd advances Date.now() only across I/O; yielding to a timer makes the reading current.
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Relay throughput: records `backlog` audit events (not timed), then times alarm runs until every one is
 * delivered to the logs destination.
 */
export async function benchRelay(publisher: Publisher, sql: Sql, storage: DurableObjectStorage, backlog: number) {
  const now = publisher.now();
  for (let done = 0; done < backlog; done += 1000) {
    const events = Array.from({ length: Math.min(1000, backlog - done) }, (_, i) => ({
      event_type: "bench.event",
      payload: buildAuditEvent({ event_type: "bench.event", log_type: "sapi", category: "system", description: `bench ${done + i}` }, SYSTEM_CONTEXT, now),
    }));
    storage.transactionSync(() => recordOutboxEvents(sql, events, now));
  }
  await tick();
  const started = Date.now();
  let passes = 0;
  let delivered = 0;
  while (delivered < backlog && passes < 1000) {
    delivered += (await publisher.alarm()).local;
    passes++;
  }
  await tick();
  const ms = Date.now() - started;
  return { backlog, ms, passes, per_second: ms > 0 ? Math.round((backlog * 1000) / ms) : null };
}

/**
 * Cost of a management write in the object with and without its outbox event: `n` PATCH /branding commits
 * (read before, write, bump the configuration version), once bare and once with its `branding.updated`
 * audit event (before, after, diff, request) recorded in the same transaction.
 */
export async function benchCommit(publisher: Publisher, n: number) {
  const audit: AuditContext = {
    actor: { type: "client", id: "bench@clients", client_id: "bench", scopes: ["update:branding"] },
    request: { method: "PATCH", path: "/api/v2/branding", query: {}, body: { colors: { primary: "#000000" } }, ip: "127.0.0.1", user_agent: "bench" },
  };
  const run = async (withEvent: boolean) => {
    await tick();
    const started = Date.now();
    for (let i = 0; i < n; i++) {
      publisher.commit((tx) => {
        const before = getBranding(tx.sql);
        const after = updateBranding(tx.sql, { colors: { primary: `#${(i % 0xffffff).toString(16).padStart(6, "0")}` } });
        if (withEvent) audited(tx, audit, { ok: true, value: after }, { entity: "branding", action: "updated", id: "branding", before, after: (b) => b });
      });
    }
    await tick();
    return Date.now() - started;
  };
  await run(false);
  const bare = await run(false);
  const withOutbox = await run(true);
  return { n, bare_ms: bare, outbox_ms: withOutbox, overhead_us: Math.round(((withOutbox - bare) * 1000) / n), ratio: bare > 0 ? withOutbox / bare : null };
}

/**
 * Bulk users for the users rows of `npm run bench` (no bcrypt: passwordless users): `count` users numbered
 * from `from`, each through `createUser` (duplicate checks, the insert, its identity and trigram-index rows
 * by trigger), 1,000 per transaction and without audit events. Answers the time the inserts took.
 */
export async function benchSeedUsers(storage: DurableObjectStorage, sql: Sql, now: () => number, input: { connection: string; from: number; count: number; password_hash?: string | null }) {
  await tick();
  const started = Date.now();
  for (let done = 0; done < input.count; done += 1000) {
    storage.transactionSync(() => {
      for (let i = input.from + done; i < input.from + Math.min(done + 1000, input.count); i++) {
        const at = now();
        createUser(sql, { user_id: `${input.connection}|bench${i}`, connection: input.connection, email: `bench-user-${i}@example.com`, email_verified: true, password_hash: input.password_hash ?? null, name: `Bench User ${i}` }, at);
      }
    });
  }
  await tick();
  const ms = Date.now() - started;
  return { count: input.count, ms, per_second: ms > 0 ? Math.round((input.count * 1000) / ms) : null };
}

/**
 * The bench probes as one facade (`stub.bench().relay(n)`), reached only through /__bench when
 * BENCH_ROUTES=1 (and by tests). `meter*` need OBJECT_METER=1 (src/objects/meter.ts).
 */
export class TenantBench extends RpcTarget {
  constructor(
    private readonly object: object,
    private readonly publisher: Publisher,
    private readonly sql: Sql,
    private readonly storage: DurableObjectStorage,
    private readonly now: () => number,
    private readonly env: Env,
  ) {
    super();
  }

  /** Nothing: the capacity model's facade round trip (`/__bench/rpc-loop?kind=facade`). */
  ping(): number {
    return 0;
  }

  relay(backlog: number) {
    return benchRelay(this.publisher, this.sql, this.storage, backlog);
  }

  commit(n: number) {
    return benchCommit(this.publisher, n);
  }

  seedUsers(input: { connection: string; from: number; count: number; password_hash?: string | null }) {
    return benchSeedUsers(this.storage, this.sql, this.now, input);
  }

  /** This instance records with or without the outbox (SPEC §6.3 `enabled`). */
  setOutbox(enabled: boolean): void {
    this.publisher.options = { ...this.publisher.options, enabled };
  }

  /**
   * Opens a metering window on this tenant's object, its users' objects and its code shards (same isolate in workerd and the
   * test pool), keeping a copy of the tenant's rows for the replay; `meterStop` answers the window's counts
   * and the outbox events recorded meanwhile.
   */
  meterStart(tenantId: string): void {
    meterStart(tenantObjectNamed(tenantId));
    meterStart(usersOf(tenantId));
    meterStart(codesOf(tenantId));
    windows.set(tenantId, { outbox: outboxHead(this.sql), rows: dumpTables(this.sql) });
  }

  /** Pauses or resumes this tenant's window (nothing counted while paused). */
  meterPause(tenantId: string, paused: boolean): void {
    meterPause(tenantObjectNamed(tenantId), paused);
    meterPause(usersOf(tenantId), paused);
    meterPause(codesOf(tenantId), paused);
  }

  meterStop(tenantId: string) {
    const tenant = meterStop(tenantObjectNamed(tenantId));
    const users = meterStop(usersOf(tenantId));
    const codes = meterStop(codesOf(tenantId));
    return { tenant, users, codes, outbox_events: outboxHead(this.sql) - (windows.get(tenantId)?.outbox ?? 0) };
  }

  /**
   * The object-side work of this tenant's last window, timed inside an object: a scratch tenant object gets
   * the rows as they were when the window opened and runs the window's calls in a loop (src/objects/meter.ts).
   */
  meterReplay(tenantId: string, n: number) {
    const rows = windows.get(tenantId)?.rows;
    if (!rows) return { error: "no metering window" };
    return this.env.TENANT.getByName(`${tenantId}~replay-${crypto.randomUUID()}`).bench().replayOn(rows, meterLast(this.object), n);
  }

  /** Restores `rows` into this (scratch) object, then times `calls` on them. */
  replayOn(rows: TableRows, calls: RecordedCalls, n: number) {
    restoreTables(this.storage, this.sql, rows);
    // Each call is committed before the next one is timed: its outbox rows and alarm are dropped (no relay here).
    return meterReplay(this.object, this.storage, calls, n, () => {
      this.sql.run`DELETE FROM outbox`;
      void this.storage.deleteAlarm();
    });
  }
}

/** One name filter per tenant and kind, the same function each time (meter.ts knows an open window by it). */
const filters = new Map<string, (name: string) => boolean>();
const filter = (key: string, make: () => (name: string) => boolean) => {
  const found = filters.get(key) ?? make();
  filters.set(key, found);
  return found;
};
const tenantObjectNamed = (tenantId: string) => filter(`tenant:${tenantId}`, () => (name) => name === `tenant:${tenantId}`);
const usersOf = (tenantId: string) => filter(`user:${tenantId}/`, () => (name) => name.startsWith(`user:${tenantId}/`));
/** The tenant's code shards (issue 31: sealed codes' single use and their exchanges' log events). */
const codesOf = (tenantId: string) => filter(`codes:${tenantId}/`, () => (name) => name.startsWith(`codes:${tenantId}/`));
const windows = new Map<string, { outbox: number; rows: TableRows }>();
const outboxHead = (sql: Sql) => sql.first<{ id: number | null }>`SELECT max(rowid) AS id FROM outbox`?.id ?? 0;
