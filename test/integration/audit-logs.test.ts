import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { PlatformObject } from "../../src/objects/platform/platform-object";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { createTenant, env, mgmt, uniqueId } from "../helpers/api";
import { createClient } from "../helpers/management";
import { type LogView, logsOf, outboxRows, relay } from "../helpers/outbox";
import { expectReachability } from "../helpers/reach";

const asTenant = (tenantId: string) => ({ headers: { "tenant-id": tenantId } });

describe("audit events and the logs destination (SPEC §2.10, §6.2)", () => {
  it("a management write records sapi with actor, target before/after/diff, request and response, under the outbox event id", async () => {
    const tenantId = await createTenant();
    const client = await createClient({ name: "Before" }, asTenant(tenantId));
    const res = await mgmt("PATCH", `/clients/${client.client_id}?why=test`, {
      ...asTenant(tenantId),
      headers: { "tenant-id": tenantId, "user-agent": "audit-test/1", "x-forwarded-for": "203.0.113.9" },
      body: { name: "After" },
    });
    expect(res.status).toBe(200);
    // The write committed its event (the object's own alarm may already have relayed it: that race is not
    // observable behaviour, so only the row and, below, the log under its id are asserted).
    const [event] = await outboxRows(tenantId, "client.updated");
    expect(event?.id).toEqual(expect.any(String));
    await relay(tenantId);

    const logs = await logsOf(tenantId);
    const log = logs.find((l) => l.details.event_type === "client.updated") as LogView;
    expect(log.log_id).toBe(event?.id);
    expect(log).toMatchObject({ type: "sapi", ip: "203.0.113.9", user_agent: "audit-test/1", client_id: "gatehouse-control-plane" });
    expect(log.details).toMatchObject({
      category: "admin_action",
      actor: { type: "client", id: "gatehouse-control-plane@clients", client_id: "gatehouse-control-plane" },
      target: { type: "client", id: client.client_id, diff: { name: { before: "Before", after: "After" } } },
      request: { method: "PATCH", path: `/api/v2/clients/${client.client_id}`, query: { why: "test" }, body: { name: "After" } },
      response: { status_code: 200 },
    });
    expect(log.details.target?.before).toMatchObject({ name: "Before" });
    expect(log.details.target?.after).toMatchObject({ name: "After" });
    expect(await (await mgmt("GET", `/logs/${log.log_id}`, asTenant(tenantId))).json()).toEqual(log);
    expect((await mgmt("GET", "/logs/evt_nothing", asTenant(tenantId))).status).toBe(404);
  });

  it("a refused management write records fapi with the error status, and the refused rows stay unwritten", async () => {
    const tenantId = await createTenant();
    expect((await mgmt("DELETE", "/clients/nope", asTenant(tenantId))).status).toBe(404);
    await relay(tenantId);
    const [log] = await logsOf(tenantId, "?q=type:fapi");
    expect(log).toMatchObject({ type: "fapi", details: { event_type: "client.deleted", response: { status_code: 404 } } });
  });

  it("passwords, secrets, tokens, authorization headers and API keys nested at any depth never reach a log row", async () => {
    const tenantId = await createTenant();
    const secrets = ["s3cr3t-api-key", "Bearer s3cr3t-header", "s3cr3t-pass", "s3cr3t-token", "s3cr3t-list-value"];
    const options = {
      sink: { apiKey: secrets[0], headers: { Authorization: secrets[1] }, deeper: [{ password: secrets[2] }, { refresh_token: secrets[3] }] },
      header_list: [{ name: "X-Api-Key", value: secrets[4] }],
      keep: "visible-value",
    };
    const res = await mgmt("POST", "/connections", { ...asTenant(tenantId), body: { name: uniqueId("con"), strategy: "auth0", options } });
    expect(res.status, await res.clone().text()).toBe(201);
    await relay(tenantId);
    const stored = JSON.stringify(await logsOf(tenantId)) + JSON.stringify(await outboxRows(tenantId));
    for (const secret of secrets) expect(stored).not.toContain(secret.replace("Bearer ", ""));
    expect(stored).toContain("visible-value");
    expect(stored).toContain("[REDACTED]");
  });

  it("with outbox.enabled false an audit event is written straight to the logs table at commit, with no outbox row", async () => {
    const tenantId = await createTenant();
    await runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => {
      o.outbox.options = { ...o.outbox.options, enabled: false };
    });
    await createClient({ name: "Direct" }, asTenant(tenantId));
    expect(await outboxRows(tenantId, "client.created")).toEqual([]);
    const logs = await logsOf(tenantId, "?q=type:sapi");
    expect(logs.map((l) => l.details.event_type)).toContain("client.created");
  });
});

describe("GET /api/v2/logs (SPEC §4.2, §4.3)", () => {
  async function tenantWithLogs(n: number) {
    const tenantId = await createTenant();
    for (let i = 0; i < n; i++) await createClient({ name: `App ${i}` }, asTenant(tenantId));
    await relay(tenantId);
    return tenantId;
  }

  it("sorts by date only: date:-1 (default) and date:1; any other sort is 400", async () => {
    const tenantId = await tenantWithLogs(3);
    const newest = await logsOf(tenantId);
    const oldest = await logsOf(tenantId, "?sort=date:1");
    expect(newest.length).toBeGreaterThanOrEqual(3);
    expect(oldest.map((l) => l.log_id)).toEqual([...newest].reverse().map((l) => l.log_id));
    expect(newest.map((l) => l.date)).toEqual([...newest.map((l) => l.date)].sort().reverse());
    const bad = await mgmt("GET", "/logs?sort=type:1", asTenant(tenantId));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ errorCode: "invalid_query_string" });
  });

  it("checkpoint paging walks every log once ({logs, next}), and a cursor replayed under another sort is 400", async () => {
    const tenantId = await tenantWithLogs(5);
    const all = (await logsOf(tenantId, "?per_page=100")).map((l) => l.log_id);
    const seen: string[] = [];
    let from: string | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await mgmt("GET", `/logs?take=2${from ? `&from=${from}` : ""}`, asTenant(tenantId));
      const body = (await res.json()) as { logs: LogView[]; next?: string };
      seen.push(...body.logs.map((l) => l.log_id));
      if (!body.next) break;
      from = body.next;
    }
    expect(seen).toEqual(all);
    const first = (await (await mgmt("GET", "/logs?take=1", asTenant(tenantId))).json()) as { next: string };
    expect((await mgmt("GET", `/logs?take=1&sort=date:1&from=${first.next}`, asTenant(tenantId))).status).toBe(400);
  });

  it("q filters on type, user_id, client_id and date ranges; a malformed q is 400", async () => {
    const tenantId = await tenantWithLogs(2);
    const sapi = await logsOf(tenantId, "?q=type:sapi");
    expect(sapi.length).toBeGreaterThanOrEqual(2);
    expect(sapi.every((l) => l.type === "sapi")).toBe(true);
    expect(await logsOf(tenantId, `?q=${encodeURIComponent("type:fp OR type:fu")}`)).toEqual([]);
    expect(await logsOf(tenantId, `?q=${encodeURIComponent('client_id:"gatehouse-control-plane" AND type:sapi')}`)).toHaveLength(sapi.length);
    expect(await logsOf(tenantId, `?q=${encodeURIComponent("user_id:auth0|nobody")}`)).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await logsOf(tenantId, `?q=${encodeURIComponent(`date:[${today} TO *]`)}`)).toHaveLength(sapi.length);
    expect(await logsOf(tenantId, `?q=${encodeURIComponent("date:[* TO 2000-01-01]")}`)).toEqual([]);
    for (const q of ["email:x", "type:", "date:yesterday", "date:[x TO y]", "(type:fp OR", "description:(a OR b)"]) {
      const res = await mgmt("GET", `/logs?q=${encodeURIComponent(q)}`, asTenant(tenantId));
      expect(res.status, q).toBe(400);
    }
  });

  it("offset mode with include_totals gives the envelope", async () => {
    const tenantId = await tenantWithLogs(3);
    const res = await mgmt("GET", "/logs?per_page=2&page=0&include_totals=true", asTenant(tenantId));
    const body = (await res.json()) as { start: number; limit: number; length: number; total: number; logs: LogView[] };
    expect(body).toMatchObject({ start: 0, limit: 2, length: 2 });
    expect(body.total).toBeGreaterThanOrEqual(3);
  });

  it("who can read logs: none 401, no read:logs 403, another tenant 403, read:logs 200", async () => {
    await expectReachability("GET", () => "/logs", "read:logs", 200);
    await expectReachability("GET", () => "/logs/evt_unknown", "read:logs", 404);
    await expectReachability("GET", () => "/users/auth0|nobody/logs", "read:logs", 200);
  });
});

describe("tenant writes (registry outbox, ARCHITECTURE.md §3 internal destination)", () => {
  it("creating, updating and deleting a tenant commits a tenant.* event in the registry, relayed to the acting tenant's logs", async () => {
    const tenantId = uniqueId("aud");
    expect((await mgmt("POST", "/tenants", { body: { id: tenantId, name: "Audited" } })).status).toBe(201);
    expect((await mgmt("PATCH", `/tenants/${tenantId}`, { body: { friendly_name: "Renamed" } })).status).toBe(200);
    expect((await mgmt("DELETE", `/tenants/${tenantId}`)).status).toBe(204);
    const registry = env.PLATFORM.getByName("platform");
    // The registry's own alarm may hold these events in a pass of its own (leased, so a manual pass skips
    // them) while it delivers; run passes until that pass has settled them too.
    await vi.waitFor(
      async () => {
        await runInDurableObject(registry, async (o: PlatformObject) => {
          await o.outbox.alarm();
        });
        const pending = await runInDurableObject(registry, (_o, state) =>
          state.storage.sql.exec("SELECT count(*) AS n FROM outbox WHERE processed_at IS NULL AND payload LIKE ?", `%${tenantId}%`).one().n,
        );
        expect(pending).toBe(0);
      },
      { timeout: 20_000, interval: 250 },
    );
    const logs = await logsOf("control_plane", `?q=${encodeURIComponent("event_type:tenant.*")}&per_page=100`);
    const mine = logs.filter((l) => l.details.target?.id === tenantId).map((l) => l.details.event_type);
    expect(mine.sort()).toEqual(["tenant.created", "tenant.deleted", "tenant.updated"]);
    const updated = logs.find((l) => l.details.target?.id === tenantId && l.details.event_type === "tenant.updated");
    expect(updated?.details.target?.diff).toMatchObject({ friendly_name: { after: "Renamed" } });
  });
});
