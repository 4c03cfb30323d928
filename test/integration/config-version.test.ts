import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";
import { createApi, createClient, grantClient } from "../helpers/management";

describe("configuration writes and the config version (ARCHITECTURE.md §4)", () => {
  it("every management write of configuration bumps the version, so other isolates refetch their snapshot", async () => {
    const child = await createTenant();
    const target = { headers: { "tenant-id": child } };
    const tenant = env.TENANT.getByName(child);
    let version = await tenant.getConfigVersion();
    const bumped = async (what: string, write: () => Promise<unknown>) => {
      await write();
      const next = await tenant.getConfigVersion();
      expect(next, what).toBeGreaterThan(version);
      version = next;
    };
    const ok = async (res: Promise<Response>) => {
      const r = await res;
      expect(r.status, await r.clone().text()).toBeLessThan(300);
      return r;
    };

    let client = { client_id: "" };
    let api = { id: "", identifier: "" };
    let grant = { id: "" };
    let connection = { id: "" };
    await bumped("create client", async () => (client = await createClient({ app_type: "non_interactive" }, target)));
    await bumped("update client", () => ok(mgmt("PATCH", `/clients/${client.client_id}`, { body: { name: "x" }, ...target })));
    await bumped("rotate secret", () => ok(mgmt("POST", `/clients/${client.client_id}/rotate-secret`, target)));
    await bumped("client connections", () => ok(mgmt("PATCH", `/clients/${client.client_id}/connections`, { body: [], ...target })));
    await bumped("create API", async () => (api = await createApi(["s", "t"], target)));
    await bumped("update API", () => ok(mgmt("PATCH", `/resource-servers/${api.id}`, { body: { token_lifetime: 120 }, ...target })));
    await bumped("create grant", async () => (grant = await grantClient(client.client_id, api.identifier, ["s"], target)));
    await bumped("update grant", () => ok(mgmt("PATCH", `/client-grants/${grant.id}`, { body: { scope: ["t"] }, ...target })));
    await bumped("delete grant", () => ok(mgmt("DELETE", `/client-grants/${grant.id}`, target)));
    await bumped("create connection", async () => {
      const res = await ok(mgmt("POST", "/connections", { body: { name: "extra", strategy: "auth0" }, ...target }));
      connection = (await res.json()) as { id: string };
    });
    await bumped("update connection", () => ok(mgmt("PATCH", `/connections/${connection.id}`, { body: { options: { a: 1 } }, ...target })));
    await bumped("delete connection", () => ok(mgmt("DELETE", `/connections/${connection.id}`, target)));
    await bumped("branding", () => ok(mgmt("PATCH", "/branding", { body: { colors: { primary: "#000" } }, ...target })));
    await bumped("delete API", () => ok(mgmt("DELETE", `/resource-servers/${api.id}`, target)));
    await bumped("delete client", () => ok(mgmt("DELETE", `/clients/${client.client_id}`, target)));
  });

  it("a refused write leaves the version alone", async () => {
    const child = await createTenant();
    const target = { headers: { "tenant-id": child } };
    const tenant = env.TENANT.getByName(child);
    const before = await tenant.getConfigVersion();
    expect((await mgmt("POST", "/client-grants", { body: { client_id: "nobody", audience: "https://x.example/", scope: [] }, ...target })).status).toBe(404);
    expect((await mgmt("DELETE", "/clients/nobody", target)).status).toBe(404);
    expect((await mgmt("POST", "/connections", { body: { name: "Username-Password-Authentication", strategy: "auth0" }, ...target })).status).toBe(409);
    expect(await tenant.getConfigVersion()).toBe(before);
  });
});
