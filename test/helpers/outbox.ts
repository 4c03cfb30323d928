import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { inject } from "vitest";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import type { MetricRecord } from "../../src/objects/tenant/core/relay";
import { mgmt } from "./api";
import { CODE_SHARDS, codeShardNameAt } from "../../src/shared/object-names";

/** The webhook receiver started by test/receiver/global-setup.mjs. */
export const receiverUrl = () => inject("receiverUrl");

/** A receiver URL with its own name, so each test reads only its own deliveries. */
export const hookUrl = (name: string, query = "") => `${receiverUrl()}/hook/${name}${query ? `?${query}` : ""}`;

export interface Delivery {
  key: string | null;
  status: number;
  body: { id: string; event_type: string; trigger_id: string; tenant_id: string; created_at: string; attempt: number; data: Record<string, unknown> };
}

/** What the receiver recorded under a name. */
export async function deliveries(name: string): Promise<Delivery[]> {
  return (await (await fetch(`${receiverUrl()}/log/${name}`)).json()) as Delivery[];
}

const stub = (tenantId: string) => env.TENANT.getByName(tenantId);

/**
 * Carries the `seacft` events of a tenant's sealed-code redemptions to its logs now, as the code shards'
 * alarms do within a quarter of a second (issue 31); returns how many were delivered.
 */
export async function flushCodeShards(tenantId: string): Promise<number> {
  const shards = Array.from({ length: CODE_SHARDS }, (_, n) => env.CODES.getByName(codeShardNameAt(tenantId, n)));
  return (await Promise.all(shards.map((shard) => shard.flushLogs()))).reduce((a, b) => a + b, 0);
}

/**
 * Runs the relay of a tenant now, as its alarm would (repeated until nothing is due, at most `rounds`), after
 * its code shards delivered their waiting log events ({@link flushCodeShards}).
 */
export async function relay(tenantId: string, rounds = 10): Promise<void> {
  await flushCodeShards(tenantId);
  for (let i = 0; i < rounds; i++) {
    const pending = await runInDurableObject(stub(tenantId), async (o: TenantObject) => {
      await o.outbox.alarm();
      return o.outbox.pendingNow();
    });
    if (pending === 0) return;
  }
}

/** Fires the tenant object's scheduled alarm (false when none was scheduled). */
export const fireAlarm = (tenantId: string) => runDurableObjectAlarm(stub(tenantId));

/**
 * Injects the object's clock and jitter. Start it a day ahead of real time so that the alarms it schedules
 * never fire by themselves during the test: the test alone drives the relay.
 */
export async function injectClock(tenantId: string, start = Date.now() + 86_400_000, random = 0.5) {
  const clock = { now: start };
  await runInDurableObject(stub(tenantId), (o: TenantObject) => {
    o.outbox.now = () => clock.now;
    o.outbox.random = () => random;
  });
  return clock;
}

/** Collects the metric records the relay produces. */
export async function collectMetrics(tenantId: string): Promise<() => Promise<MetricRecord[]>> {
  await runInDurableObject(stub(tenantId), (o: TenantObject) => {
    const records: MetricRecord[] = [];
    (o as unknown as { __metrics: MetricRecord[] }).__metrics = records;
    o.outbox.metrics = (record) => records.push(record);
  });
  return () => runInDurableObject(stub(tenantId), (o: TenantObject) => [...(o as unknown as { __metrics: MetricRecord[] }).__metrics]);
}

export interface OutboxRowView {
  id: string;
  event_type: string;
  retry_count: number;
  next_retry_at: number;
  error: string | null;
  processed_at: number | null;
  dead_lettered_at: number | null;
  final_error: string | null;
  claim_id: string | null;
  lease_until: number | null;
  payload: string;
}

/** The tenant's outbox rows, oldest first (optionally of one event type). */
export async function outboxRows(tenantId: string, eventType?: string): Promise<OutboxRowView[]> {
  return runInDurableObject(stub(tenantId), (_o, state) => {
    const rows = state.storage.sql.exec("SELECT * FROM outbox ORDER BY created_at, id").toArray() as unknown as OutboxRowView[];
    return eventType ? rows.filter((r) => r.event_type === eventType) : rows;
  });
}

/**
 * The rows of one event type once every one was attempted: delivered, or failed with its error recorded.
 * The object's own alarm (set at commit) can claim a row while the test's relay pass runs; that pass then
 * finds nothing due and returns before the alarm's delivery has written its outcome, so wait for it.
 */
export async function attemptedRows(tenantId: string, eventType: string, timeoutMs = 15_000): Promise<OutboxRowView[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await outboxRows(tenantId, eventType);
    const open = rows.filter((r) => r.processed_at == null && r.error == null);
    if (rows.length && !open.length) return rows;
    if (Date.now() > deadline) return rows;
    await relay(tenantId);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs SQL in the tenant object (assertions on rows the API does not show). */
export function tenantSql<T>(tenantId: string, query: string, ...values: (string | number | null)[]): Promise<T[]> {
  return runInDurableObject(stub(tenantId), (_o, state) => state.storage.sql.exec(query, ...values).toArray() as T[]);
}

/** Creates a webhook hook in a tenant and returns it. */
export async function createHook(tenantId: string, triggerId: string, url: string) {
  const res = await mgmt("POST", "/hooks", { headers: { "tenant-id": tenantId }, body: { trigger_id: triggerId, url } });
  if (res.status !== 201) throw new Error(`create hook failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; trigger_id: string; url: string; enabled: boolean };
}

/** GET /logs of a tenant (control-plane token), parsed. */
export async function logsOf(tenantId: string, query = "") {
  const res = await mgmt("GET", `/logs${query}`, { headers: { "tenant-id": tenantId } });
  if (res.status !== 200) throw new Error(`GET /logs failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as LogView[];
}

export interface LogView {
  log_id: string;
  date: string;
  type: string;
  description: string;
  client_id: string | null;
  user_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown> & {
    event_type: string;
    actor: Record<string, unknown>;
    target?: { type: string; id: string; before?: unknown; after?: unknown; diff?: Record<string, { before: unknown; after: unknown }> };
    request?: Record<string, unknown>;
    response?: { status_code: number };
  };
}
