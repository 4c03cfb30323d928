import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setNamespaceForTests } from "../../src/worker/deploy/namespace";
import { deployToken, runStep, STEPS } from "../../src/worker/deploy/provisioner";
import { setReleaseStoreForTests } from "../../src/worker/deploy/releases";
import { tenantMigrations } from "../../src/objects/tenant/core/migrations";
import type { Tenant, TenantOperation } from "../../src/shared/types";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, seedUser, tokenForm } from "../helpers/flows";
import { CALLBACK, codeOf, hostOf, loginThroughPages, PASSWORD, startLogin } from "../helpers/org-login";
import { FakeCloudflare } from "../helpers/fake-cloudflare";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/**
 * Per-tenant deployments (issue 16): wfp tenants are provisioned by the TenantDeploymentWorkflow through the
 * real CloudflareNamespace client, whose fetch is an in-process fake of the Cloudflare API that records
 * every call; the journal, the tenant row and the fake's state are what the tests read.
 */

let cf: FakeCloudflare;

beforeEach(() => {
  cf = new FakeCloudflare();
  cf.release("r1");
  cf.release("r2", "0012_mfa");
  setNamespaceForTests(() => cf.namespace());
  setReleaseStoreForTests(cf.store());
});

afterEach(() => {
  setNamespaceForTests(null);
  setReleaseStoreForTests(null);
});

async function getTenant(id: string): Promise<Tenant> {
  return (await (await mgmt("GET", `/tenants/${id}`)).json()) as Tenant;
}

/** Polls GET /tenants/{id} until provisioning leaves `pending` (SPEC §3.1: clients poll). */
async function settled(id: string, timeoutMs = 20_000): Promise<Tenant> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tenant = await getTenant(id);
    if (tenant.provisioning_state !== "pending") return tenant;
    if (Date.now() > deadline) throw new Error(`tenant ${id} still pending`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function operationDone(id: string, timeoutMs = 20_000): Promise<TenantOperation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const op = (await (await mgmt("GET", `/operations/${id}`)).json()) as TenantOperation;
    if (op.status === "succeeded" || op.status === "failed") return op;
    if (Date.now() > deadline) throw new Error(`operation ${id} still ${op.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function createWfp(body: Record<string, unknown> = {}): Promise<{ id: string; created: Tenant }> {
  const id = uniqueId("w");
  const res = await mgmt("POST", "/tenants", { body: { id, deployment_type: "wfp", ...body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return { id, created: (await res.json()) as Tenant };
}

async function operations(id: string, query = ""): Promise<{ operations: TenantOperation[]; total: number; page: number; per_page: number }> {
  const res = await mgmt("GET", `/tenants/${id}/operations${query}`);
  expect(res.status).toBe(200);
  return res.json();
}

describe("provisioning a wfp tenant (SPEC §3.1)", () => {
  it("answers pending at once, then the workflow runs every step and the tenant becomes ready on its pinned release", async () => {
    const { id, created } = await createWfp();
    expect(created).toMatchObject({ id, deployment_type: "wfp", provisioning_state: "pending", worker_version: "r2", worker_script_name: `tenant-${id}-auth` });
    const tenant = await settled(id);
    expect(tenant.provisioning_state).toBe("ready");
    expect(tenant.provisioning_error).toBeNull();
    expect(Date.parse(tenant.provisioning_state_changed_at)).toBeGreaterThanOrEqual(Date.parse(created.provisioning_state_changed_at));
    expect(tenant.d1_database_id).toBe(cf.databases.get(`gatehouse-${id}`)?.uuid);

    const { operations: ops } = await operations(id);
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({ kind: "provision", status: "succeeded", to_version: "r2", error: null });
    const detail = (await (await mgmt("GET", `/operations/${ops[0]?.id}`)).json()) as TenantOperation;
    const timeline = (detail.events ?? []).map((e) => `${e.step}:${e.status}`);
    expect(timeline).toEqual(STEPS.flatMap((s) => [`${s}:started`, `${s}:succeeded`]));
    for (const e of detail.events ?? []) if (e.status === "succeeded") expect(e.duration_ms).toBeGreaterThanOrEqual(0);

    // The copy: the release's code, tagged with its version, its own vars, and secrets of its own.
    const script = cf.scripts.get(`tenant-${id}-auth`);
    expect(script?.metadata.tags).toEqual(["worker_version:r2", "bundle_configuration:default"]);
    expect(script?.modules).toEqual(["index.js", "0001_core.sql"]);
    const vars = Object.fromEntries((script?.metadata.bindings ?? []).filter((b) => b.type === "plain_text").map((b) => [b.name, b.text]));
    expect(vars).toMatchObject({ ISSUER: `http://${id}.localhost:8787/`, CONTROL_PLANE_TENANT_ID: id, WORKER_VERSION: "r2" });
    expect([...(script?.secrets.keys() ?? [])].sort()).toEqual(["CONTROL_PLANE_CLIENT_SECRET", "DEPLOY_TOKEN", "ENCRYPTION_KEY"]);
    const values = [...(script?.secrets.values() ?? [])];
    expect(values).not.toContain(env.ENCRYPTION_KEY);
    expect(values).not.toContain(env.CONTROL_PLANE_CLIENT_SECRET);
    expect(script?.secrets.get("ENCRYPTION_KEY")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(script?.seeded).toBe(1);
  });

  it("two tenants get different ENCRYPTION_KEYs", async () => {
    const a = await createWfp();
    const b = await createWfp();
    await settled(a.id);
    await settled(b.id);
    expect(cf.scripts.get(`tenant-${a.id}-auth`)?.secrets.get("ENCRYPTION_KEY")).not.toBe(cf.scripts.get(`tenant-${b.id}-auth`)?.secrets.get("ENCRYPTION_KEY"));
  });

  it("a step that fails once is retried with its attempts journaled, and provisioning still completes", async () => {
    cf.failNext(/^PUT .*\/scripts\/[^/]+$/, 1);
    const { id } = await createWfp({ worker_version: "r1" });
    expect((await settled(id)).provisioning_state).toBe("ready");
    const [op] = (await operations(id)).operations;
    const upload = ((await (await mgmt("GET", `/operations/${op?.id}`)).json()) as TenantOperation).events?.filter((e) => e.step === "upload-script");
    expect(upload?.map((e) => [e.attempt, e.status])).toEqual([
      [1, "started"],
      [1, "failed"],
      [2, "started"],
      [2, "succeeded"],
    ]);
    expect(upload?.[1]?.message).toContain("injected failure");
  });

  it("a step that keeps failing leaves the tenant failed with the error; a redeploy retries and makes it ready", async () => {
    cf.failNext(/^POST .*\/d1\/database$/, 10);
    const { id } = await createWfp();
    const failed = await settled(id);
    expect(failed.provisioning_state).toBe("failed");
    expect(failed.provisioning_error).toContain("injected failure");
    const [op] = (await operations(id)).operations;
    expect(op).toMatchObject({ kind: "provision", status: "failed" });
    expect(op?.error).toContain("injected failure");
    expect(cf.scripts.has(`tenant-${id}-auth`)).toBe(false);

    cf.failNext(/^$/, 0);
    (cf as unknown as { failures: unknown[] }).failures = [];
    const redeploy = await mgmt("POST", `/tenants/${id}/redeploy`);
    expect(redeploy.status).toBe(202);
    const op2 = (await redeploy.json()) as TenantOperation;
    expect(op2).toMatchObject({ kind: "redeploy", tenant_id: id });
    expect((await getTenant(id)).provisioning_state).toBe("pending");
    expect((await operationDone(op2.id)).status).toBe("succeeded");
    const ready = await getTenant(id);
    expect(ready.provisioning_state).toBe("ready");
    expect(ready.provisioning_error).toBeNull();
    expect((await operations(id)).total).toBe(2);
  });

  it("an unknown release is a 400 and creates nothing", async () => {
    const id = uniqueId("w");
    const res = await mgmt("POST", "/tenants", { body: { id, deployment_type: "wfp", worker_version: "nope" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ errorCode: "release_not_found" });
    expect((await mgmt("GET", `/tenants/${id}`)).status).toBe(404);
  });
});

describe("upgrades (issue 16 point 6)", () => {
  const steps = async (opId: string) =>
    ((await (await mgmt("GET", `/operations/${opId}`)).json()) as TenantOperation).events?.map((e) => `${e.step}:${e.status}`) ?? [];
  const upgrade = async (id: string, version: string) => {
    const res = await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", worker_version: version } });
    expect(res.status, await res.clone().text()).toBe(201);
    return operationDone(((await res.json()) as TenantOperation).id);
  };
  const indexOf = (pattern: RegExp) => cf.calls.findLastIndex((c) => pattern.test(`${c.method} ${c.path}`));

  it("stages the new release on the other slot over a snapshot, verifies it there, and only then switches the pin and the route", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    expect((await settled(id)).worker_version).toBe("r1");
    const live = `tenant-${id}-auth`;
    const key = cf.scripts.get(live)?.secrets.get("ENCRYPTION_KEY");
    const liveUploads = cf.callsMatching(new RegExp(`^PUT .*/scripts/${live}$`)).length;

    const op = await upgrade(id, "r2");
    expect(op).toMatchObject({ status: "succeeded", from_version: "r1", to_version: "r2" });
    expect((await steps(op.id)).filter((s) => s.endsWith(":succeeded"))).toEqual([
      "stage-script:succeeded",
      "stage-secrets:succeeded",
      "apply-migrations:succeeded",
      "verify:succeeded",
      "switch:succeeded",
    ]);
    // The route (the row the dispatcher reads) now names the staged slot, on the new pin.
    expect(await getTenant(id)).toMatchObject({ worker_version: "r2", worker_script_name: `${live}--b`, provisioning_state: "ready" });
    // The staged slot started on a snapshot of the live storage and got the copy's own secrets.
    expect(cf.callsMatching(new RegExp(`^PUT .*/scripts/${live}--b(\\?|$)`))[0]?.path).toContain(`storage_from=${live}`);
    expect(cf.scripts.get(`${live}--b`)?.secrets.get("ENCRYPTION_KEY")).toBe(key);
    // The switch came after the staged copy verified, and the live script's code was never replaced in place.
    expect(indexOf(/^POST .*\/promote$/)).toBeGreaterThan(indexOf(new RegExp(`^GET /client/v4/__scripts/${live}--b/__gatehouse/deploy/health$`)));
    expect(cf.callsMatching(new RegExp(`^PUT .*/scripts/${live}$`))).toHaveLength(liveUploads);
    expect(cf.aliases.get(live)).toBe(`${live}--b`);
    expect(cf.scripts.get(`${live}--b`)?.migratedTo).toBe("0012_mfa");

    // The next upgrade alternates back to the first slot.
    cf.release("r3");
    expect((await upgrade(id, "r3")).status).toBe("succeeded");
    expect(await getTenant(id)).toMatchObject({ worker_version: "r3", worker_script_name: live });
    expect(cf.scripts.get(live)?.secrets.get("ENCRYPTION_KEY")).toBe(key);
  });

  it("a failed verify keeps the old pin, route and code, and tears the staged slot down", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    const live = `tenant-${id}-auth`;
    const uploads = cf.calls.filter((c) => c.method === "PUT" && c.path.endsWith(`/scripts/${live}`)).length;
    cf.release("r3");
    cf.brokenVersions.add("r3");
    const done = await upgrade(id, "r3");
    expect(done.status).toBe("failed");
    expect(done.error).toContain("r3");
    const timeline = await steps(done.id);
    expect(timeline).toContain("verify:failed");
    expect(timeline).not.toContain("switch:started");
    expect(timeline.slice(-2)).toEqual(["teardown:started", "teardown:succeeded"]);
    expect(await getTenant(id)).toMatchObject({ worker_version: "r1", worker_script_name: live, provisioning_state: "ready" });
    expect(cf.scripts.has(`${live}--b`)).toBe(false);
    expect(cf.scripts.get(live)?.metadata.tags).toContain("worker_version:r1");
    expect(cf.calls.filter((c) => c.method === "PUT" && c.path.endsWith(`/scripts/${live}`))).toHaveLength(uploads);
    expect(cf.callsMatching(/\/promote$/)).toEqual([]);

    // A staged copy that is unhealthy (not a wrong version) fails the same way, and a later good upgrade still works.
    cf.unhealthy.add(`${live}--b`);
    expect((await upgrade(id, "r2")).status).toBe("failed");
    expect((await getTenant(id)).worker_version).toBe("r1");
    cf.unhealthy.clear();
    expect((await upgrade(id, "r2")).status).toBe("succeeded");
    expect(await getTenant(id)).toMatchObject({ worker_version: "r2", worker_script_name: `${live}--b` });
  });

  it("on Cloudflare the verified release is uploaded under the live name (its objects keep their storage) and the staged script is removed", async () => {
    setNamespaceForTests(() => cf.namespace({ supervisor: false }));
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    const live = `tenant-${id}-auth`;
    const op = await upgrade(id, "r2");
    expect(op.status).toBe("succeeded");
    expect(await getTenant(id)).toMatchObject({ worker_version: "r2", worker_script_name: live });
    expect(cf.scripts.has(`${live}--b`)).toBe(false);
    expect(cf.scripts.get(live)?.metadata.tags).toContain("worker_version:r2");
    expect(cf.callsMatching(/storage_from/)).toEqual([]);
    const liveUpload = indexOf(new RegExp(`^PUT .*/scripts/${live}$`));
    expect(liveUpload).toBeGreaterThan(indexOf(new RegExp(`^GET /client/v4/__scripts/${live}--b/__gatehouse/deploy/health$`)));
  });

  it("a copy provisioned before its secrets were kept is upgraded in place; a failed upgrade rolls it back and keeps the old pin", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    await env.PLATFORM.getByName("platform").deploySecrets().forget(id);
    expect((await upgrade(id, "r2")).status).toBe("succeeded");
    expect(await getTenant(id)).toMatchObject({ worker_version: "r2", worker_script_name: `tenant-${id}-auth` });
    const key = cf.scripts.get(`tenant-${id}-auth`)?.secrets.get("ENCRYPTION_KEY");
    cf.release("r3");
    cf.brokenVersions.add("r3");
    const done = await upgrade(id, "r3");
    expect(done.status).toBe("failed");
    expect(await getTenant(id)).toMatchObject({ worker_version: "r2", provisioning_state: "ready" });
    expect(cf.scripts.get(`tenant-${id}-auth`)?.metadata.tags).toContain("worker_version:r2");
    expect(cf.scripts.get(`tenant-${id}-auth`)?.secrets.get("ENCRYPTION_KEY")).toBe(key);
    const timeline = await steps(done.id);
    expect(timeline).toContain("verify:failed");
    expect(timeline.slice(-2)).toEqual(["rollback:started", "rollback:succeeded"]);
  });

  it("deleting an upgraded wfp tenant removes its live script, any staged slot, and the secrets the control plane kept", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    expect((await upgrade(id, "r2")).status).toBe("succeeded");
    // A staged slot left behind (say, by an interrupted upgrade) goes too.
    await cf.namespace().uploadScript({ scriptName: `tenant-${id}-auth`, release: { worker_version: "r1", bundle_configuration: "default", main_module: "index.js" } as never, files: new Map(), vars: {}, compatibilityDate: "2026-08-01", compatibilityFlags: [], durableObjectClasses: [] });
    expect((await mgmt("DELETE", `/tenants/${id}`)).status).toBe(204);
    expect(cf.scripts.has(`tenant-${id}-auth`)).toBe(false);
    expect(cf.scripts.has(`tenant-${id}-auth--b`)).toBe(false);
    expect(await env.PLATFORM.getByName("platform").deploySecrets().sealed(id)).toEqual({});
  });

  it("keeps each copy's generated secrets sealed in the registry, never in plaintext", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    const sealed = await env.PLATFORM.getByName("platform").deploySecrets().sealed(id);
    const script = cf.scripts.get(`tenant-${id}-auth`);
    expect(Object.keys(sealed).sort()).toEqual(["CONTROL_PLANE_CLIENT_SECRET", "ENCRYPTION_KEY"]);
    for (const [name, ciphertext] of Object.entries(sealed)) {
      expect(ciphertext).toMatch(/^enc:v1:/);
      expect(ciphertext).not.toContain(script?.secrets.get(name) as string);
    }
  });

  it("without worker_version an upgrade targets the configuration's current release", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    const op = (await (await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade" } })).json()) as TenantOperation;
    expect(op.to_version).toBe("r2");
    await operationDone(op.id);
    expect((await getTenant(id)).worker_version).toBe("r2");
  });

  it("refuses a second operation while one is running, an unknown release, a shared tenant, and PATCHing the pin", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    const busy = await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", worker_version: "r2" } });
    expect(busy.status).toBe(409);
    expect(await busy.json()).toMatchObject({ errorCode: "operation_in_progress" });
    await settled(id);
    expect((await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", worker_version: "zz" } })).status).toBe(400);
    expect((await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "delete" } })).status).toBe(400);
    expect((await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", extra: 1 } })).status).toBe(400);
    expect((await mgmt("PATCH", `/tenants/${id}`, { body: { worker_version: "r2" } })).status).toBe(400);
    const shared = uniqueId();
    expect((await mgmt("POST", "/tenants", { body: { id: shared } })).status).toBe(201);
    expect((await mgmt("POST", `/tenants/${shared}/operations`, { body: { kind: "upgrade", worker_version: "r2" } })).status).toBe(400);
    expect((await mgmt("POST", `/tenants/${shared}/redeploy`)).status).toBe(400);
    expect((await mgmt("POST", `/tenants/nope-nope/redeploy`)).status).toBe(404);
  });
});

describe("the operations journal (issue 16 point 5)", () => {
  it("lists newest first with kind and status filters and pages; one operation shows its timeline", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    const up = (await (await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", worker_version: "r2" } })).json()) as TenantOperation;
    await operationDone(up.id);
    const all = await operations(id);
    expect(all.total).toBe(2);
    expect(all.operations.map((o) => o.kind)).toEqual(["upgrade", "provision"]);
    expect((await operations(id, "?kind=upgrade")).operations.map((o) => o.id)).toEqual([up.id]);
    expect((await operations(id, "?status=failed")).total).toBe(0);
    const page1 = await operations(id, "?per_page=1&page=1");
    expect(page1).toMatchObject({ total: 2, page: 1, per_page: 1 });
    expect(page1.operations.map((o) => o.kind)).toEqual(["provision"]);
    expect((await mgmt("GET", `/tenants/${id}/operations?kind=bogus`)).status).toBe(400);
    expect((await mgmt("GET", `/tenants/${id}/operations?per_page=1000`)).status).toBe(400);
    const missing = await mgmt("GET", "/operations/op_doesnotexist");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ errorCode: "inexistent_operation" });
  });
});

describe("each provisioning step is idempotent", () => {
  it("running every step twice makes no second database, upload or key", async () => {
    const id = uniqueId("w");
    const tenant = { id, name: id, deployment_type: "wfp", provisioning_state: "pending", storage_kind: "own_d1", d1_database_id: null, worker_script_name: `tenant-${id}-auth`, worker_version: "r1", bundle_configuration: "default" } as unknown as Tenant;
    const deps = { env, namespace: cf.namespace(), releases: cf.store() };
    const target = { tenant, worker_version: "r1", bundle_configuration: "default", script_name: tenant.worker_script_name };
    const first: Record<string, unknown> = {};
    for (const step of STEPS) first[step] = await runStep(step, deps, target);
    const key = cf.scripts.get(target.script_name)?.secrets.get("ENCRYPTION_KEY");
    const before = cf.calls.length;
    for (const step of STEPS) await runStep(step, deps, target);
    const second = cf.calls.slice(before).map((c) => `${c.method} ${c.path.replace(/\?.*$/, "")}`);
    expect(second.filter((c) => c.startsWith("POST") && c.endsWith("/d1/database"))).toEqual([]);
    expect(second.filter((c) => /^PUT .*\/scripts\/[^/]+$/.test(c))).toEqual([]);
    expect(cf.callsMatching(/^PUT .*\/secrets$/).filter((c) => (c.body as { name: string }).name === "ENCRYPTION_KEY")).toHaveLength(1);
    expect(cf.scripts.get(target.script_name)?.secrets.get("ENCRYPTION_KEY")).toBe(key);
    expect(cf.databases.size).toBe(1);
    expect(first["upload-secrets"]).toMatchObject({ generated: ["ENCRYPTION_KEY", "CONTROL_PLANE_CLIENT_SECRET"] });
    expect(await runStep("upload-secrets", deps, target)).toMatchObject({ generated: [], kept: ["ENCRYPTION_KEY", "CONTROL_PLANE_CLIENT_SECRET"] });
    expect(cf.scripts.get(target.script_name)?.secrets.get("DEPLOY_TOKEN")).toBe(await deployToken(env, id));
  });

  it("the Cloudflare client sends the documented requests: D1 create, multipart upload with bindings and tags, secrets", async () => {
    const ns = cf.namespace();
    await ns.ensureDatabase("gatehouse-x");
    const [list, create] = cf.calls;
    expect(list).toMatchObject({ method: "GET", path: "/client/v4/accounts/acct/d1/database?name=gatehouse-x" });
    expect(create).toMatchObject({ method: "POST", path: "/client/v4/accounts/acct/d1/database", body: { name: "gatehouse-x" } });
    await ns.putSecret("s1", "K", "v").catch((e: Error) => expect(e.message).toContain("404"));
    expect(await ns.getScript("absent")).toBeNull();
  });
});

describe("who can reach the operations routes", () => {
  it("list, get, create and redeploy refuse every caller but the right token; tenant tokens cannot start operations", async () => {
    const kit = await reachKit(["read:tenant_operations", "create:tenant_operations"]);
    await expectRefusals(kit, "GET", `/tenants/${kit.tenant}/operations`, "read:tenant_operations");
    await expectRefusals(kit, "GET", "/operations/op_x", "read:tenant_operations");
    await expectRefusals(kit, "POST", `/tenants/${kit.tenant}/operations`, "create:tenant_operations", { kind: "upgrade" });
    await expectRefusals(kit, "POST", `/tenants/${kit.tenant}/redeploy`, "create:tenant_operations");
    // The tenant's own token reads its own (empty) journal but cannot start operations or read another's.
    const own = await mgmt("GET", `/tenants/${kit.tenant}/operations`, { token: kit.allowed, headers: { "tenant-id": kit.tenant } });
    expect(own.status).toBe(200);
    expect((await mgmt("POST", `/tenants/${kit.tenant}/operations`, { token: kit.allowed, headers: { "tenant-id": kit.tenant }, body: { kind: "upgrade" } })).status).toBe(403);
    expect((await mgmt("POST", `/tenants/${kit.tenant}/redeploy`, { token: kit.allowed, headers: { "tenant-id": kit.tenant } })).status).toBe(403);
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    const [op] = (await operations(id)).operations;
    expect((await mgmt("GET", `/tenants/${id}/operations`, { token: kit.allowed, headers: { "tenant-id": kit.tenant } })).status).toBe(403);
    expect((await mgmt("GET", `/operations/${op?.id}`, { token: kit.allowed, headers: { "tenant-id": kit.tenant } })).status).toBe(404);
  });
});

describe("the control plane manages a copy with its kept client secret (POST /tenants/{id}/management-token)", () => {
  /** A control-plane M2M token holding only `scopes` (a real client of the control plane with a narrow grant). */
  async function controlPlaneTokenWith(scopes: string[]): Promise<string> {
    const client = await mgmt("POST", "/clients", { body: { name: `ops-${uniqueId()}`, app_type: "non_interactive", grant_types: ["client_credentials"] } });
    expect(client.status).toBe(201);
    const { client_id, client_secret } = (await client.json()) as { client_id: string; client_secret: string };
    expect((await mgmt("POST", "/client-grants", { body: { client_id, audience: "urn:gatehouse:management", scope: scopes } })).status).toBe(201);
    const res = await call("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id, client_secret, audience: "urn:gatehouse:management" }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  it("answers a token the copy issued to its control-plane client, never the secret, and audits the issuance", async () => {
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    const res = await mgmt("POST", `/tenants/${id}/management-token`);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get("cache-control")).toContain("no-store");
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      access_token: `copy-token-of-tenant-${id}-auth`,
      token_type: "Bearer",
      expires_in: 86400,
      scope: "read:users create:users",
      audience: "urn:gatehouse:management",
      issuer: `http://${id}.localhost:8787/`,
      api_base_url: `http://${id}.localhost:8787/api/v2`,
    });
    const secret = cf.scripts.get(`tenant-${id}-auth`)?.secrets.get("CONTROL_PLANE_CLIENT_SECRET") as string;
    expect(secret).toBeTruthy();
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(cf.tokensIssued).toEqual([{ script: `tenant-${id}-auth`, audience: "urn:gatehouse:management" }]);

    // After a two-slot upgrade the token comes from the slot that serves (the copy's secret moved with it).
    expect((await operationDone(((await (await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", worker_version: "r2" } })).json()) as TenantOperation).id)).status).toBe("succeeded");
    const again = await mgmt("POST", `/tenants/${id}/management-token`);
    expect(((await again.json()) as { access_token: string }).access_token).toBe(`copy-token-of-tenant-${id}-auth--b`);

    // Each issuance is an audit event in the registry's outbox (relayed to the control plane's logs), without the secret.
    const events = await runInDurableObject(env.PLATFORM.getByName("platform"), (_o, state) =>
      state.storage.sql
        .exec("SELECT payload FROM outbox WHERE event_type = 'tenant_management_token.created' AND payload LIKE ?", `%${id}%`)
        .toArray()
        .map((r) => String(r.payload)),
    );
    expect(events).toHaveLength(2);
    expect(JSON.parse(events[0] as string)).toMatchObject({ log_tenant_id: "control_plane", target: { type: "tenant_management_token", id } });
    for (const payload of events) expect(payload).not.toContain(secret);
  });

  it("refuses shared tenants, copies that are not ready, copies whose secret it does not hold, and unknown tenants", async () => {
    const shared = await createTenant();
    const notWfp = await mgmt("POST", `/tenants/${shared}/management-token`);
    expect(notWfp.status).toBe(400);
    expect((await mgmt("POST", "/tenants/nope-nope/management-token")).status).toBe(404);
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    await env.PLATFORM.getByName("platform").deploySecrets().forget(id);
    const legacy = await mgmt("POST", `/tenants/${id}/management-token`);
    expect(legacy.status).toBe(409);
    expect(await legacy.json()).toMatchObject({ errorCode: "copy_credentials_unavailable" });
    const pending = uniqueId("w");
    cf.failNext(/d1\/database/, 100);
    expect((await mgmt("POST", "/tenants", { body: { id: pending, deployment_type: "wfp" } })).status).toBe(201);
    const notReady = await mgmt("POST", `/tenants/${pending}/management-token`);
    expect(notReady.status).toBe(409);
    expect(await notReady.json()).toMatchObject({ errorCode: "copy_not_ready" });
    expect(cf.tokensIssued).toEqual([]);
  });

  it("who can reach it: only a control-plane token with read:tenant_credentials", async () => {
    const kit = await reachKit(["read:tenant_credentials"]);
    await expectRefusals(kit, "POST", `/tenants/${kit.tenant}/management-token`, "read:tenant_credentials");
    // A tenant's own token with the scope cannot mint one for its own (or any) copy.
    const { id } = await createWfp({ worker_version: "r1" });
    await settled(id);
    expect((await mgmt("POST", `/tenants/${id}/management-token`, { token: kit.allowed, headers: { "tenant-id": kit.tenant } })).status).toBe(403);
    expect((await mgmt("POST", `/tenants/${kit.tenant}/management-token`, { token: kit.allowed, headers: { "tenant-id": kit.tenant } })).status).toBe(403);
    // A control-plane token without the scope (but with the tenant and operation scopes) is refused.
    const narrow = await controlPlaneTokenWith(["read:tenants", "read:tenant_operations", "create:tenant_operations"]);
    const refused = await mgmt("POST", `/tenants/${id}/management-token`, { token: narrow });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain("read:tenant_credentials");
    const allowed = await controlPlaneTokenWith(["read:tenant_credentials"]);
    expect((await mgmt("POST", `/tenants/${id}/management-token`, { token: allowed })).status).toBe(200);
    expect(cf.tokensIssued).toHaveLength(1);
  });
});

describe("bulk upgrades (issue 16 point 6)", () => {
  async function bulkDone(id: string, timeoutMs = 30_000): Promise<{ status: string; result: { upgraded: string[]; failed: { tenant_id: string } | null; skipped: string[] } }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await mgmt("GET", `/operations/upgrades/${id}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { status: string; result: never };
      if (body.status !== "running") return body;
      if (Date.now() > deadline) throw new Error("bulk upgrade still running");
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("upgrades the named tenants with a concurrency limit; every tenant gets its own journaled operation", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createWfp({ worker_version: "r1" })).id);
    for (const id of ids) await settled(id);
    const res = await mgmt("POST", "/operations/upgrades", { body: { worker_version: "r2", tenant_ids: ids, concurrency: 2 } });
    expect(res.status).toBe(202);
    const bulk = (await res.json()) as { id: string; tenant_ids: string[] };
    expect(bulk.tenant_ids).toEqual(ids);
    const done = await bulkDone(bulk.id);
    expect(done.status).toBe("succeeded");
    expect(done.result.upgraded).toEqual(ids);
    const ops: TenantOperation[] = [];
    for (const id of ids) {
      expect((await getTenant(id)).worker_version).toBe("r2");
      const [op] = (await operations(id, "?kind=upgrade")).operations;
      expect(op).toMatchObject({ status: "succeeded", from_version: "r1", to_version: "r2" });
      ops.push(op as TenantOperation);
    }
    // At most two at a time: the third started only after the first batch (both) finished.
    const third = Date.parse(ops[2]?.created_at as string);
    expect(third).toBeGreaterThanOrEqual(Date.parse(ops[0]?.finished_at as string));
    expect(third).toBeGreaterThanOrEqual(Date.parse(ops[1]?.finished_at as string));
  });

  it("stops at the first failure: the failing tenant keeps its pin and the tenants after it are not touched", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createWfp({ worker_version: "r1" })).id);
    for (const id of ids) await settled(id);
    cf.release("r3");
    cf.brokenVersions.add("r3");
    const bulk = (await (await mgmt("POST", "/operations/upgrades", { body: { worker_version: "r3", tenant_ids: ids, concurrency: 1 } })).json()) as { id: string };
    const done = await bulkDone(bulk.id);
    expect(done.status).toBe("failed");
    expect(done.result.failed?.tenant_id).toBe(ids[0]);
    expect(done.result.skipped).toEqual(ids.slice(1));
    expect((await getTenant(ids[0] as string)).worker_version).toBe("r1");
    for (const id of ids.slice(1)) {
      expect((await getTenant(id)).worker_version).toBe("r1");
      expect((await operations(id, "?kind=upgrade")).total).toBe(0);
    }
  });

  it("refuses shared or unknown tenants, tenant tokens and bad bodies", async () => {
    const shared = uniqueId();
    expect((await mgmt("POST", "/tenants", { body: { id: shared } })).status).toBe(201);
    expect((await mgmt("POST", "/operations/upgrades", { body: { tenant_ids: [shared] } })).status).toBe(400);
    expect((await mgmt("POST", "/operations/upgrades", { body: { concurrency: 0 } })).status).toBe(400);
    expect((await mgmt("POST", "/operations/upgrades", { body: { worker_version: "nope" } })).status).toBe(400);
    expect((await mgmt("GET", "/operations/upgrades/not-an-instance")).status).toBe(404);
    const kit = await reachKit(["create:tenant_operations", "read:tenant_operations"]);
    await expectRefusals(kit, "POST", "/operations/upgrades", "create:tenant_operations", {});
    expect((await mgmt("POST", "/operations/upgrades", { token: kit.allowed, headers: { "tenant-id": kit.tenant }, body: {} })).status).toBe(403);
  });
});

/**
 * The newest tenant migration and how to take an object back to the schema before it: what a pinned tenant
 * looks like after a deploy of this code. A new migration adds its undo here (the test fails loudly without).
 */
const UNDO_LAST: Record<string, string[]> = {
  "0014_schema_upgrades": ["DROP TABLE schema_upgrades"],
  "0015_job_mail_and_retention": ["DROP INDEX jobs_finished", "ALTER TABLE dev_messages DROP COLUMN sender", "ALTER TABLE dev_messages DROP COLUMN html"],
  "0016_session_device": ["ALTER TABLE sessions DROP COLUMN device"],
  "0017_session_metadata": ["ALTER TABLE sessions DROP COLUMN session_metadata"],
  "0018_password_history": ["DROP TRIGGER password_history_user_deleted", "DROP TABLE password_history"],
  "0019_device_codes_and_pushed_requests": ["DROP TABLE device_codes", "DROP TABLE device_code_attempts", "DROP TABLE pushed_authorization_requests"],
  "0020_user_grants": ["DROP TRIGGER user_grants_client_deleted", "DROP TRIGGER user_grants_user_deleted", "DROP TABLE user_grants"],
  // The enabled_clients fold is data only; the organization client grants are schema.
  "0021_connection_enabled_clients": [
    "DROP TABLE client_credentials",
    "DROP TABLE organization_client_grants",
    "ALTER TABLE client_grants DROP COLUMN organization_usage",
    "ALTER TABLE client_grants DROP COLUMN allow_any_organization",
  ],
  "0022_resource_server_proof_of_possession": ["ALTER TABLE resource_servers DROP COLUMN proof_of_possession"],
  "0023_action_redirects_and_cache": ["DROP TABLE action_cache", "DROP INDEX login_redirects_expiry", "DROP TABLE login_redirects"],
};
const LAST = tenantMigrations[tenantMigrations.length - 1]?.name as string;
const PREVIOUS = tenantMigrations[tenantMigrations.length - 2]?.name as string;

/** Undoes the newest `count` migrations of a tenant's object, newest first. */
function undoNewest(storage: DurableObjectStorage, count: number): void {
  for (const migration of tenantMigrations.slice(-count).reverse()) {
    const undo = UNDO_LAST[migration.name];
    if (!undo) throw new Error(`add the undo of ${migration.name} to UNDO_LAST`);
    for (const statement of undo) storage.sql.exec(statement);
    storage.sql.exec("DELETE FROM _migrations WHERE name = ?", migration.name);
  }
}

/** Undoes the newest migration of a tenant's object. */
const undoLast = (storage: DurableObjectStorage): void => undoNewest(storage, 1);

describe("shared tenants: pinned schema, expand/contract (issue 16 point 6)", () => {
  /** Leaves the tenant's object at the previous schema: what a pinned tenant looks like after a deploy. */
  async function leaveAtPreviousSchema(id: string): Promise<void> {
    await runInDurableObject(env.TENANT.getByName(id), (_o, state) => undoLast(state.storage));
    expect(await env.TENANT.getByName(id).schemaVersion()).toBe(PREVIOUS);
  }

  it("the current code serves a tenant left at the previous schema; an upgrade operation applies the pending migration, journaled", async () => {
    const id = await createTenant();
    await leaveAtPreviousSchema(id);
    expect(await env.TENANT.getByName(id).pendingMigrations()).toEqual([LAST]);

    // The release's code on the old schema: configuration writes, tokens, discovery, user writes all work.
    const host = `${id}.localhost:8787`;
    expect((await call("/.well-known/openid-configuration", { host })).status).toBe(200);
    const client = await seedClient(id, { grant_types: ["client_credentials"] });
    const grant = await mgmt("POST", "/client-grants", { headers: { "tenant-id": id }, body: { client_id: client.client_id, audience: "urn:gatehouse:management", scope: ["read:users"] } });
    expect(grant.status).toBe(201);
    const tokenRes = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: "urn:gatehouse:management" }, {}, host);
    expect(tokenRes.status).toBe(200);
    const user = await mgmt("POST", "/users", { headers: { "tenant-id": id }, body: { connection: "Username-Password-Authentication", email: `x-${id}@example.com`, password: "Sufficient-Pw-1" } });
    expect(user.status).toBe(201);
    expect(await env.TENANT.getByName(id).schemaUpgrades()).toEqual([]);

    const res = await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade" } });
    expect(res.status).toBe(201);
    const op = (await res.json()) as TenantOperation;
    const done = await operationDone(op.id);
    expect(done.status).toBe("succeeded");
    expect(done.events?.map((e) => `${e.step}:${e.status}`)).toEqual(["apply-migrations:started", "apply-migrations:succeeded", "verify:started", "verify:succeeded"]);
    expect(done.events?.[1]?.detail).toMatchObject({ from: PREVIOUS, to: LAST, applied: [LAST] });
    expect(await env.TENANT.getByName(id).pendingMigrations()).toEqual([]);
    const history = await env.TENANT.getByName(id).schemaUpgrades();
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ from_version: PREVIOUS, to_version: LAST, operation_id: op.id });
    // The data written on the old schema is all there; a second upgrade has nothing to apply.
    expect((await mgmt("GET", `/users/${encodeURIComponent(String(((await user.json()) as { user_id: string }).user_id))}`, { headers: { "tenant-id": id } })).status).toBe(200);
    const again = await operationDone(((await (await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade" } })).json()) as TenantOperation).id);
    expect(again.events?.[1]?.detail).toMatchObject({ applied: [] });
    expect(await env.TENANT.getByName(id).schemaUpgrades()).toHaveLength(1);
  });
});

describe("logins on a tenant pinned at an earlier schema (expand/contract: session writes name only the columns it has)", () => {
  // Regression: the session INSERT named `device` (0016), so a tenant pinned before it could not log anyone in.
  // Back to before 0016 (device) and 0017 (session metadata), whatever migrations came after them.
  it.each([1, 2, 3, 4])("a universal-login password login %i migration(s) behind starts a session the management API lists", async (behind) => {
    const id = await createTenant();
    await runInDurableObject(env.TENANT.getByName(id), (_o, state) => undoNewest(state.storage, behind));
    expect(await env.TENANT.getByName(id).schemaVersion()).toBe(tenantMigrations[tenantMigrations.length - 1 - behind]?.name);
    const host = hostOf(id);
    const client = await seedClient(id, { callbacks: [CALLBACK] });
    const email = `pin-${uniqueId()}@example.com`;
    const user = await seedUser(id, email, PASSWORD);

    const done = await loginThroughPages(host, client, email);
    const code = codeOf(done);
    expect(code).toBeTruthy();
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith("gh_session="))?.split(";")[0] as string;
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    const listed = await mgmt("GET", `/users/${encodeURIComponent(user.user_id)}/sessions`, { headers: { "tenant-id": id } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as Array<{ id: string }>).map((s) => s.id)).toEqual([sessionId]);
    // Single sign-on with that session (which records the device where the schema has it) works too.
    const sso = await startLogin(host, client, {}, cookie);
    expect(codeOf(sso)).toBeTruthy();
    const one = await mgmt("GET", `/sessions/${sessionId}`, { headers: { "tenant-id": id } });
    expect(one.status).toBe(200);
    const body = (await one.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id: sessionId, user_id: user.user_id });
    const patched = await mgmt("PATCH", `/sessions/${sessionId}`, { headers: { "tenant-id": id }, body: { session_metadata: { k: "v" } } });
    if (tenantMigrations.slice(-behind).some((m) => m.name === "0017_session_metadata")) {
      // No metadata before 0017: reads leave it out, PATCH says why (4xx, never a 500) and writes nothing.
      expect(body).not.toHaveProperty("session_metadata");
      expect(patched.status).toBe(409);
      expect(await patched.json()).toMatchObject({ statusCode: 409, errorCode: "operation_not_supported" });
    } else {
      expect(patched.status).toBe(200);
      expect(await patched.json()).toMatchObject({ session_metadata: { k: "v" } });
    }
    expect((await mgmt("PATCH", "/sessions/ses_nothing", { headers: { "tenant-id": id }, body: { session_metadata: { k: "v" } } })).status).toBe(404);
    expect((await mgmt("GET", `/sessions/${sessionId}`, { headers: { "tenant-id": id } })).status).toBe(200);
  });
});

describe("TENANT_SCHEMA_MIGRATIONS", () => {
  it("pinned: an object that has a schema keeps it on start; a new object starts at the current schema", async () => {
    const { applyMigrations } = await import("../../src/objects/sql");
    const id = await createTenant();
    await runInDurableObject(env.TENANT.getByName(id), (_o, state) => {
      undoLast(state.storage);
      expect(applyMigrations(state.storage, tenantMigrations, { pinned: true })).toEqual({ applied: [] });
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM _migrations").one().n).toBe(tenantMigrations.length - 1);
      expect(applyMigrations(state.storage, tenantMigrations)).toEqual({ applied: [LAST] });
    });
    // A store with no schema yet (a new object) gets the whole list even when pinned; later lists wait.
    const { defineMigrations } = await import("../../src/objects/sql");
    const list = (n: number) => defineMigrations("t", [1, 2, 3].slice(0, n).map((i) => ({ name: `000${i}_t${i}`, sql: `CREATE TABLE pin_t${i} (id INTEGER)` })));
    await runInDurableObject(env.TENANT.getByName(uniqueId("fresh")), (_o, state) => {
      state.storage.sql.exec("DROP TABLE _migrations");
      expect(applyMigrations(state.storage, list(2), { pinned: true })).toEqual({ applied: ["0001_t1", "0002_t2"] });
      expect(applyMigrations(state.storage, list(3), { pinned: true })).toEqual({ applied: [] });
      expect(applyMigrations(state.storage, list(3))).toEqual({ applied: ["0003_t3"] });
    });
  });
});
