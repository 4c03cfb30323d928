import { createScheduledController, createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LOCAL_BATCH, leaseMs, RETENTION_BATCH } from "../../src/objects/tenant/core/relay";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import worker from "../../src/worker/index";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { bindAction } from "../helpers/actions";
import { createClient } from "../helpers/management";
import { collectMetrics, createHook, deliveries, fireAlarm, hookUrl, injectClock, outboxRows, relay, tenantSql } from "../helpers/outbox";
import { expectReachability } from "../helpers/reach";

const asTenant = (tenantId: string) => ({ headers: { "tenant-id": tenantId } });
const DAY_MS = 86_400_000;

/** A tenant whose post-user-login webhook always fails, with one hook event recorded and the clock injected. */
async function failingHookEvent() {
  const tenantId = await createTenant();
  const clock = await injectClock(tenantId);
  const name = uniqueId("dead");
  await createHook(tenantId, "post-user-login", hookUrl(name, "fail=1000"));
  await runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => {
    o.outbox.commit((tx) => tx.emit({ event_type: "hook.post-user-login", payload: { trigger_id: "post-user-login", data: { user: { user_id: "auth0|x" } }, timestamp: new Date(tx.now).toISOString() } }));
  });
  const [event] = await outboxRows(tenantId, "hook.post-user-login");
  return { tenantId, clock, name, eventId: event?.id as string };
}

/** Runs attempts until the event is dead-lettered, moving the injected clock past each backoff. */
async function exhaust(tenantId: string, clock: { now: number }) {
  for (let i = 0; i < 10; i++) {
    await fireAlarm(tenantId);
    const [row] = await outboxRows(tenantId, "hook.post-user-login");
    if (row?.dead_lettered_at) return row;
    clock.now = Math.max(clock.now, row?.next_retry_at ?? clock.now);
  }
  throw new Error("never dead-lettered");
}

describe("relay: dead letter, failed events and replay (SPEC §3.2, §4.2)", () => {
  it("dead-letters in the attempt that reaches maxRetries (5), recording final_error and processed_at, with metrics", async () => {
    const { tenantId, clock, name, eventId } = await failingHookEvent();
    const metrics = await collectMetrics(tenantId);
    const row = await exhaust(tenantId, clock);
    expect(row).toMatchObject({ id: eventId, retry_count: 5, dead_lettered_at: clock.now, processed_at: clock.now, claim_id: null });
    expect(row.final_error).toMatch(/^webhook: hook hk_\w+: HTTP 500$/);
    expect((await deliveries(name)).length).toBe(5);
    const records = await metrics();
    expect(records.filter((r) => r.metric === "backoff_ms")).toHaveLength(4);
    expect(records.filter((r) => r.metric === "dead_lettered")).toEqual([
      { tenant_id: tenantId, event_type: "hook.post-user-login", destination: "webhook", metric: "dead_lettered", value: 1 },
    ]);
    // Dead-lettered events are skipped by later passes.
    clock.now += DAY_MS;
    await fireAlarm(tenantId);
    expect((await deliveries(name)).length).toBe(5);

    const listed = await mgmt("GET", "/failed-events?include_totals=true", asTenant(tenantId));
    expect(await listed.json()).toMatchObject({ start: 0, limit: 50, length: 1, total: 1, events: [{ id: eventId, event_type: "hook.post-user-login", retry_count: 5 }] });
  });

  it("retry clears every retry and claim field, schedules the alarm, and the event is delivered again with the same key", async () => {
    const { tenantId, clock, name, eventId } = await failingHookEvent();
    await exhaust(tenantId, clock);
    // The receiver keeps failing for this name; point the hook at a healthy one before replaying.
    const [hook] = (await (await mgmt("GET", "/hooks", asTenant(tenantId))).json()) as { id: string }[];
    await mgmt("PATCH", `/hooks/${hook?.id}`, { ...asTenant(tenantId), body: { url: hookUrl(`${name}-ok`) } });

    const res = await mgmt("POST", `/failed-events/${eventId}/retry`, asTenant(tenantId));
    expect(res.status).toBe(200);
    const [row] = await outboxRows(tenantId, "hook.post-user-login");
    expect(row).toMatchObject({ retry_count: 0, error: null, dead_lettered_at: null, final_error: null, processed_at: null, claim_id: null, lease_until: null });
    expect(await fireAlarm(tenantId)).toBe(true);
    const [ok] = await deliveries(`${name}-ok`);
    expect(ok?.key).toBe(eventId);
    expect((await outboxRows(tenantId, "hook.post-user-login"))[0]?.processed_at).toEqual(expect.any(Number));
    expect(await (await mgmt("GET", "/failed-events", asTenant(tenantId))).json()).toEqual([]);
    expect((await mgmt("POST", `/failed-events/${eventId}/retry`, asTenant(tenantId))).status).toBe(404);
  });

  it("bulk-retry replays what it finds and reports the rest, never aborting; more than 100 ids or none is 400", async () => {
    const { tenantId, clock, eventId } = await failingHookEvent();
    await exhaust(tenantId, clock);
    const res = await mgmt("POST", "/failed-events/bulk-retry", { ...asTenant(tenantId), body: { ids: ["evt_missing", eventId, "evt_other"] } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ replayed: [eventId], not_found: ["evt_missing", "evt_other"] });
    const tooMany = Array.from({ length: 101 }, (_, i) => `evt_${i}`);
    for (const body of [{ ids: tooMany }, { ids: [] }, { id: eventId }, "not json"]) {
      expect((await mgmt("POST", "/failed-events/bulk-retry", { ...asTenant(tenantId), body })).status).toBe(400);
    }
  });

  it("who can see and replay failed events: none 401, missing scope 403, another tenant 403, the right scope succeeds", async () => {
    await expectReachability("GET", () => "/failed-events", "read:failed_events", 200);
    await expectReachability("POST", () => "/failed-events/evt_none/retry", "update:failed_events", 404);
    await expectReachability("POST", () => "/failed-events/bulk-retry", "update:failed_events", 200, () => ({ ids: ["evt_none"] }));
  });
});

describe("relay: leases, retention and the alarm (ARCHITECTURE.md §3)", () => {
  it("an event held by a crashed pass is not delivered twice while leased, and is delivered once its lease ends", async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    const name = uniqueId("lease");
    await createHook(tenantId, "post-user-login", hookUrl(name));
    const lease = await runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => {
      o.outbox.commit((tx) => tx.emit({ event_type: "hook.post-user-login", payload: { trigger_id: "post-user-login", data: {}, timestamp: "" } }));
      // A pass that claimed the event and then died: claim and lease set, nothing settled.
      o.outbox.commit((tx) => tx.sql.run`UPDATE outbox SET claim_id = 'dead-pass', lease_until = ${tx.now + leaseMs(o.outbox.destinations)},
        next_retry_at = ${tx.now + leaseMs(o.outbox.destinations)} WHERE event_type = 'hook.post-user-login'`);
      return leaseMs(o.outbox.destinations);
    });
    expect(lease).toBeGreaterThan(10_000 * 4);
    await fireAlarm(tenantId);
    expect(await deliveries(name)).toEqual([]);
    clock.now += lease;
    await fireAlarm(tenantId);
    expect(await deliveries(name)).toHaveLength(1);
    expect((await outboxRows(tenantId, "hook.post-user-login"))[0]).toMatchObject({ claim_id: null, lease_until: null, processed_at: clock.now });
  });

  it("a pass's lease follows the events it claimed and the actions bound now: a crash holds hook events 30 s, not every destination's worst case", async () => {
    const tenantId = await createTenant();
    const leases = () =>
      runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => {
        const destinations = o.outbox.destinations;
        const network = destinations.filter((d) => d.lane === "network");
        return {
          five: leaseMs(destinations, Array(5).fill("hook.post-user-registration")),
          nine: leaseMs(destinations, Array(9).fill("hook.post-user-registration")),
          ceiling: leaseMs(destinations),
          everyDestination: network.reduce((sum, d) => sum + d.timeoutMs, 0),
        };
      });
    // No action bound: five webhook events are one wave, bounded by the webhook timeout (10 s) plus the margin.
    const before = await leases();
    expect(before.five).toBe(10_000 + 20_000);
    // Nine events need two waves of eight.
    expect(before.nine).toBe(2 * 10_000 + 20_000);
    // The bound for a full batch that every network destination accepts stays the ceiling.
    expect(before.ceiling).toBe(4 * before.everyDestination + 20_000);
    // One action bound to the trigger adds one run's bound (ACTIONS_TIMEOUT_MS + 1 s) per wave.
    await bindAction(tenantId, "post-user-registration", "exports.onExecutePostUserRegistration = async () => {};");
    const after = await leases();
    expect(after.five - before.five).toBe(Number((env as { ACTIONS_TIMEOUT_MS?: string }).ACTIONS_TIMEOUT_MS ?? 5000) + 1000);
    expect(after.five).toBeLessThan(after.ceiling);
  });

  it("a real pass claims with that lease (read while the event is claimed)", async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    await createHook(tenantId, "post-user-login", hookUrl(uniqueId("claimed")));
    const seen: number[] = [];
    const stub = env.TENANT.getByName(tenantId);
    const expected = await runInDurableObject(stub, (o: TenantObject, state) => {
      // A destination that reads the event's claim from inside its delivery, while the pass holds it.
      o.outbox.destinations.push({
        name: "claim-reader",
        lane: "network",
        timeoutMs: 0,
        accepts: (type) => type === "hook.post-user-login",
        deliver: async () => {
          seen.push(...state.storage.sql.exec("SELECT lease_until FROM outbox WHERE event_type = 'hook.post-user-login'").toArray().map((r) => Number(r.lease_until)));
        },
      });
      o.outbox.commit((tx) => tx.emit({ event_type: "hook.post-user-login", payload: { trigger_id: "post-user-login", data: {}, timestamp: "" } }));
      return leaseMs(o.outbox.destinations, ["hook.post-user-login"]);
    });
    await fireAlarm(tenantId);
    await runInDurableObject(stub, (o: TenantObject) => {
      o.outbox.destinations.splice(o.outbox.destinations.findIndex((d) => d.name === "claim-reader"), 1);
    });
    expect(seen).toEqual([clock.now + expected]);
    expect(expected).toBeLessThan(120_000);
  });

  it("keeps one alarm at the earliest due job and deletes processed events after retentionDays in bounded batches", async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    const count = RETENTION_BATCH + 5;
    await runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => {
      o.outbox.commit((tx) => {
        for (let i = 0; i < count; i++) tx.emit({ event_type: "test.event", payload: { event_type: "test.event", log_type: "sapi", category: "system", description: `e${i}`, actor: { type: "system", id: null }, timestamp: new Date(tx.now).toISOString() } });
      });
    });
    expect(await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => state.storage.getAlarm())).toBe(clock.now);
    await relay(tenantId);
    expect((await tenantSql<{ n: number }>(tenantId, "SELECT count(*) AS n FROM logs WHERE event_type = 'test.event'"))[0]?.n).toBe(count);
    expect(count).toBeGreaterThan(LOCAL_BATCH);
    const processedAt = clock.now;
    // Next job: retention of those events, 7 days after they were processed.
    expect(await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => state.storage.getAlarm())).toBe(processedAt + 7 * DAY_MS);
    clock.now = processedAt + 7 * DAY_MS;
    await fireAlarm(tenantId);
    expect((await outboxRows(tenantId, "test.event")).length).toBe(0);
    // Logs stay; retention applies to the outbox only.
    expect((await tenantSql<{ n: number }>(tenantId, "SELECT count(*) AS n FROM logs WHERE event_type = 'test.event'"))[0]?.n).toBe(count);
  });

  it("the cron safety net re-arms a lost alarm at the earliest due job", async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    const due = await runInDurableObject(env.TENANT.getByName(tenantId), async (o: TenantObject, state) => {
      o.outbox.commit((tx) => tx.emit({ event_type: "hook.post-user-login", payload: { trigger_id: "post-user-login", data: {}, timestamp: "" } }));
      await state.storage.deleteAlarm();
      return state.storage.sql.exec("SELECT MIN(next_retry_at) AS at FROM outbox WHERE processed_at IS NULL").one().at;
    });
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const alarm = await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => state.storage.getAlarm());
    expect(due).toBe(clock.now);
    expect(alarm).toBe(clock.now);
  });

  it("the logs destination is idempotent: a redelivered event (or a repeated append) leaves one row under its event id", async () => {
    const tenantId = await createTenant();
    await createClient({}, asTenant(tenantId));
    await relay(tenantId);
    const [event] = await outboxRows(tenantId, "client.created");
    // As if a relay pass had delivered it and died before settling: due again.
    await tenantSql(tenantId, "UPDATE outbox SET processed_at = NULL, next_retry_at = 0 WHERE id = ?", event?.id as string);
    await relay(tenantId);
    expect((await outboxRows(tenantId, "client.created"))[0]?.processed_at).toEqual(expect.any(Number));
    expect(await tenantSql(tenantId, "SELECT log_id FROM logs WHERE log_id = ?", event?.id as string)).toHaveLength(1);
    const payload = JSON.parse(event?.payload as string);
    await env.TENANT.getByName(tenantId).logs().append(event?.id as string, payload);
    await env.TENANT.getByName(tenantId).logs().append(event?.id as string, payload);
    expect(await tenantSql(tenantId, "SELECT log_id FROM logs WHERE log_id = ?", event?.id as string)).toHaveLength(1);
  });

  it("a write whose events cannot be recorded does not commit", async () => {
    const tenantId = await createTenant();
    const name = `App ${uniqueId()}`;
    const outcome = await runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject, state) => {
      try {
        o.outbox.commit((tx) => {
          tx.sql.run`INSERT INTO clients (client_id, name, created_at, updated_at) VALUES (${"c-orphan"}, ${name}, ${tx.now}, ${tx.now})`;
          tx.emit({ event_type: "client.created", payload: undefined as never });
        });
        return "committed";
      } catch {
        return state.storage.sql.exec("SELECT count(*) AS n FROM clients WHERE client_id = 'c-orphan'").one().n;
      }
    });
    expect(outcome).toBe(0);
    await createClient({}, asTenant(tenantId));
  });
});
