import { describe, expect, it } from "vitest";
import { createTenant, uniqueId } from "../helpers/api";
import { onTenant } from "../helpers/actions";
import { customConnection, importModeSetup, LEGACY_SCRIPTS, legacyStore, loginThrough } from "../helpers/custom-db";
import { logsOf, relay, tenantSql } from "../helpers/outbox";

/**
 * Issue 32 point 2: custom database connections. A legacy user store with its own bcrypt hashes is served
 * by the test receiver over HTTP; the connection's scripts reach it through the egress gateway.
 */
const email = () => `${uniqueId("legacy")}@example.com`;

const usersOf = (tenant: string, connection: string) =>
  tenantSql<{ user_id: string; email: string; name: string; password_hash: string | null; app_metadata: string }>(
    tenant,
    "SELECT user_id, email, name, password_hash, app_metadata FROM users WHERE connection = ?",
    connection,
  );

describe("import mode: users move with their password on their first login (lazy migration)", () => {
  it("a legacy user logs in, lands as a Gatehouse user with the legacy profile, and logs in again with the store switched off", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1", name: "Ada Legacy", given_name: "Ada", plan: "gold" }]);
    const { connection, client } = await importModeSetup(tenant, store.base);

    const first = await loginThrough(tenant, client, connection.name, who, "legacy-pass-1");
    expect(first.status, await first.clone().text()).toBe(302);
    expect(new URL(first.headers.get("location") ?? "").searchParams.get("code")).toBeTruthy();
    const [moved] = await usersOf(tenant, connection.name);
    expect(moved).toMatchObject({ user_id: "auth0|1000", email: who, name: "Ada Legacy" });
    expect(JSON.parse(moved?.app_metadata ?? "{}")).toEqual({ plan: "gold" });
    // Hashed by Gatehouse, not the legacy store's hash.
    expect(moved?.password_hash).toMatch(/^\$2[aby]\$\d\d\$/);
    expect(await store.calls()).toEqual({ login: 1 });

    await store.off();
    const again = await loginThrough(tenant, client, connection.name, who, "legacy-pass-1");
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location") ?? "").searchParams.get("code")).toBeTruthy();
    expect(await store.calls()).toEqual({ login: 1 });
    expect(await usersOf(tenant, connection.name)).toHaveLength(1);

    await relay(tenant);
    const logs = await logsOf(tenant, `?q=${encodeURIComponent(`user_id:"auth0|1000"`)}`);
    expect(logs.map((l) => l.type).sort()).toEqual(["s", "s", "ss"]);
    expect(logs.find((l) => l.type === "ss")?.description).toBe(`User moved from the custom database of connection ${connection.name}`);
  });

  it("a wrong password answers as any wrong password (fp) and moves no one", async () => {
    const tenant = await createTenant();
    const who = email();
    const store = await legacyStore([{ email: who, password: "legacy-pass-1" }]);
    const { connection, client } = await importModeSetup(tenant, store.base);
    const res = await loginThrough(tenant, client, connection.name, who, "not-the-password");
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Wrong email or password.");
    expect(await usersOf(tenant, connection.name)).toHaveLength(0);
    await relay(tenant);
    const [failure] = await logsOf(tenant, "?q=type:fp");
    expect(failure?.description).toMatch(/^Wrong email or password\./);
  });
});
