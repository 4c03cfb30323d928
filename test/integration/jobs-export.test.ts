import { env, runDurableObjectAlarm, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { BASE, controlPlaneToken, createTenant, mgmt } from "../helpers/api";
import { expectRefusals, reachKit } from "../helpers/route-reach";
import { api, createConnection, DB } from "../helpers/users";

/** Issue 14 point 5: users exports with a signed, expiring, tenant-scoped download link; who reaches the jobs routes. */

async function finished(tenant: string, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 30; i++) {
    const job = (await (await api(tenant, "GET", `/jobs/${id}`)).json()) as Record<string, unknown>;
    if (job.status === "completed" || job.status === "failed") return job;
    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
  }
  throw new Error("export did not finish");
}

/** Downloads and gunzips an export. */
async function download(location: string): Promise<{ status: number; lines: string[]; type: string | null }> {
  const res = await SELF.fetch(location);
  if (res.status !== 200) return { status: res.status, lines: [], type: res.headers.get("content-type") };
  const text = await new Response((res.body as ReadableStream).pipeThrough(new DecompressionStream("gzip"))).text();
  return { status: 200, lines: text.split("\n").filter(Boolean), type: res.headers.get("content-type") };
}

describe("POST /jobs/users-exports", () => {
  let tenant: string;
  let dbId: string;

  beforeAll(async () => {
    tenant = await createTenant();
    await createConnection(tenant, "email", "email");
    const list = (await (await api(tenant, "GET", "/connections")).json()) as Array<{ id: string; name: string }>;
    dbId = (list.find((c) => c.name === DB) as { id: string }).id;
    for (let i = 0; i < 5; i++) {
      await api(tenant, "POST", "/users", { connection: "email", email: `exp-${i}@example.com`, name: `Export ${i}`, user_metadata: { country: i % 2 ? "FR" : "DE" } });
    }
    await api(tenant, "POST", "/users", { connection: DB, email: "db-user@example.com", password: "Sufficient-Pw-1" });
  });

  it("answers 201 pending, completes, and its location serves the users as gzipped JSON lines with the chosen fields", async () => {
    const res = await api(tenant, "POST", "/jobs/users-exports", {
      format: "json",
      fields: [{ name: "email" }, { name: "user_metadata.country", export_as: "country" }, { name: "identities[0].connection", export_as: "provider" }],
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const created = (await res.json()) as { id: string; status: string; type: string; format: string };
    expect(created).toMatchObject({ status: "pending", type: "users_export", format: "json" });
    const job = await finished(tenant, created.id);
    expect(job.status).toBe("completed");
    expect(String(job.location)).toMatch(new RegExp(`^http://localhost:8787/jobs-exports/${tenant}/${created.id}\\.json\\.gz\\?expires=\\d+&signature=`));
    const file = await download(String(job.location));
    expect(file.type).toBe("application/gzip");
    const rows = file.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(6);
    expect(rows).toContainEqual({ email: "exp-1@example.com", country: "FR", provider: "email" });
    expect(rows).toContainEqual({ email: "db-user@example.com", provider: DB });
    // Never a password hash in an export, whatever the fields.
    expect(file.lines.join("\n")).not.toMatch(/\$2[aby]\$/);
  });

  it("connection_id, limit and CSV: one connection's users, at most `limit`, with a header row", async () => {
    const res = await api(tenant, "POST", "/jobs/users-exports", { connection_id: dbId, format: "csv", fields: [{ name: "email" }, { name: "name", export_as: "Full name" }] });
    const job = await finished(tenant, ((await res.json()) as { id: string }).id);
    expect(job).toMatchObject({ connection_id: dbId, format: "csv" });
    const file = await download(String(job.location));
    expect(file.lines).toEqual(["email,Full name", "db-user@example.com,db-user@example.com"]);
    const limited = await api(tenant, "POST", "/jobs/users-exports", { format: "json", limit: 2 });
    const limitedJob = await finished(tenant, ((await limited.json()) as { id: string }).id);
    expect((await download(String(limitedJob.location))).lines).toHaveLength(2);
  });

  it("a tampered, expired or other tenant's link is refused (403), and so is an unknown connection or a bad field (400)", async () => {
    const res = await api(tenant, "POST", "/jobs/users-exports", { format: "json" });
    const job = await finished(tenant, ((await res.json()) as { id: string }).id);
    const location = new URL(String(job.location));
    const tampered = new URL(location);
    tampered.searchParams.set("expires", String(Number(location.searchParams.get("expires")) + 60));
    expect((await download(tampered.toString())).status).toBe(403);
    const other = new URL(location);
    other.pathname = location.pathname.replace(tenant, "control_plane");
    expect((await download(other.toString())).status).toBe(403);
    setClock(() => Date.now() + 2 * 3_600_000);
    try {
      expect((await download(location.toString())).status).toBe(403);
    } finally {
      setClock();
    }
    expect((await download(location.toString())).status).toBe(200);
    const unknown = await api(tenant, "POST", "/jobs/users-exports", { connection_id: "con_nope" });
    expect(unknown.status).toBe(400);
    const badField = await api(tenant, "POST", "/jobs/users-exports", { fields: [{ name: "a b" }] });
    expect(badField.status).toBe(400);
    const unknownKey = await api(tenant, "POST", "/jobs/users-exports", { format: "xml" });
    expect(unknownKey.status).toBe(400);
  });
});

describe("who can reach the jobs routes (no token, end user, other tenant, revoked, missing scope)", () => {
  it("imports need create:users; exports read:users; job reads read:users or create:users", async () => {
    const kit = await reachKit(["create:users", "read:users"]);
    await expectRefusals(kit, "POST", "/jobs/users-imports", "create:users");
    await expectRefusals(kit, "POST", "/jobs/users-exports", "read:users", { format: "json" });
    await expectRefusals(kit, "GET", "/jobs/job_0000000000000000", "read:users");
    await expectRefusals(kit, "GET", "/jobs/job_0000000000000000/errors", "read:users");
    const send = (method: string, path: string, token: string, body?: unknown) =>
      mgmt(method, path, { token, headers: { "tenant-id": kit.tenant }, ...(body !== undefined ? { body } : {}) });
    expect((await send("POST", "/jobs/users-exports", kit.allowed, { format: "json" })).status).toBe(201);
    expect((await send("GET", "/jobs/job_0000000000000000", kit.allowed)).status).toBe(404);
    const form = new FormData();
    form.append("users", new Blob(["[]"]), "users.json");
    form.append("connection_id", "con_nope");
    const imported = await SELF.fetch(`${BASE}/api/v2/jobs/users-imports`, { method: "POST", headers: { authorization: `Bearer ${kit.allowed}` }, body: form });
    expect(imported.status).toBe(400);
    expect(((await imported.json()) as { errorCode: string }).errorCode).toBe("inexistent_connection");
  });

  it("a job of one tenant is not visible from another", async () => {
    const one = await createTenant();
    const other = await createTenant();
    const res = await api(one, "POST", "/jobs/users-exports", { format: "json" });
    const id = ((await res.json()) as { id: string }).id;
    expect((await api(other, "GET", `/jobs/${id}`)).status).toBe(404);
    expect((await mgmt("GET", `/jobs/${id}`, { token: await controlPlaneToken(), headers: { "tenant-id": one } })).status).toBe(200);
  });

  it("the OpenAPI document lists the jobs routes with their scopes", async () => {
    const spec = (await (await SELF.fetch(`${BASE}/api/v2/spec`)).json()) as { paths: Record<string, Record<string, { "x-scope": string; "x-also-scopes"?: string[] }>> };
    expect(spec.paths["/jobs/users-imports"]?.post?.["x-scope"]).toBe("create:users");
    expect(spec.paths["/jobs/users-exports"]?.post?.["x-scope"]).toBe("read:users");
    expect(spec.paths["/jobs/verification-email"]?.post?.["x-scope"]).toBe("update:users");
    expect(spec.paths["/jobs/{id}"]?.get).toMatchObject({ "x-scope": "read:users", "x-also-scopes": ["create:users"] });
    expect(spec.paths["/jobs/{id}/errors"]?.get).toMatchObject({ "x-scope": "read:users", "x-also-scopes": ["create:users"] });
  });
});
