import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, mgmt, uniqueId } from "../helpers/api";

/**
 * Issue 28 point 6: what auth0-deploy-cli's export sends back on import is accepted. Read-only fields a read
 * shows are ignored on writes, a no-op update of the tenant's own management API succeeds (a real change
 * stays refused), `realms` is updatable on connections, and `GET /clients?is_global=true` never passes an
 * ordinary application off as the tenant's global client.
 */

let tenant: string;
const t = (extra: { body?: unknown } = {}) => ({ headers: { "tenant-id": tenant }, ...extra });
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

beforeAll(async () => {
  tenant = await createTenant();
});

describe("echoed reads are accepted", () => {
  it("POST and PATCH /clients take back what GET answered; the read-only fields are ignored", async () => {
    const created = await json<Record<string, unknown>>(await mgmt("POST", "/clients", t({ body: { name: uniqueId("app"), app_type: "spa", callbacks: ["https://a.example/cb"] } })));
    const read = await json<Record<string, unknown>>(await mgmt("GET", `/clients/${created.client_id}`, t()));
    expect(read).toMatchObject({ tenant, global: false, created_at: expect.any(String), updated_at: expect.any(String) });
    const { client_secret: _secret, client_id: _id, ...echo } = read;
    const copy = await mgmt("POST", "/clients", t({ body: { ...echo, name: uniqueId("copy") } }));
    expect(copy.status, await copy.clone().text()).toBe(201);
    const copied = await json<Record<string, unknown>>(copy);
    expect(copied.client_id).not.toBe(read.client_id);
    expect(copied.created_at).not.toBe("2000-01-01T00:00:00.000Z");
    expect(copied).toMatchObject({ app_type: "spa", callbacks: ["https://a.example/cb"] });

    const patched = await mgmt("PATCH", `/clients/${created.client_id}`, t({ body: { ...echo, created_at: "2000-01-01T00:00:00.000Z", description: "changed" } }));
    expect(patched.status, await patched.clone().text()).toBe(200);
    const after = await json<Record<string, unknown>>(patched);
    expect(after).toMatchObject({ client_id: created.client_id, created_at: read.created_at, description: "changed" });
    // Still strict about what is not a field at all.
    expect((await mgmt("PATCH", `/clients/${created.client_id}`, t({ body: { not_a_field: 1 } }))).status).toBe(400);
    expect((await mgmt("PATCH", `/clients/${created.client_id}`, t({ body: { client_id: "someone-else" } }))).status).toBe(400);
    expect((await mgmt("POST", "/clients", t({ body: { name: "x", global: "yes" } }))).status).toBe(400);
  });

  it("POST and PATCH /organizations take back the created_at and updated_at a read shows (deploy-cli's import sends them)", async () => {
    const org = await json<Record<string, unknown>>(await mgmt("POST", "/organizations", t({ body: { name: uniqueId("org").toLowerCase(), display_name: "Acme" } })));
    expect(org).toMatchObject({ created_at: expect.any(String), updated_at: expect.any(String) });
    const { id: _id, ...echo } = org;
    const copy = await mgmt("POST", "/organizations", t({ body: { ...echo, name: uniqueId("copy").toLowerCase(), created_at: "2000-01-01T00:00:00.000Z" } }));
    expect(copy.status, await copy.clone().text()).toBe(201);
    expect((await json(copy)).created_at).not.toBe("2000-01-01T00:00:00.000Z");
    const patched = await mgmt("PATCH", `/organizations/${org.id}`, t({ body: { ...echo, updated_at: "2000-01-01T00:00:00.000Z", display_name: "Acme 2" } }));
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(await json(patched)).toMatchObject({ id: org.id, created_at: org.created_at, display_name: "Acme 2" });
    expect((await mgmt("PATCH", `/organizations/${org.id}`, t({ body: { not_a_field: 1 } }))).status).toBe(400);
  });

  it("a no-op PATCH of the tenant's management API succeeds; a change to it stays 400", async () => {
    const apis = await json<Record<string, unknown>[]>(await mgmt("GET", "/resource-servers", t()));
    const system = apis.find((api) => api.identifier === "urn:gatehouse:management") as Record<string, unknown>;
    expect(system).toBeDefined();
    const body = { name: system.name, scopes: [...(system.scopes as { value: string }[])].reverse(), token_lifetime: system.token_lifetime, signing_alg: system.signing_alg };
    const noop = await mgmt("PATCH", `/resource-servers/${system.id}`, t({ body }));
    expect(noop.status, await noop.clone().text()).toBe(200);
    expect(await json(noop)).toEqual(system);
    const change = await mgmt("PATCH", `/resource-servers/${system.id}`, t({ body: { ...body, name: "Renamed" } }));
    expect(change.status).toBe(400);
    expect(await json(change)).toMatchObject({ message: "You cannot modify a system API" });
    expect((await mgmt("PATCH", `/resource-servers/${system.id}`, t({ body: { token_lifetime: Number(system.token_lifetime) + 1 } }))).status).toBe(400);
  });

  it("realms is settable on connections, shown as set, and defaults to the connection's name", async () => {
    const name = uniqueId("db");
    const created = await json<{ id: string; realms: string[] }>(await mgmt("POST", "/connections", t({ body: { name, strategy: "auth0" } })));
    expect(created.realms).toEqual([name]);
    const echo = await mgmt("PATCH", `/connections/${created.id}`, t({ body: { realms: [name] } }));
    expect(echo.status).toBe(200);
    const set = await json<{ realms: string[] }>(await mgmt("PATCH", `/connections/${created.id}`, t({ body: { realms: ["staff"] } })));
    expect(set.realms).toEqual(["staff"]);
    expect((await json<{ realms: string[] }>(await mgmt("GET", `/connections/${created.id}`, t()))).realms).toEqual(["staff"]);
    expect((await json<{ realms: string[] }>(await mgmt("PATCH", `/connections/${created.id}`, t({ body: { realms: null } })))).realms).toEqual([name]);
    for (const realms of [[], [""], "staff"]) {
      expect((await mgmt("PATCH", `/connections/${created.id}`, t({ body: { realms } }))).status, JSON.stringify(realms)).toBe(400);
    }
  });

  it("GET /clients?is_global=true lists only the read-only All Applications stand-in (deploy-cli's pages.ts needs it); other values are 400", async () => {
    await mgmt("POST", "/clients", t({ body: { name: uniqueId("app") } }));
    const [global, ...others] = await json<Record<string, unknown>[]>(await mgmt("GET", "/clients?is_global=true", t()));
    expect(others).toEqual([]);
    expect(global).toMatchObject({ global: true, name: "All Applications", grant_types: [], callbacks: [], custom_login_page_on: false });
    expect(global).not.toHaveProperty("client_secret");
    expect(await json(await mgmt("GET", "/clients?is_global=true&include_totals=true", t()))).toMatchObject({ clients: [global], total: 1 });
    expect((await json<unknown[]>(await mgmt("GET", "/clients?is_global=false", t()))).length).toBeGreaterThan(0);
    expect((await mgmt("GET", "/clients?is_global=maybe", t())).status).toBe(400);
  });
});
