import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { codeShardNameAt } from "../../src/shared/object-names";
import type { TenantOperation } from "../../src/shared/types";
import { call, CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedUser } from "../helpers/flows";

const registry = () => env.PLATFORM.getByName("platform");
const userStub = (tenantId: string, userId: string) => env.USER.getByName(`${tenantId}/${userId}`);

/** Rows in every table of an object (its own schema bookkeeping aside). */
async function rowsIn(stub: DurableObjectStub): Promise<number> {
  return runInDurableObject(stub, (_o, state: DurableObjectState) => {
    const tables = state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'")
      .toArray()
      .map((t) => t.name);
    let n = 0;
    for (const table of tables) n += Number(state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${table}"`).one().n);
    return n;
  });
}

const shard = (tenantId: string) => env.CODES.getByName(codeShardNameAt(tenantId, 0));

/** A tenant with two users whose objects hold data (a login attempt each), a code shard's redemption, and a custom domain. */
async function populatedTenant() {
  const id = await createTenant();
  const users = [await seedUser(id, `${uniqueId("u")}@example.com`), await seedUser(id, `${uniqueId("u")}@example.com`)];
  for (const user of users) {
    const attempts = userStub(id, user.user_id).attempts();
    await attempts.begin();
    await attempts.settle(false);
    expect(await rowsIn(userStub(id, user.user_id))).toBeGreaterThan(0);
  }
  // A code shard holding a redeemed code (issue 31: sealed codes' single use lives there).
  const actor = { type: "client" as const, id: "c", client_id: "c" };
  const log = { id: `evt_${uniqueId()}`, at: Date.now(), client_id: "c", user_id: users[0]?.user_id as string, audit: { actor } };
  const redemption = { id: uniqueId("code"), user_id: users[0]?.user_id as string, expires_at: Date.now() + 300_000, consumable: true, access_jti: "jti", log };
  expect(await shard(id).redeem(redemption)).toEqual({ ok: true });
  expect(await rowsIn(shard(id))).toBeGreaterThan(0);
  const domain = `del.${uniqueId()}.example.test`;
  expect((await mgmt("POST", "/custom-domains", { body: { tenant_id: id, domain, type: "auth0_managed_certs" } })).status).toBe(201);
  return { id, users, domain };
}

const deletionOf = async (tenantId: string): Promise<TenantOperation | undefined> =>
  (await registry().operations().list(tenantId, { page: 0, per_page: 10, kind: "delete" })).operations[0];

describe("tenant deletion is a journaled operation that removes everything (issue 15 point 4)", () => {
  afterEach(() => setClock());

  it("DELETE /tenants/{id} wipes every user object and code shard, the tenant's data, its domains and organization, journaled step by step", async () => {
    const { id, users, domain } = await populatedTenant();
    expect((await mgmt("DELETE", `/tenants/${id}`)).status).toBe(204);
    for (const user of users) {
      expect(await rowsIn(userStub(id, user.user_id))).toBe(0);
      expect((await userStub(id, user.user_id).refreshTokens().list({ offset: 0, limit: 10 })).items).toEqual([]);
    }
    expect(await rowsIn(shard(id))).toBe(0);
    expect(await rowsIn(env.TENANT.getByName(id))).toBe(0);
    expect((await mgmt("GET", `/tenants/${id}`)).status).toBe(404);
    expect((await mgmt("GET", `/organizations/name/${id}`)).status).toBe(404);
    await createTenant(); // (with a single tenant left, any host would be that tenant's, SPEC §5.5 step 6)
    const discovery = await call("/.well-known/openid-configuration", { host: domain });
    expect(discovery.status, await discovery.clone().text()).toBe(404);
    const op = await deletionOf(id);
    expect(op?.status).toBe("succeeded");
    const journal = await registry().operations().get(op?.id as string);
    const succeeded = journal?.events?.filter((e) => e.status === "succeeded").map((e) => e.step);
    expect(succeeded).toEqual(["plan", "unregister", "release-domains", "deprovision", "delete-users", "delete-organization", "delete-tenant-data"]);
    expect(journal?.events?.find((e) => e.step === "delete-users" && e.status === "succeeded")?.detail).toEqual({ users: 2, code_shards: 4 });
  });

  it("a run that dies mid-way is resumed by the stale-operation sweep and completes", async () => {
    const { id, users } = await populatedTenant();
    const { openTenantDeletion, runTenantDeletion } = await import("../../src/worker/tenant/tenant-deletion");
    const { resumeStaleOperations } = await import("../../src/worker/deploy/resume");
    const { settingsOf } = await import("../../src/worker/settings");
    const tenant = await registry().tenants().get(id);
    const opened = await openTenantDeletion(env, tenant as NonNullable<typeof tenant>);
    await expect(runTenantDeletion(env, settingsOf(env), opened.id, { failAt: "delete-users" })).rejects.toThrow("delete-users");
    // Half done: the tenant no longer resolves, but its users' objects and organization are still there.
    expect((await mgmt("GET", `/tenants/${id}`)).status).toBe(404);
    expect(await rowsIn(userStub(id, users[0]?.user_id as string))).toBeGreaterThan(0);
    expect((await mgmt("GET", `/organizations/name/${id}`)).status).toBe(200);
    const paused = await registry().operations().get(opened.id);
    expect(paused?.status).toBe("running");
    expect(paused?.events?.some((e) => e.step === "delete-users" && e.status === "failed")).toBe(true);
    // Nothing moves until the journal has been idle for the stale window; then the sweep finishes it.
    expect(await resumeStaleOperations(env)).not.toContain(opened.id);
    setClock(() => Date.now() + 10 * 60_000);
    expect(await resumeStaleOperations(env)).toContain(opened.id);
    setClock();
    const finished = await registry().operations().get(opened.id);
    expect(finished?.status).toBe("succeeded");
    // Steps that had succeeded ran once; the failed one ran again.
    expect(finished?.events?.filter((e) => e.step === "unregister" && e.status === "started")).toHaveLength(1);
    expect(finished?.events?.filter((e) => e.step === "delete-users" && e.status === "started")).toHaveLength(2);
    for (const user of users) expect(await rowsIn(userStub(id, user.user_id))).toBe(0);
    expect(await rowsIn(env.TENANT.getByName(id))).toBe(0);
    expect((await mgmt("GET", `/organizations/name/${id}`)).status).toBe(404);
  });

  it("a deletion that died before its first step is resumed from the top", async () => {
    const { id, users } = await populatedTenant();
    const { openTenantDeletion } = await import("../../src/worker/tenant/tenant-deletion");
    const { resumeStaleOperations } = await import("../../src/worker/deploy/resume");
    const tenant = await registry().tenants().get(id);
    const opened = await openTenantDeletion(env, tenant as NonNullable<typeof tenant>);
    setClock(() => Date.now() + 10 * 60_000);
    expect(await resumeStaleOperations(env)).toContain(opened.id);
    setClock();
    expect((await registry().operations().get(opened.id))?.status).toBe("succeeded");
    expect(await registry().tenants().get(id)).toBeNull();
    for (const user of users) expect(await rowsIn(userStub(id, user.user_id))).toBe(0);
  });

  it("the control plane cannot be deleted, and a second deletion of a gone tenant is 404", async () => {
    expect((await mgmt("DELETE", `/tenants/${CP.tenantId}`)).status).toBe(400);
    const id = await createTenant();
    expect((await mgmt("DELETE", `/tenants/${id}`)).status).toBe(204);
    expect((await mgmt("DELETE", `/tenants/${id}`)).status).toBe(404);
  });
});
