import { describe, expect, it } from "vitest";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { customConnection, importModeSetup, LEGACY_SCRIPTS, legacyStore, loginThrough } from "../helpers/custom-db";
import { relay } from "../helpers/outbox";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/**
 * Issue 32 point 4: GET /connections/{id}/status of a custom database in import mode carries the migration
 * report (`gatehouse_migration`, a Gatehouse extension): users moved, script logins per day from the logs,
 * the last script login. Other connections answer the reference's empty 200.
 */
const email = () => `${uniqueId("report")}@example.com`;
const statusOf = async (tenant: string, id: string, token?: string) => {
  const res = await mgmt("GET", `/connections/${id}/status`, { headers: { "tenant-id": tenant }, ...(token ? { token } : {}) });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};

describe("the migration report of an import-mode connection", () => {
  it("counts users moved and script logins per day (moves and failures), never the local logins after a move", async () => {
    const tenant = await createTenant();
    const [ada, bob] = [email(), email()];
    const store = await legacyStore([
      { email: ada, password: "legacy-pass-1" },
      { email: bob, password: "legacy-pass-2" },
    ]);
    const { connection, client } = await importModeSetup(tenant, store.base);
    const before = await statusOf(tenant, connection.id);
    expect(before.gatehouse_migration).toMatchObject({ import_mode: true, users_moved: 0, script_logins_last_30_days: 0, last_script_login_at: null });

    expect((await loginThrough(tenant, client, connection.name, ada, "legacy-pass-1")).status).toBe(302);
    expect((await loginThrough(tenant, client, connection.name, bob, "a-wrong-one")).status).toBe(403);
    // Ada is local now: this login never reaches the script and is not counted.
    expect((await loginThrough(tenant, client, connection.name, ada, "legacy-pass-1")).status).toBe(302);
    expect(await store.calls()).toEqual({ login: 2 });
    await relay(tenant);

    const report = (await statusOf(tenant, connection.id)).gatehouse_migration as {
      users_moved: number;
      users_without_password: number;
      script_logins_last_30_days: number;
      last_script_login_at: string;
      days: { date: string; script_logins: number; moved: number; failed: number }[];
    };
    expect(report).toMatchObject({ users_moved: 1, users_without_password: 0, script_logins_last_30_days: 2 });
    expect(Date.now() - Date.parse(report.last_script_login_at)).toBeLessThan(60_000);
    expect(report.days).toHaveLength(30);
    const today = new Date().toISOString().slice(0, 10);
    expect(report.days.at(-1)).toEqual({ date: today, script_logins: 2, moved: 1, failed: 1 });
    expect(report.days.slice(0, -1).every((d) => d.script_logins === 0)).toBe(true);
  });

  it("a custom database without import mode and a plain database connection answer the reference's empty 200", async () => {
    const tenant = await createTenant();
    const store = await legacyStore([]);
    const scripts = await customConnection(tenant, {
      enabledDatabaseCustomization: true,
      customScripts: { login: LEGACY_SCRIPTS.login, get_user: LEGACY_SCRIPTS.get_user },
      configuration: { BASE: store.base },
    });
    const plain = await customConnection(tenant, {});
    expect(await statusOf(tenant, scripts.id)).toEqual({});
    expect(await statusOf(tenant, plain.id)).toEqual({});
  });

  it("who can reach it: read:connections of the tenant only", async () => {
    const kit = await reachKit(["read:connections", "create:connections"]);
    const store = await legacyStore([]);
    const { connection } = await importModeSetup(kit.tenant, store.base);
    await expectRefusals(kit, "GET", `/connections/${connection.id}/status`, "read:connections");
    expect((await statusOf(kit.tenant, connection.id, kit.allowed)).gatehouse_migration).toBeTruthy();
  });
});
