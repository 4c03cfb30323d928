import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";

type TenantBody = Record<string, unknown>;

describe("tenants API (SPEC §2.1, §4.2)", () => {
  it("creates a shared tenant with the documented defaults and seeds it", async () => {
    const id = uniqueId();
    const res = await mgmt("POST", "/tenants", {
      body: { id, name: "Acme", friendly_name: "Acme Inc", sender_email: "no-reply@acme.test", audience: "https://acme.test/api" },
    });
    expect(res.status).toBe(201);
    const tenant = (await res.json()) as TenantBody;
    expect(tenant).toMatchObject({
      id,
      name: "Acme",
      friendly_name: "Acme Inc",
      deployment_type: "shared",
      provisioning_state: "ready",
      worker_script_name: `tenant-${id}-auth`,
      bundle_configuration: "default",
    });
    expect(Date.parse(String(tenant.created_at))).not.toBeNaN();
    // The seed ran: a signing key in the JWKS and the management API resource server.
    const jwks = (await (await call("/.well-known/jwks.json", { host: `${id}.localhost:8787` })).json()) as { keys: unknown[] };
    expect(jwks.keys).toHaveLength(1);
    const api = await runInDurableObject(env.TENANT.getByName(id), (_o, state) =>
      state.storage.sql.exec("SELECT identifier, scopes FROM resource_servers").toArray(),
    );
    expect(api).toHaveLength(1);
    expect(api[0]?.identifier).toBe("urn:gatehouse:management");
    expect(JSON.parse(String(api[0]?.scopes)).map((s: { value: string }) => s.value)).toContain("read:users");
  });

  it("a duplicate id is 409 and nothing changes", async () => {
    const id = await createTenant();
    const again = await mgmt("POST", "/tenants", { body: { id, name: "Other" } });
    expect(again.status).toBe(409);
    expect(((await (await mgmt("GET", `/tenants/${id}`)).json()) as TenantBody).name).toBe(`Tenant ${id}`);
  });

  it("lists, reads, updates and deletes tenants", async () => {
    const id = await createTenant();
    const list = (await (await mgmt("GET", "/tenants?per_page=100")).json()) as TenantBody[];
    expect(list.map((t) => t.id)).toContain(id);
    expect(list.map((t) => t.id)).toContain("control_plane");
    const totals = (await (await mgmt("GET", "/tenants?include_totals=true&per_page=1")).json()) as TenantBody;
    expect(totals).toMatchObject({ start: 0, limit: 1, length: 1 });
    expect(Number(totals.total)).toBeGreaterThanOrEqual(2);

    const patched = await mgmt("PATCH", `/tenants/${id}`, { body: { friendly_name: "Renamed", sender_name: "Acme" } });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id, friendly_name: "Renamed", sender_name: "Acme" });

    expect((await mgmt("DELETE", `/tenants/${id}`)).status).toBe(204);
    expect((await mgmt("GET", `/tenants/${id}`)).status).toBe(404);
    expect((await mgmt("DELETE", `/tenants/${id}`)).status).toBe(404);
    // Its host is gone too.
    const gone = await call("/.well-known/jwks.json", { host: `${id}.localhost:8787` });
    expect(gone.status).toBe(404);
  });

  it("walks every tenant with checkpoint pagination, without repeats", async () => {
    await createTenant();
    await createTenant();
    const seen: string[] = [];
    let from: string | undefined;
    for (let i = 0; i < 50; i++) {
      const res = await mgmt("GET", `/tenants?take=1${from ? `&from=${from}` : ""}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { tenants: TenantBody[]; next?: string };
      seen.push(...page.tenants.map((t) => String(t.id)));
      if (!page.next) break;
      from = page.next;
    }
    const all = (await (await mgmt("GET", "/tenants?per_page=100")).json()) as TenantBody[];
    expect(seen).toEqual(all.map((t) => t.id));
    expect((await mgmt("GET", "/tenants?from=garbage")).status).toBe(400);
  });

  it("refuses bad input with a clear 400 and writes nothing", async () => {
    const id = uniqueId();
    const cases: [unknown, RegExp][] = [
      [{ id, name: 42 }, /name/],
      [{ id, color: "red" }, /Additional properties not allowed: color/],
      [{ id: "Bad Id!" }, /id must be/],
      [{ id, sender_email: "not-an-email" }, /sender_email/],
      [{ name: "no id" }, /id/],
      [{ id: "settings" }, /id is reserved/],
    ];
    for (const [body, message] of cases) {
      const res = await mgmt("POST", "/tenants", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const error = (await res.json()) as { message: string; statusCode: number };
      expect(error.message).toMatch(message);
    }
    expect((await mgmt("POST", "/tenants", { body: "{bad json" })).status).toBe(400);
    expect((await mgmt("POST", "/tenants", { body: `{"id":"${id}","name":"${"x".repeat(200_000)}"}` })).status).toBe(413);
    expect((await mgmt("POST", "/tenants", { body: "[]" })).status).toBe(400);
    expect((await mgmt("GET", `/tenants/${id}`)).status).toBe(404);
  });

  it("wfp tenants are not available yet: 501", async () => {
    const res = await mgmt("POST", "/tenants", { body: { id: uniqueId(), deployment_type: "wfp" } });
    expect(res.status).toBe(501);
  });

  it("the control-plane tenant cannot be deleted", async () => {
    expect((await mgmt("DELETE", "/tenants/control_plane")).status).toBe(400);
  });
});
