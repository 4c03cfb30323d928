import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp, type AppOptions } from "../../src/worker/app";
import { CP, controlPlaneToken, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient } from "../helpers/flows";

/**
 * Control-plane inheritance at read time (issue 15 point 2; SPEC "Control-plane inheritance"): with
 * INHERIT_FROM_CONTROL_PLANE=1 a child sees the control plane's connections and APIs where it has none of
 * its own, marked `inherited` and read-only; nothing is copied into the child.
 */

const INHERITING = { INHERIT_FROM_CONTROL_PLANE: "1" };

function inheritingApp(options: AppOptions = {}) {
  const app = createApp(options);
  return async (method: string, url: string, init: { tenant?: string; body?: unknown; token?: string } = {}) => {
    const headers: Record<string, string> = {};
    if (url.startsWith("/api/v2")) headers.authorization = `Bearer ${init.token ?? (await controlPlaneToken())}`;
    if (init.tenant) headers["tenant-id"] = init.tenant;
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const full = url.startsWith("http") ? url : `http://localhost:8787${url}`;
    return app.fetch(
      new Request(full, { method, headers, redirect: "manual", ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) }),
      { ...env, ...INHERITING },
      createExecutionContext(),
    );
  };
}

/** A connection and an API created on the control plane for the test. */
async function controlPlaneItems() {
  const name = `cp-${uniqueId("con").slice(-8)}`;
  const connection = (await (await mgmt("POST", "/connections", { body: { name, strategy: "auth0" } })).json()) as { id: string; name: string };
  const identifier = `https://cp-api.${uniqueId()}.example`;
  const api = (await (await mgmt("POST", "/resource-servers", { body: { identifier, name: "CP API", scopes: [{ value: "read:things" }] } })).json()) as { id: string; identifier: string };
  return { connection, api };
}

const childRows = (tenant: string) =>
  runInDurableObject(env.TENANT.getByName(tenant), (_o, state) =>
    state.storage.sql.exec("SELECT (SELECT count(*) FROM connections) AS connections, (SELECT count(*) FROM resource_servers) AS apis").one(),
  );

describe("control-plane inheritance at read time (issue 15 point 2)", () => {
  it("a child lists and reads the control plane's connections and APIs, marked inherited; its own rows are untouched", async () => {
    const send = inheritingApp();
    const { connection, api } = await controlPlaneItems();
    const child = await createTenant();
    const before = await childRows(child);

    const connections = (await (await send("GET", "/api/v2/connections?per_page=100", { tenant: child })).json()) as { id: string; name: string; inherited?: boolean }[];
    expect(connections.find((x) => x.id === connection.id)).toMatchObject({ name: connection.name, inherited: true });
    expect(connections.find((x) => x.name === "Username-Password-Authentication")?.inherited).toBeUndefined();
    const one = await send("GET", `/api/v2/connections/${connection.id}`, { tenant: child });
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ id: connection.id, inherited: true });

    const apis = (await (await send("GET", "/api/v2/resource-servers?include_totals=true", { tenant: child })).json()) as { resource_servers: { id: string; inherited?: boolean; is_system?: boolean }[]; total: number };
    expect(apis.resource_servers.find((x) => x.id === api.id)).toMatchObject({ identifier: api.identifier, inherited: true });
    // The control plane's management API is never inherited: the child has its own.
    expect(apis.resource_servers.filter((x) => x.is_system)).toHaveLength(1);
    expect(apis.total).toBe(apis.resource_servers.length);

    // Reads never write the inherited rows back into the child.
    expect(await childRows(child)).toEqual(before);
  });

  it("inherited items are read-only in the child: PATCH and DELETE are 403 and the control plane's rows stay", async () => {
    const send = inheritingApp();
    const { connection, api } = await controlPlaneItems();
    const child = await createTenant();
    for (const [method, path, body] of [
      ["PATCH", `/api/v2/connections/${connection.id}`, { display_name: "mine" }],
      ["DELETE", `/api/v2/connections/${connection.id}`, undefined],
      ["PATCH", `/api/v2/resource-servers/${api.id}`, { name: "mine" }],
      ["DELETE", `/api/v2/resource-servers/${api.id}`, undefined],
    ] as const) {
      const res = await send(method, path, { tenant: child, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(((await res.json()) as { message: string }).message).toContain("inherited");
    }
    expect((await mgmt("GET", `/connections/${connection.id}`)).status).toBe(200);
    expect(await (await mgmt("GET", `/resource-servers/${api.id}`)).json()).toMatchObject({ name: "CP API" });
  });

  it("the child's own connection of the same name shadows the inherited one", async () => {
    const send = inheritingApp();
    const { connection } = await controlPlaneItems();
    const child = await createTenant();
    const own = (await (await mgmt("POST", "/connections", { headers: { "tenant-id": child }, body: { name: connection.name, strategy: "auth0" } })).json()) as { id: string };
    const list = (await (await send("GET", "/api/v2/connections", { tenant: child })).json()) as { id: string; name: string; inherited?: boolean }[];
    const named = list.filter((x) => x.name === connection.name);
    expect(named).toEqual([expect.objectContaining({ id: own.id })]);
    expect(named[0]?.inherited).toBeUndefined();
  });

  it("at run time /authorize accepts the inherited API as audience (without inheritance: Service not found)", async () => {
    const send = inheritingApp();
    const { api } = await controlPlaneItems();
    const child = await createTenant();
    const client = await seedClient(child, { callbacks: ["https://app.example.com/cb"] });
    const query = new URLSearchParams({ client_id: client.client_id, redirect_uri: "https://app.example.com/cb", response_type: "code", scope: "openid", state: "s", audience: api.identifier });
    const inheriting = await send("GET", `http://${child}.localhost:8787/authorize?${query}`);
    expect(inheriting.status).toBe(302);
    expect(inheriting.headers.get("location")).toContain("/u2/login");
    const plain = await createApp().fetch(new Request(`http://${child}.localhost:8787/authorize?${query}`, { redirect: "manual" }), env, createExecutionContext());
    expect(new URL(plain.headers.get("location") as string).searchParams.get("error_description")).toBe(`Service not found: ${api.identifier}`);
  });

  it("resolveControlPlane returning undefined opts a tenant out of inheritance reads", async () => {
    const optedOut = await createTenant();
    const send = inheritingApp({
      controlPlane: { resolveControlPlane: ({ tenant_id }) => (tenant_id === optedOut ? undefined : { tenantId: CP.tenantId }) },
    });
    const { connection } = await controlPlaneItems();
    const other = await createTenant();
    const seen = async (tenant: string) =>
      ((await (await send("GET", "/api/v2/connections?per_page=100", { tenant })).json()) as { id: string }[]).some((x) => x.id === connection.id);
    expect(await seen(optedOut)).toBe(false);
    expect(await seen(other)).toBe(true);
    expect((await send("GET", `/api/v2/connections/${connection.id}`, { tenant: optedOut })).status).toBe(404);
  });

  it("without inheritance a child sees only its own connections", async () => {
    const { connection } = await controlPlaneItems();
    const child = await createTenant();
    const list = (await (await mgmt("GET", "/connections", { headers: { "tenant-id": child } })).json()) as { id: string }[];
    expect(list.some((x) => x.id === connection.id)).toBe(false);
  });
});
