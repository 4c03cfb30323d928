import { env, runInDurableObject } from "cloudflare:test";
import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, token } from "../helpers/api";
import { type ClientBody, createApi, createClient, grantClient, tick } from "../helpers/management";

const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

async function expectStatus(res: Response, status: number, message?: RegExp) {
  const body = await res.text();
  expect(res.status, body).toBe(status);
  if (message) expect((JSON.parse(body) as { message: string }).message).toMatch(message);
}

/** A client_credentials token request for a client of the control plane. */
const ccFor = (client: ClientBody, audience: string, secret = client.client_secret) =>
  token({ grant_type: "client_credentials", client_id: client.client_id, client_secret: secret, audience });

describe("clients API: create and read (SPEC §4.2)", () => {
  it("creates a confidential client with a generated secret and the documented defaults", async () => {
    const client = await createClient({ name: "Billing" });
    expect(client).toMatchObject({
      name: "Billing",
      app_type: "regular_web",
      token_endpoint_auth_method: "client_secret_post",
      grant_types: [],
      callbacks: [],
      is_first_party: true,
      oidc_conformant: true,
      client_metadata: {},
    });
    expect(client.client_id).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const key of Object.keys(client)) expect(key).not.toMatch(/_enc$|^extra$|^is_system$/);

    const read = await mgmt("GET", `/clients/${client.client_id}`);
    expect(read.status).toBe(200);
    expect(await json(read)).toEqual(client);
  });

  it("spa and native clients default to public (no secret); an explicit method gets one", async () => {
    for (const app_type of ["spa", "native"]) {
      const client = await createClient({ app_type });
      expect(client.token_endpoint_auth_method).toBe("none");
      expect(client.client_secret).toBeUndefined();
    }
    const basic = await createClient({ app_type: "spa", token_endpoint_auth_method: "client_secret_basic" });
    expect(basic.client_secret).toEqual(expect.any(String));
  });

  it("keeps the less common settings and returns them top-level", async () => {
    const settings = {
      jwt_configuration: { lifetime_in_seconds: 3600, alg: "RS256" },
      refresh_token: { rotation_type: "rotating", expiration_type: "expiring", leeway: 30 },
      organization_usage: "allow",
      organization_require_behavior: "pre_login_prompt",
      user_linking_mode: "off",
      client_metadata: { tier: "gold" },
      callbacks: ["https://app.example.com/callback"],
      allowed_logout_urls: ["https://app.example.com/"],
      web_origins: ["https://app.example.com"],
      grant_types: ["authorization_code", "refresh_token"],
      description: "The billing app",
    };
    const client = await createClient(settings);
    expect(client).toMatchObject(settings);
    expect(await json(await mgmt("GET", `/clients/${client.client_id}`))).toMatchObject(settings);
  });

  it("accepts public JWKs for private_key_jwt and refuses private key material", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const pub = await exportJWK(publicKey);
    const client = await createClient({ app_type: "non_interactive", token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [pub] } });
    expect(client.jwks).toEqual({ keys: [pub] });
    const priv = await exportJWK(privateKey);
    const refused = await mgmt("POST", "/clients", { body: { name: "x", token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [priv] } } });
    await expectStatus(refused, 400, /public keys only/);
    const noKeys = await mgmt("POST", "/clients", { body: { name: "x", token_endpoint_auth_method: "private_key_jwt" } });
    await expectStatus(noKeys, 400, /requires jwks/);
  });

  it("refuses unknown properties and invalid values with 400, creating nothing", async () => {
    const before = (await json<unknown[]>(await mgmt("GET", "/clients?per_page=100"))).length;
    await expectStatus(await mgmt("POST", "/clients", { body: { name: "x", oidcConformant: true } }), 400, /Additional properties not allowed: oidcConformant/);
    await expectStatus(await mgmt("POST", "/clients", { body: { app_type: "spa" } }), 400, /name/);
    await expectStatus(await mgmt("POST", "/clients", { body: { name: "x", app_type: "mainframe" } }), 400);
    await expectStatus(await mgmt("POST", "/clients", { body: { name: "x", token_endpoint_auth_method: "magic" } }), 400);
    await expectStatus(await mgmt("POST", "/clients", { body: { name: "x", callbacks: "https://a.example/" } }), 400);
    await expectStatus(await mgmt("POST", "/clients", { body: { name: "x", client_metadata: { n: 1 } } }), 400);
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"]));
    await expectStatus(await mgmt("POST", "/clients", { body: { name: "x", client_metadata: eleven } }), 400, /at most 10/);
    await expectStatus(await mgmt("POST", "/clients", { body: { name: "x", refresh_token: { rotation_type: "sometimes" } } }), 400);
    expect((await json<unknown[]>(await mgmt("GET", "/clients?per_page=100"))).length).toBe(before);
  });

  it("shows client_secret on reads only to tokens holding read:client_keys", async () => {
    const client = await createClient();
    const res = await token({ grant_type: "client_credentials", client_id: CP.clientId, client_secret: CP.clientSecret, audience: CP.audience, scope: "read:clients" });
    const readOnly = (await json<{ access_token: string }>(res)).access_token;
    const withoutKeys = await json<ClientBody>(await mgmt("GET", `/clients/${client.client_id}`, { token: readOnly }));
    expect(withoutKeys.client_id).toBe(client.client_id);
    expect(withoutKeys.client_secret).toBeUndefined();
    const listed = await json<ClientBody[]>(await mgmt("GET", "/clients?per_page=100", { token: readOnly }));
    expect(listed.every((c) => c.client_secret === undefined)).toBe(true);
    expect((await json<ClientBody>(await mgmt("GET", `/clients/${client.client_id}`))).client_secret).toBe(client.client_secret);
  });

  it("stores the client secret encrypted at rest", async () => {
    const client = await createClient();
    const secret = String(client.client_secret);
    const row = await runInDurableObject(env.TENANT.getByName("control_plane"), (_obj, state) =>
      state.storage.sql.exec("SELECT client_secret_enc FROM clients WHERE client_id = ?", client.client_id).one(),
    );
    const stored = String(row.client_secret_enc);
    expect(stored.startsWith("enc:v1:")).toBe(true);
    expect(stored).not.toContain(secret);
  });
});

describe("clients API: list (SPEC §4.3)", () => {
  it("pages with offsets and totals, newest first", async () => {
    const older = await createClient();
    await tick();
    const newer = await createClient();
    const list = await json<ClientBody[]>(await mgmt("GET", "/clients?per_page=100"));
    const ids = list.map((c) => c.client_id);
    expect(ids.indexOf(newer.client_id)).toBeLessThan(ids.indexOf(older.client_id));
    expect(ids).toContain(CP.clientId);
    const page = await json(await mgmt("GET", "/clients?include_totals=true&per_page=2&page=0"));
    expect(page).toMatchObject({ start: 0, limit: 2, length: 2, total: list.length });
    expect((page.clients as ClientBody[]).map((c) => c.client_id)).toEqual(ids.slice(0, 2));
    await expectStatus(await mgmt("GET", "/clients?per_page=1000"), 400);
  });

  it("walks every client with checkpoint pagination, without repeats", async () => {
    await createClient();
    await createClient();
    const seen: string[] = [];
    let from: string | undefined;
    for (let i = 0; i < 100; i++) {
      const res = await mgmt("GET", `/clients?take=2${from ? `&from=${from}` : ""}`);
      expect(res.status).toBe(200);
      const page = await json<{ clients: ClientBody[]; next?: string }>(res);
      seen.push(...page.clients.map((c) => c.client_id));
      if (!page.next) break;
      from = page.next;
    }
    const all = await json<ClientBody[]>(await mgmt("GET", "/clients?per_page=100"));
    expect(seen).toEqual(all.map((c) => c.client_id));
    await expectStatus(await mgmt("GET", "/clients?from=garbage"), 400);
  });
});

describe("clients API: update, rotate, delete", () => {
  it("patches fields, merges client_metadata and clears settings with null", async () => {
    const client = await createClient({ client_metadata: { a: "1", b: "2" }, organization_usage: "allow", callbacks: ["https://a.example/cb"] });
    const res = await mgmt("PATCH", `/clients/${client.client_id}`, {
      body: { name: "Renamed", client_metadata: { b: null, c: "3" }, organization_usage: null, callbacks: ["https://b.example/cb"] },
    });
    expect(res.status).toBe(200);
    const patched = await json<ClientBody>(res);
    expect(patched).toMatchObject({ name: "Renamed", client_metadata: { a: "1", c: "3" }, callbacks: ["https://b.example/cb"] });
    expect(patched.organization_usage).toBeUndefined();
    expect(patched.client_secret).toBe(client.client_secret);
    expect(await json(await mgmt("GET", `/clients/${client.client_id}`))).toEqual(patched);
    await expectStatus(await mgmt("PATCH", `/clients/${client.client_id}`, { body: { client_id: "other" } }), 400, /Additional properties/);
    await expectStatus(await mgmt("PATCH", "/clients/no-such-client", { body: { name: "x" } }), 404);
  });

  it("gives a public client a secret when it switches to a secret-based method", async () => {
    const spa = await createClient({ app_type: "spa" });
    const patched = await json<ClientBody>(await mgmt("PATCH", `/clients/${spa.client_id}`, { body: { token_endpoint_auth_method: "client_secret_post" } }));
    expect(patched.token_endpoint_auth_method).toBe("client_secret_post");
    expect(patched.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("rotate-secret takes effect at /oauth/token at once: the new secret works, the old one is invalid_client", async () => {
    const api = await createApi(["read:things"]);
    const client = await createClient({ app_type: "non_interactive" });
    await grantClient(client.client_id, api.identifier, ["read:things"]);
    expect((await ccFor(client, api.identifier)).status).toBe(200);

    const res = await mgmt("POST", `/clients/${client.client_id}/rotate-secret`);
    expect(res.status).toBe(200);
    const rotated = await json<ClientBody>(res);
    expect(rotated.client_secret).not.toBe(client.client_secret);
    const old = await ccFor(client, api.identifier);
    expect(old.status).toBe(401);
    expect((await json(old)).error).toBe("invalid_client");
    expect((await ccFor(rotated, api.identifier)).status).toBe(200);
    await expectStatus(await mgmt("POST", "/clients/no-such-client/rotate-secret"), 404);
  });

  it("deletes a client and its grants: 204, then 404, and its tokens stop", async () => {
    const api = await createApi();
    const client = await createClient({ app_type: "non_interactive" });
    const grant = await grantClient(client.client_id, api.identifier, ["read:things"]);
    expect((await mgmt("DELETE", `/clients/${client.client_id}`)).status).toBe(204);
    await expectStatus(await mgmt("GET", `/clients/${client.client_id}`), 404);
    await expectStatus(await mgmt("DELETE", `/clients/${client.client_id}`), 404);
    expect((await ccFor(client, api.identifier)).status).toBe(401);
    const grants = await json<{ id: string }[]>(await mgmt("GET", `/client-grants?audience=${encodeURIComponent(api.identifier)}`));
    expect(grants.map((g) => g.id)).not.toContain(grant.id);
  });

  it("refuses to delete or rotate the system client (400) and it keeps working", async () => {
    await expectStatus(await mgmt("DELETE", `/clients/${CP.clientId}`), 400, /system client/);
    await expectStatus(await mgmt("POST", `/clients/${CP.clientId}/rotate-secret`), 400);
    expect((await mgmt("GET", `/clients/${CP.clientId}`)).status).toBe(200);
  });

  it("refuses grant-type or auth-method changes that would lock the control plane out; other fields may change", async () => {
    await expectStatus(await mgmt("PATCH", `/clients/${CP.clientId}`, { body: { grant_types: ["authorization_code"] } }), 400, /grant_types/);
    await expectStatus(await mgmt("PATCH", `/clients/${CP.clientId}`, { body: { token_endpoint_auth_method: "none" } }), 400, /token_endpoint_auth_method/);
    expect((await mgmt("PATCH", `/clients/${CP.clientId}`, { body: { description: "the deployment's own client" } })).status).toBe(200);
    // Still able to get a management token.
    expect((await token({ grant_type: "client_credentials", client_id: CP.clientId, client_secret: CP.clientSecret, audience: CP.audience })).status).toBe(200);
  });
});

describe("clients API: tenants and connections", () => {
  it("keeps each tenant's clients apart", async () => {
    const child = await createTenant();
    const target = { headers: { "tenant-id": child } };
    const client = await createClient({ name: "Child app" }, target);
    expect((await mgmt("GET", `/clients/${client.client_id}`, target)).status).toBe(200);
    expect((await mgmt("GET", `/clients/${client.client_id}`)).status).toBe(404);
    const childList = await json<ClientBody[]>(await mgmt("GET", "/clients", target));
    expect(childList.map((c) => c.client_id)).toEqual([client.client_id]);
    expect((await json<ClientBody>(await mgmt("GET", `/clients/${client.client_id}`, target))).tenant).toBe(child);
  });

  it("offers every connection by default, then the ordered list it is given (unknown ids dropped)", async () => {
    const child = await createTenant();
    const target = { headers: { "tenant-id": child } };
    const client = await createClient({}, target);
    const all = await json<{ enabled_connections: { connection_id: string; connection: { name: string; strategy: string } }[] }>(
      await mgmt("GET", `/clients/${client.client_id}/connections`, target),
    );
    expect(all.enabled_connections.map((e) => e.connection)).toMatchObject([{ name: "Username-Password-Authentication", strategy: "auth0" }]);
    const database = all.enabled_connections[0]?.connection_id;

    const created = await mgmt("POST", "/connections", { body: { name: "google-oauth2", strategy: "google-oauth2" }, ...target });
    const google = (await json<{ id: string }>(created)).id;
    const res = await mgmt("PATCH", `/clients/${client.client_id}/connections`, { body: [google, "con_unknown", database, google], ...target });
    expect(res.status).toBe(200);
    const expected = [
      { connection_id: google, connection: { id: google, name: "google-oauth2", strategy: "google-oauth2" } },
      { connection_id: database, connection: { id: database, name: "Username-Password-Authentication", strategy: "auth0" } },
    ];
    expect((await json(res)).enabled_connections).toEqual(expected);
    expect((await json(await mgmt("GET", `/clients/${client.client_id}/connections`, target))).enabled_connections).toEqual(expected);
    // The stored order is not a client field.
    expect(await json(await mgmt("GET", `/clients/${client.client_id}`, target))).not.toHaveProperty("enabled_connections");
    await expectStatus(await mgmt("PATCH", `/clients/${client.client_id}/connections`, { body: { ids: [google] }, ...target }), 400);
    await expectStatus(await mgmt("GET", "/clients/no-such-client/connections", target), 404);
  });
});

describe("management OpenAPI document", () => {
  it("documents the new routes with their scopes and request bodies", async () => {
    const doc = await json<{ paths: Record<string, Record<string, { "x-scope": string; requestBody?: unknown }>> }>(await mgmt("GET", "/spec"));
    const scope = (path: string, method: string) => doc.paths[path]?.[method]?.["x-scope"];
    expect(scope("/clients", "post")).toBe("create:clients");
    expect(scope("/clients/{id}/rotate-secret", "post")).toBe("update:client_keys");
    expect(scope("/clients/{id}/connections", "patch")).toBe("update:connections");
    expect(scope("/resource-servers/{id}", "delete")).toBe("delete:resource_servers");
    expect(scope("/client-grants", "get")).toBe("read:client_grants");
    expect(scope("/branding", "patch")).toBe("update:branding");
    expect(doc.paths["/clients"]?.post?.requestBody).toBeDefined();
  });
});
