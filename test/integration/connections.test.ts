import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";
import { seedClient, seedUser } from "../helpers/flows";

type Connection = { id: string; name: string; strategy: string; options: Record<string, unknown>; [field: string]: unknown };
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

async function expectStatus(res: Response, status: number, message?: RegExp) {
  const body = await res.text();
  expect(res.status, body).toBe(status);
  if (message) expect((JSON.parse(body) as { message: string }).message).toMatch(message);
}

async function childTarget() {
  const child = await createTenant();
  return { child, target: { headers: { "tenant-id": child } } };
}

describe("connections API (SPEC §4.2)", () => {
  it("creates a connection in the reference platform's shape and reads it back", async () => {
    const { child, target } = await childTarget();
    const app = await seedClient(child);
    const body = {
      name: "staff-db",
      strategy: "auth0",
      display_name: "Staff",
      options: { password_policy: "good", brute_force_protection: true },
      enabled_clients: [app.client_id],
      metadata: { team: "ops" },
    };
    const res = await mgmt("POST", "/connections", { body, ...target });
    expect(res.status).toBe(201);
    const connection = await json<Connection>(res);
    expect(connection).toEqual({ ...body, id: expect.stringMatching(/^con_/), is_domain_connection: false, realms: ["staff-db"] });
    expect(await json(await mgmt("GET", `/connections/${connection.id}`, target))).toEqual(connection);
    await expectStatus(await mgmt("GET", "/connections/con_nothing", target), 404);
  });

  it("a duplicate name is 409; bad names, strategies and unknown fields are 400", async () => {
    const { target } = await childTarget();
    await expectStatus(await mgmt("POST", "/connections", { body: { name: "Username-Password-Authentication", strategy: "auth0" }, ...target }), 409);
    for (const body of [
      { name: "-bad", strategy: "auth0" },
      { name: "has space", strategy: "auth0" },
      { name: "ok", strategy: "Bad Strategy" },
      { name: "ok" },
      { name: "ok", strategy: "auth0", options: [] },
      { name: "ok", strategy: "auth0", realm: "x" },
    ]) {
      await expectStatus(await mgmt("POST", "/connections", { body, ...target }), 400);
    }
  });

  it("encrypts credential options at rest and returns them to the API", async () => {
    const { child, target } = await childTarget();
    const options = { client_id: "google-app", client_secret: "very-secret-value", scope: ["email"] };
    const connection = await json<Connection>(await mgmt("POST", "/connections", { body: { name: "google", strategy: "google-oauth2", options }, ...target }));
    expect(connection.options).toEqual(options);
    const row = await runInDurableObject(env.TENANT.getByName(child), (_o, state) =>
      state.storage.sql.exec("SELECT options, secrets_enc FROM connections WHERE id = ?", connection.id).one(),
    );
    expect(String(row.options)).not.toContain("very-secret-value");
    expect(String(row.secrets_enc).startsWith("enc:v1:")).toBe(true);
    expect(String(row.secrets_enc)).not.toContain("very-secret-value");
  });

  it("PATCH replaces options as a whole but keeps the fields it does not name; name and strategy are immutable", async () => {
    const { child, target } = await childTarget();
    const [c1, c2] = [await seedClient(child), await seedClient(child)];
    const created = await json<Connection>(
      await mgmt("POST", "/connections", { body: { name: "social", strategy: "oauth2", display_name: "Social", options: { a: 1, client_secret: "s1" } }, ...target }),
    );
    const res = await mgmt("PATCH", `/connections/${created.id}`, { body: { options: { b: 2 }, enabled_clients: [c1?.client_id, c2?.client_id] }, ...target });
    expect(res.status).toBe(200);
    const patched = await json<Connection>(res);
    expect(patched).toMatchObject({ name: "social", strategy: "oauth2", display_name: "Social", options: { b: 2 } });
    expect(new Set(patched.enabled_clients as string[])).toEqual(new Set([c1?.client_id, c2?.client_id]));
    expect(await json(await mgmt("GET", `/connections/${created.id}`, target))).toEqual(patched);
    const cleared = await json<Connection>(await mgmt("PATCH", `/connections/${created.id}`, { body: { display_name: null }, ...target }));
    expect(cleared.display_name).toBeUndefined();
    expect(cleared.options).toEqual({ b: 2 });
    await expectStatus(await mgmt("PATCH", `/connections/${created.id}`, { body: { strategy: "auth0" }, ...target }), 400);
    await expectStatus(await mgmt("PATCH", `/connections/${created.id}`, { body: { name: "renamed" }, ...target }), 400);
    await expectStatus(await mgmt("PATCH", "/connections/con_nothing", { body: { options: {} }, ...target }), 404);
  });

  it("lists newest first with strategy and name filters, in both pagination modes", async () => {
    const { target } = await childTarget();
    const created: string[] = [];
    for (const name of ["one", "two", "three"]) {
      // An oidc connection needs its upstream's client_id, client_secret and issuer (issue 29 point 0).
      const options = { type: "back_channel", issuer: "https://idp.example.com/", client_id: `c-${name}`, client_secret: "s" };
      created.push((await json<Connection>(await mgmt("POST", "/connections", { body: { name, strategy: "oidc", options }, ...target }))).id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const all = await json<Connection[]>(await mgmt("GET", "/connections", target));
    expect(all.map((c) => c.name)).toEqual(["three", "two", "one", "Username-Password-Authentication"]);
    expect((await json<Connection[]>(await mgmt("GET", "/connections?strategy=oidc", target))).map((c) => c.id)).toEqual(created.reverse());
    expect((await json<Connection[]>(await mgmt("GET", "/connections?name=two", target))).map((c) => c.name)).toEqual(["two"]);
    const page = await json<{ connections: Connection[]; next?: string }>(await mgmt("GET", "/connections?take=3", target));
    expect(page.connections.map((c) => c.name)).toEqual(["three", "two", "one"]);
    const last = await json<{ connections: Connection[]; next?: string }>(await mgmt("GET", `/connections?take=3&from=${page.next}`, target));
    expect(last).toEqual({ connections: [expect.objectContaining({ name: "Username-Password-Authentication" })] });
  });

  it("deletes a connection without users (204, then 404) and refuses one with users (409)", async () => {
    const { child, target } = await childTarget();
    const spare = await json<Connection>(await mgmt("POST", "/connections", { body: { name: "spare", strategy: "auth0" }, ...target }));
    expect((await mgmt("DELETE", `/connections/${spare.id}`, target)).status).toBe(204);
    await expectStatus(await mgmt("GET", `/connections/${spare.id}`, target), 404);
    await expectStatus(await mgmt("DELETE", `/connections/${spare.id}`, target), 404);

    await seedUser(child, "someone@example.com");
    const list = await json<Connection[]>(await mgmt("GET", "/connections?name=Username-Password-Authentication", target));
    await expectStatus(await mgmt("DELETE", `/connections/${list[0]?.id}`, target), 409, /user/);
  });
});
