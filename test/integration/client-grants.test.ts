import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, token } from "../helpers/api";
import { type ClientBody, createApi, createClient, grantClient, tick } from "../helpers/management";

type Grant = { id: string; client_id: string; audience: string; scope: string[] };
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

async function expectStatus(res: Response, status: number, message?: RegExp) {
  const body = await res.text();
  expect(res.status, body).toBe(status);
  if (message) expect((JSON.parse(body) as { message: string }).message).toMatch(message);
}

const cc = (client: ClientBody, audience: string, scope?: string) =>
  token({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience, scope });

describe("client grants API (SPEC §2.12, §4.2)", () => {
  it("a grant takes effect at /oauth/token at once, and its scope bounds the token", async () => {
    const api = await createApi(["read:things", "write:things"]);
    const client = await createClient({ app_type: "non_interactive" });
    const denied = await cc(client, api.identifier);
    expect(denied.status).toBe(403);
    expect((await json(denied)).error).toBe("access_denied");

    const res = await mgmt("POST", "/client-grants", { body: { client_id: client.client_id, audience: api.identifier, scope: ["read:things"] } });
    expect(res.status).toBe(201);
    const grant = await json<Grant>(res);
    expect(grant).toEqual({ id: expect.stringMatching(/^cgr_/), client_id: client.client_id, audience: api.identifier, scope: ["read:things"] });

    const issued = await cc(client, api.identifier);
    expect(issued.status).toBe(200);
    expect((await json(issued)).scope).toBe("read:things");
    expect((await cc(client, api.identifier, "write:things")).status).toBe(403);
  });

  it("checks the client (404), the audience (404), the scopes (400) and duplicates (409)", async () => {
    const api = await createApi(["read:things"]);
    const client = await createClient({ app_type: "non_interactive" });
    const body = { client_id: client.client_id, audience: api.identifier, scope: ["read:things"] };
    await expectStatus(await mgmt("POST", "/client-grants", { body: { ...body, client_id: "no-such-client" } }), 404, /client/);
    await expectStatus(await mgmt("POST", "/client-grants", { body: { ...body, audience: "https://nowhere.example/" } }), 404, /resource server/);
    await expectStatus(await mgmt("POST", "/client-grants", { body: { ...body, scope: ["read:things", "delete:things"] } }), 400, /delete:things/);
    await expectStatus(await mgmt("POST", "/client-grants", { body: { ...body, scope: "read:things" } }), 400);
    await expectStatus(await mgmt("POST", "/client-grants", { body: { ...body, extra: 1 } }), 400, /Additional properties/);
    expect((await mgmt("POST", "/client-grants", { body })).status).toBe(201);
    await expectStatus(await mgmt("POST", "/client-grants", { body }), 409);
    expect(await json(await mgmt("GET", `/client-grants?client_id=${client.client_id}`))).toHaveLength(1);
  });

  it("lists newest first, filtered by audience and client_id, in both pagination modes", async () => {
    const child = await createTenant();
    const target = { headers: { "tenant-id": child } };
    const [a, b] = [await createApi(["s"], target), await createApi(["s"], target)];
    const client1 = await createClient({ app_type: "non_interactive" }, target);
    const client2 = await createClient({ app_type: "non_interactive" }, target);
    const g1 = await grantClient(client1.client_id, a.identifier, ["s"], target);
    await tick();
    const g2 = await grantClient(client1.client_id, b.identifier, ["s"], target);
    await tick();
    const g3 = await grantClient(client2.client_id, a.identifier, ["s"], target);

    const ids = async (query: string) => (await json<Grant[]>(await mgmt("GET", `/client-grants${query}`, target))).map((g) => g.id);
    expect(await ids(`?audience=${encodeURIComponent(a.identifier)}`)).toEqual([g3.id, g1.id]);
    expect(await ids(`?client_id=${client1.client_id}`)).toEqual([g2.id, g1.id]);
    expect(await ids(`?client_id=${client1.client_id}&audience=${encodeURIComponent(b.identifier)}`)).toEqual([g2.id]);

    const first = await json<{ client_grants: Grant[]; next?: string }>(await mgmt("GET", `/client-grants?take=2&audience=${encodeURIComponent(a.identifier)}`, target));
    expect(first.client_grants.map((g) => g.id)).toEqual([g3.id, g1.id]);
    expect(first.next).toBeUndefined();
    const page1 = await json<{ client_grants: Grant[]; next?: string }>(await mgmt("GET", "/client-grants?take=1", target));
    expect(page1.client_grants.map((g) => g.id)).toEqual([g3.id]);
    const page2 = await json<{ client_grants: Grant[]; next?: string }>(await mgmt("GET", `/client-grants?take=2&from=${page1.next}`, target));
    expect(page2.client_grants.map((g) => g.id)).toEqual([g2.id, g1.id]);
    expect(page2.next).toBeUndefined();
    expect(await json(await mgmt("GET", "/client-grants?include_totals=true&per_page=1", target))).toMatchObject({ total: 3, length: 1 });
  });

  it("patches the scope (checked against the API) and the change applies at /oauth/token", async () => {
    const api = await createApi(["read:things", "write:things"]);
    const client = await createClient({ app_type: "non_interactive" });
    const grant = await grantClient(client.client_id, api.identifier, ["read:things"]);
    const res = await mgmt("PATCH", `/client-grants/${grant.id}`, { body: { scope: ["write:things"] } });
    expect(res.status).toBe(200);
    expect((await json<Grant>(res)).scope).toEqual(["write:things"]);
    expect((await json(await cc(client, api.identifier))).scope).toBe("write:things");
    await expectStatus(await mgmt("PATCH", `/client-grants/${grant.id}`, { body: { scope: ["launch:rockets"] } }), 400);
    await expectStatus(await mgmt("PATCH", `/client-grants/${grant.id}`, { body: { audience: api.identifier } }), 400);
    await expectStatus(await mgmt("PATCH", "/client-grants/cgr_nothing", { body: { scope: [] } }), 404);
  });

  it("deletes a grant: 204, then 404, and the client gets no more tokens", async () => {
    const api = await createApi();
    const client = await createClient({ app_type: "non_interactive" });
    const grant = await grantClient(client.client_id, api.identifier, ["read:things"]);
    expect((await cc(client, api.identifier)).status).toBe(200);
    expect((await mgmt("DELETE", `/client-grants/${grant.id}`)).status).toBe(204);
    await expectStatus(await mgmt("DELETE", `/client-grants/${grant.id}`), 404);
    expect((await cc(client, api.identifier)).status).toBe(403);
  });

  it("the control plane's own grant cannot be changed or deleted (400), so it keeps its access", async () => {
    const grants = await json<Grant[]>(await mgmt("GET", `/client-grants?client_id=${CP.clientId}&audience=${encodeURIComponent(CP.audience)}`));
    const own = grants[0] as Grant;
    await expectStatus(await mgmt("DELETE", `/client-grants/${own.id}`), 400);
    await expectStatus(await mgmt("PATCH", `/client-grants/${own.id}`, { body: { scope: ["read:clients"] } }), 400);
    expect((await mgmt("GET", "/client-grants")).status).toBe(200);
  });
});
