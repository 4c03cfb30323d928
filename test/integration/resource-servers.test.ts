import { describe, expect, it } from "vitest";
import { CP, mgmt, token, uniqueId } from "../helpers/api";
import { createApi, createClient, grantClient } from "../helpers/management";

type Api = { id: string; identifier: string; name: string; scopes: { value: string }[]; [field: string]: unknown };
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

async function expectStatus(res: Response, status: number, message?: RegExp) {
  const body = await res.text();
  expect(res.status, body).toBe(status);
  if (message) expect((JSON.parse(body) as { message: string }).message).toMatch(message);
}

const systemApi = async () =>
  (await json<Api[]>(await mgmt("GET", "/resource-servers?per_page=100"))).find((a) => a.identifier === CP.audience) as Api;

describe("resource servers API (SPEC §4.2)", () => {
  it("creates an API with the documented defaults and reads it back", async () => {
    const identifier = `https://${uniqueId("api")}.example.com/`;
    const res = await mgmt("POST", "/resource-servers", { body: { identifier, name: "Orders", scopes: [{ value: "read:orders", description: "Read orders" }] } });
    expect(res.status).toBe(201);
    const api = await json<Api>(res);
    expect(api).toEqual({
      id: expect.stringMatching(/^rs_/),
      identifier,
      name: "Orders",
      scopes: [{ value: "read:orders", description: "Read orders" }],
      signing_alg: "RS256",
      token_lifetime: 86400,
      allow_offline_access: false,
      enforce_policies: false,
      token_dialect: "access_token",
      is_system: false,
    });
    expect(await json(await mgmt("GET", `/resource-servers/${api.id}`))).toEqual(api);
    await expectStatus(await mgmt("GET", "/resource-servers/rs_nothing"), 404);
  });

  it("a duplicate identifier is 409", async () => {
    const api = await createApi();
    await expectStatus(await mgmt("POST", "/resource-servers", { body: { identifier: api.identifier } }), 409, /already exists/);
    await expectStatus(await mgmt("POST", "/resource-servers", { body: { identifier: CP.audience } }), 409);
  });

  it("validates signing_alg, token_lifetime, scopes and unknown fields", async () => {
    const identifier = `https://${uniqueId("api")}.example.com/`;
    const bad = [
      // HS256 is accepted with the API's own secret (issue 14, hs256-signing.test.ts); these are not.
      { identifier, signing_alg: "HS512" },
      { identifier, signing_alg: "HS256", signing_secret: "too-short" },
      { identifier, token_lifetime: 59 },
      { identifier, token_lifetime: 2_592_001 },
      { identifier, scopes: [{ value: "has space" }] },
      { identifier, scopes: [{ value: "a" }, { value: "a" }] },
      { identifier, enforce_policies: "yes" },
      { identifier, not_a_field: true },
      { name: "no identifier" },
    ];
    for (const body of bad) await expectStatus(await mgmt("POST", "/resource-servers", { body }), 400);
    expect((await mgmt("POST", "/resource-servers", { body: { identifier, token_lifetime: 60 } })).status).toBe(201);
  });

  it("updates an API and the new token lifetime applies at /oauth/token at once", async () => {
    const api = await createApi(["read:things", "write:things"]);
    const client = await createClient({ app_type: "non_interactive" });
    await grantClient(client.client_id, api.identifier, ["read:things", "write:things"]);
    const res = await mgmt("PATCH", `/resource-servers/${api.id}`, { body: { token_lifetime: 600, name: "Renamed", allow_offline_access: true } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ token_lifetime: 600, name: "Renamed", allow_offline_access: true, identifier: api.identifier });
    const issued = await token({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: api.identifier });
    expect((await json(issued)).expires_in).toBe(600);
    await expectStatus(await mgmt("PATCH", `/resource-servers/${api.id}`, { body: { identifier: "https://other.example/" } }), 400, /Additional properties/);
    await expectStatus(await mgmt("PATCH", "/resource-servers/rs_nothing", { body: { name: "x" } }), 404);
  });

  it("removing a scope removes it from the API's client grants", async () => {
    const api = await createApi(["read:things", "write:things"]);
    const client = await createClient({ app_type: "non_interactive" });
    const grant = await grantClient(client.client_id, api.identifier, ["read:things", "write:things"]);
    await mgmt("PATCH", `/resource-servers/${api.id}`, { body: { scopes: [{ value: "read:things" }] } });
    const grants = await json<{ id: string; scope: string[] }[]>(await mgmt("GET", `/client-grants?client_id=${client.client_id}`));
    expect(grants).toEqual([{ id: grant.id, client_id: client.client_id, audience: api.identifier, scope: ["read:things"] }]);
  });

  it("deletes an API with its grants: 204, then 404, and tokens for it stop", async () => {
    const api = await createApi();
    const client = await createClient({ app_type: "non_interactive" });
    await grantClient(client.client_id, api.identifier, ["read:things"]);
    expect((await mgmt("DELETE", `/resource-servers/${api.id}`)).status).toBe(204);
    await expectStatus(await mgmt("GET", `/resource-servers/${api.id}`), 404);
    await expectStatus(await mgmt("DELETE", `/resource-servers/${api.id}`), 404);
    expect(await json(await mgmt("GET", `/client-grants?client_id=${client.client_id}`))).toEqual([]);
    const issued = await token({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: api.identifier });
    expect(await json(issued)).toEqual({ error: "access_denied", error_description: `Service not found: ${api.identifier}` });
  });

  it("the system management API cannot be modified or deleted (400)", async () => {
    const api = await systemApi();
    expect(api.is_system).toBe(true);
    await expectStatus(await mgmt("PATCH", `/resource-servers/${api.id}`, { body: { token_lifetime: 60 } }), 400, /cannot modify a system API/);
    await expectStatus(await mgmt("DELETE", `/resource-servers/${api.id}`), 400, /cannot delete a system API/);
    expect((await systemApi()).token_lifetime).toBe(86400);
  });

  it("lists with offsets and walks with checkpoints", async () => {
    await createApi();
    await createApi();
    const all = await json<Api[]>(await mgmt("GET", "/resource-servers?per_page=100"));
    const totals = await json(await mgmt("GET", "/resource-servers?include_totals=true&per_page=1"));
    expect(totals).toMatchObject({ start: 0, limit: 1, length: 1, total: all.length });
    const seen: string[] = [];
    let from: string | undefined;
    for (let i = 0; i < 100; i++) {
      const page = await json<{ resource_servers: Api[]; next?: string }>(await mgmt("GET", `/resource-servers?take=1${from ? `&from=${from}` : ""}`));
      seen.push(...page.resource_servers.map((a) => a.id));
      if (!page.next) break;
      from = page.next;
    }
    expect(seen).toEqual(all.map((a) => a.id));
  });

  it("each route needs its scope", async () => {
    const res = await token({ grant_type: "client_credentials", client_id: CP.clientId, client_secret: CP.clientSecret, audience: CP.audience, scope: "read:resource_servers" });
    const readOnly = (await json<{ access_token: string }>(res)).access_token;
    expect((await mgmt("GET", "/resource-servers", { token: readOnly })).status).toBe(200);
    const body = { identifier: `https://${uniqueId("api")}.example.com/` };
    await expectStatus(await mgmt("POST", "/resource-servers", { token: readOnly, body }), 403, /create:resource_servers/);
  });
});
