import { env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { tenantMigrations } from "../../src/objects/tenant/core/migrations";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, seedUser } from "../helpers/flows";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 point 1: one store for which applications may use a connection. `enabled_clients` on a
 * connection, GET|PATCH /connections/{id}/clients, GET|PATCH /clients/{id}/connections and what login lets a
 * client use all read the same lists, so deploy-cli and Terraform see what the login page does.
 */

const SCOPES = ["read:connections", "create:connections", "update:connections", "delete:users", "read:clients"];
let kit: ReachKit;
const as = (token: string) => ({ token, headers: { "tenant-id": kit.tenant } });
const json = async <T>(res: Response) => (await res.json()) as T;

beforeAll(async () => {
  kit = await reachKit(SCOPES);
});

const signup = (tenant: string, clientId: string, connection: string) =>
  call("/dbconnections/signup", {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email: `${uniqueId("u")}@example.com`, password: "p4ssw0rd!long", connection }),
  });

async function databaseConnection(tenant: string, enabled?: string[]) {
  const name = uniqueId("db");
  const res = await mgmt("POST", "/connections", { headers: { "tenant-id": tenant }, body: { name, strategy: "auth0", ...(enabled ? { enabled_clients: enabled } : {}) } });
  expect(res.status, await res.clone().text()).toBe(201);
  return json<{ id: string; name: string; enabled_clients: string[] }>(res);
}

const clientsOf = async (tenant: string, id: string, query = "") =>
  json<{ clients: { client_id: string }[]; next?: string }>(await mgmt("GET", `/connections/${id}/clients${query}`, { headers: { "tenant-id": tenant } }));

describe("a connection's enabled clients: one store", () => {
  it("enabled_clients on create is what login lets each client use, and every view shows the same", async () => {
    const tenant = await createTenant();
    const a = await seedClient(tenant);
    const b = await seedClient(tenant);
    const connection = await databaseConnection(tenant, [a.client_id, "no-such-client"]);
    expect(connection.enabled_clients).toEqual([a.client_id]);
    expect(await clientsOf(tenant, connection.id)).toEqual({ clients: [{ client_id: a.client_id }] });
    const ofB = await json<{ enabled_connections: { connection_id: string }[] }>(await mgmt("GET", `/clients/${b.client_id}/connections`, { headers: { "tenant-id": tenant } }));
    expect(ofB.enabled_connections.map((c) => c.connection_id)).not.toContain(connection.id);
    // B still offers what it offered before (the default database), only not the new connection.
    expect(ofB.enabled_connections.length).toBeGreaterThan(0);
    expect((await signup(tenant, a.client_id, connection.name)).status).toBe(200);
    expect((await signup(tenant, b.client_id, connection.name)).status).toBe(400);
  });

  it("PATCH /connections/{id}/clients turns it on and off per client; GET /connections/{id} and login follow", async () => {
    const tenant = await createTenant();
    const a = await seedClient(tenant);
    const b = await seedClient(tenant);
    const connection = await databaseConnection(tenant, [a.client_id]);
    const on = await mgmt("PATCH", `/connections/${connection.id}/clients`, { headers: { "tenant-id": tenant }, body: [{ client_id: b.client_id, status: true }] });
    expect(on.status).toBe(204);
    expect(await on.text()).toBe("");
    expect(new Set((await clientsOf(tenant, connection.id)).clients.map((c) => c.client_id))).toEqual(new Set([a.client_id, b.client_id]));
    expect((await signup(tenant, b.client_id, connection.name)).status).toBe(200);

    const off = await mgmt("PATCH", `/connections/${connection.id}/clients`, { headers: { "tenant-id": tenant }, body: [{ client_id: a.client_id, status: false }] });
    expect(off.status).toBe(204);
    const read = await json<{ enabled_clients: string[] }>(await mgmt("GET", `/connections/${connection.id}`, { headers: { "tenant-id": tenant } }));
    expect(read.enabled_clients).toEqual([b.client_id]);
    expect((await signup(tenant, a.client_id, connection.name)).status).toBe(400);
    const listed = await json<{ id: string; enabled_clients: string[] }[]>(await mgmt("GET", "/connections", { headers: { "tenant-id": tenant } }));
    expect(listed.find((c) => c.id === connection.id)?.enabled_clients).toEqual([b.client_id]);
  });

  it("PATCH /connections/{id} enabled_clients replaces the set; PATCH /clients/{id}/connections shows up on the connection", async () => {
    const tenant = await createTenant();
    const a = await seedClient(tenant);
    const b = await seedClient(tenant);
    const connection = await databaseConnection(tenant, [a.client_id]);
    const patched = await mgmt("PATCH", `/connections/${connection.id}`, { headers: { "tenant-id": tenant }, body: { enabled_clients: [b.client_id] } });
    expect(patched.status).toBe(200);
    expect((await json<{ enabled_clients: string[] }>(patched)).enabled_clients).toEqual([b.client_id]);
    const clientSide = await mgmt("PATCH", `/clients/${a.client_id}/connections`, { headers: { "tenant-id": tenant }, body: [connection.id] });
    expect(clientSide.status).toBe(200);
    expect(new Set((await clientsOf(tenant, connection.id)).clients.map((c) => c.client_id))).toEqual(new Set([a.client_id, b.client_id]));
  });

  it("a connection created without enabled_clients is enabled for no client (the reference's rule); PATCH /connections/{id}/clients then enables exactly the clients named", async () => {
    const tenant = await createTenant();
    const a = await seedClient(tenant);
    const b = await seedClient(tenant);
    const offeredBefore = async (clientId: string) =>
      (await json<{ enabled_connections: { connection_id: string }[] }>(await mgmt("GET", `/clients/${clientId}/connections`, { headers: { "tenant-id": tenant } }))).enabled_connections.map((c) => c.connection_id);
    const bBefore = await offeredBefore(b.client_id);
    expect(bBefore.length).toBeGreaterThan(0);
    const connection = await databaseConnection(tenant);
    // What Terraform's auth0_connection_clients reads before it enables clients: nothing yet.
    expect(connection.enabled_clients).toEqual([]);
    expect(await clientsOf(tenant, connection.id)).toEqual({ clients: [] });
    expect((await signup(tenant, a.client_id, connection.name)).status).toBe(400);
    // Clients that offered every connection keep every one they offered, in order.
    expect(await offeredBefore(b.client_id)).toEqual(bBefore);
    const on = await mgmt("PATCH", `/connections/${connection.id}/clients`, { headers: { "tenant-id": tenant }, body: [{ client_id: a.client_id, status: true }] });
    expect(on.status).toBe(204);
    expect(await clientsOf(tenant, connection.id)).toEqual({ clients: [{ client_id: a.client_id }] });
    expect((await signup(tenant, a.client_id, connection.name)).status).toBe(200);
    expect((await signup(tenant, b.client_id, connection.name)).status).toBe(400);
    // A client made after the connection offers every connection there is (SPEC 4.2: no list, every connection).
    const later = await seedClient(tenant);
    expect(await offeredBefore(later.client_id)).toContain(connection.id);
    expect((await signup(tenant, later.client_id, connection.name)).status).toBe(200);
  });

  it("flags.enable_client_connections false: a new application starts with no connection until one is enabled for it", async () => {
    const tenant = await createTenant();
    const connection = await databaseConnection(tenant);
    const flag = await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": tenant }, body: { flags: { enable_client_connections: false } } });
    expect(flag.status).toBe(200);
    const made = await mgmt("POST", "/clients", { headers: { "tenant-id": tenant }, body: { name: "Late app", app_type: "regular_web" } });
    expect(made.status).toBe(201);
    const app = await json<{ client_id: string }>(made);
    const offered = await json<{ enabled_connections: unknown[] }>(await mgmt("GET", `/clients/${app.client_id}/connections`, { headers: { "tenant-id": tenant } }));
    expect(offered.enabled_connections).toEqual([]);
    expect((await signup(tenant, app.client_id, "Username-Password-Authentication")).status).toBe(400);
    const on = await mgmt("PATCH", `/connections/${connection.id}/clients`, { headers: { "tenant-id": tenant }, body: [{ client_id: app.client_id, status: true }] });
    expect(on.status).toBe(204);
    expect((await signup(tenant, app.client_id, connection.name)).status).toBe(200);
    // Back to the default (true): the next application offers every connection again.
    await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": tenant }, body: { flags: { enable_client_connections: true } } });
    const next = await json<{ client_id: string }>(await mgmt("POST", "/clients", { headers: { "tenant-id": tenant }, body: { name: "Next app", app_type: "regular_web" } }));
    expect((await signup(tenant, next.client_id, "Username-Password-Authentication")).status).toBe(200);
  });

  it("pages with take and from (checkpoint), in a stable order", async () => {
    const tenant = await createTenant();
    const clients: string[] = [];
    for (let i = 0; i < 3; i++) clients.push((await seedClient(tenant)).client_id);
    const connection = await databaseConnection(tenant, clients);
    const all = (await clientsOf(tenant, connection.id, "?take=1000")).clients.map((c) => c.client_id);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const seen: string[] = [];
    let page = await clientsOf(tenant, connection.id, "?take=2");
    seen.push(...page.clients.map((c) => c.client_id));
    while (page.next) {
      page = await clientsOf(tenant, connection.id, `?take=2&from=${encodeURIComponent(page.next)}`);
      seen.push(...page.clients.map((c) => c.client_id));
    }
    expect(seen).toEqual(all);
    expect((await clientsOf(tenant, connection.id, "?take=1000")).next).toBeUndefined();
  });

  it("bad input is a clear 400 or 404 and writes nothing", async () => {
    const tenant = await createTenant();
    const a = await seedClient(tenant);
    const connection = await databaseConnection(tenant, [a.client_id]);
    const target = { headers: { "tenant-id": tenant } };
    const patch = (body: unknown, id = connection.id) => mgmt("PATCH", `/connections/${id}/clients`, { ...target, body });
    for (const body of [[], [{ client_id: a.client_id }], [{ client_id: a.client_id, status: "yes" }], { client_id: a.client_id, status: true }, Array.from({ length: 51 }, () => ({ client_id: a.client_id, status: true }))]) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(await json(res)).toMatchObject({ statusCode: 400, errorCode: "invalid_body" });
    }
    const unknown = await patch([{ client_id: a.client_id, status: false }, { client_id: "nobody", status: true }]);
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({ errorCode: "inexistent_client" });
    expect((await clientsOf(tenant, connection.id)).clients).toEqual([{ client_id: a.client_id }]);
    expect((await patch([{ client_id: a.client_id, status: true }], "con_nothing")).status).toBe(404);
    for (const query of ["?take=0", "?take=1001", "?take=ten", "?from=not-a-client"]) {
      const res = await mgmt("GET", `/connections/${connection.id}/clients${query}`, target);
      expect(res.status, query).toBe(400);
      expect(await json(res)).toMatchObject({ errorCode: "invalid_query_string" });
    }
    const missing = await mgmt("GET", "/connections/con_nothing/clients", target);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ errorCode: "inexistent_connection" });
  });
});

describe("GET /connections/{id}/status", () => {
  it("200 for a connection of the tenant (served in-process, so online), 404 for an unknown id", async () => {
    const connection = await databaseConnection(kit.tenant);
    expect((await mgmt("GET", `/connections/${connection.id}/status`, as(kit.allowed))).status).toBe(200);
    const missing = await mgmt("GET", "/connections/con_nothing/status", as(kit.allowed));
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ errorCode: "inexistent_connection" });
  });
});

describe("DELETE /connections/{id}/users?email=", () => {
  it("deletes the database connection's user with that email, as DELETE /users/{id} does", async () => {
    const tenant = await createTenant();
    const email = `${uniqueId("gone")}@example.com`;
    const user = await seedUser(tenant, email);
    const target = { headers: { "tenant-id": tenant } };
    const connections = await json<{ id: string; name: string }[]>(await mgmt("GET", "/connections?name=Username-Password-Authentication", target));
    const id = connections[0]?.id as string;
    const res = await mgmt("DELETE", `/connections/${id}/users?email=${encodeURIComponent(email.toUpperCase())}`, target);
    expect(res.status).toBe(204);
    expect((await mgmt("GET", `/users/${encodeURIComponent(user.user_id)}`, target)).status).toBe(404);
    const again = await mgmt("DELETE", `/connections/${id}/users?email=${encodeURIComponent(email)}`, target);
    expect(again.status).toBe(404);
    expect(await json(again)).toMatchObject({ errorCode: "inexistent_user" });
  });

  it("refuses a missing or malformed email, a connection that is not a database and an unknown connection", async () => {
    const tenant = await createTenant();
    const target = { headers: { "tenant-id": tenant } };
    const db = await databaseConnection(tenant);
    for (const query of ["", "?email=", "?email=not-an-address"]) {
      const res = await mgmt("DELETE", `/connections/${db.id}/users${query}`, target);
      expect(res.status, query).toBe(400);
      expect(await json(res)).toMatchObject({ errorCode: "invalid_query_string" });
    }
    const social = await json<{ id: string }>(await mgmt("POST", "/connections", { ...target, body: { name: uniqueId("social"), strategy: "google-oauth2" } }));
    const other = await mgmt("DELETE", `/connections/${social.id}/users?email=a@example.com`, target);
    expect(other.status).toBe(400);
    expect(await json(other)).toMatchObject({ errorCode: "operation_not_supported" });
    expect((await mgmt("DELETE", "/connections/con_nothing/users?email=a@example.com", target)).status).toBe(404);
  });
});

describe("migration 0021: the connections' enabled_clients copies fold into the clients' lists", () => {
  it("a client with an explicit list gains the connections whose copy named it; copies are dropped; nothing is taken away", async () => {
    const tenant = await createTenant();
    const listed = await seedClient(tenant);
    const open = await seedClient(tenant);
    // The migration's data fold (its first part; the tables it then creates already exist on this tenant).
    const migration = (tenantMigrations.find((m) => m.name === "0021_connection_enabled_clients")?.sql ?? "").split("\n-- Organizations a client grant")[0] as string;
    expect(migration).toContain("UPDATE connections SET options = json_remove");
    expect(migration).not.toContain("CREATE TABLE");
    const result = await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => {
      const sql = state.storage.sql;
      const now = Date.now();
      sql.exec("INSERT INTO connections (id, name, strategy, options, created_at, updated_at) VALUES ('con_old1', 'old-one', 'auth0', ?, ?, ?)", JSON.stringify({ enabled_clients: [listed.client_id, open.client_id], x: 1 }), now, now);
      sql.exec("INSERT INTO connections (id, name, strategy, options, created_at, updated_at) VALUES ('con_old2', 'old-two', 'auth0', ?, ?, ?)", JSON.stringify({ enabled_clients: [] }), now + 1, now + 1);
      sql.exec("UPDATE clients SET extra = ? WHERE client_id = ?", JSON.stringify({ enabled_connections: ["con_kept"], other: true }), listed.client_id);
      sql.exec(migration);
      const extra = (id: string) => JSON.parse(String(sql.exec("SELECT extra FROM clients WHERE client_id = ?", id).one().extra));
      const options = sql.exec("SELECT id, options FROM connections WHERE id IN ('con_old1', 'con_old2') ORDER BY id").toArray().map((r) => JSON.parse(String(r.options)));
      return { listed: extra(listed.client_id), open: extra(open.client_id), options };
    });
    expect(result.listed).toEqual({ enabled_connections: ["con_kept", "con_old1"], other: true });
    expect(result.open).toEqual({});
    expect(result.options).toEqual([{ x: 1 }, {}]);
  });
});

describe("who can reach the connection-clients routes", () => {
  it("refuses no token, a token without the scope, another tenant's, an end user's and a revoked one", async () => {
    await expectRefusals(kit, "GET", "/connections/con_any/clients", "read:connections");
    await expectRefusals(kit, "PATCH", "/connections/con_any/clients", "update:connections", [{ client_id: "x", status: true }]);
    await expectRefusals(kit, "GET", "/connections/con_any/status", "read:connections");
    await expectRefusals(kit, "DELETE", "/connections/con_any/users?email=a@example.com", "delete:users");
  });
});
