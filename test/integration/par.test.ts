import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, seedClient, seedUser, tokenForm, type TestClient } from "../helpers/flows";
import { csrfOf, TestBrowser } from "../helpers/mfa";

/**
 * Issue 33 point 2: pushed authorization requests (RFC 9126). The client pushes its authorization request to
 * POST /oauth/par (authenticated), gets a single-use `request_uri` valid 60 s and bound to it, and sends the
 * browser to /authorize with only client_id and request_uri. A client may be required to do so.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
const URI_FORM = /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/;
let tenant: string;
let host: string;
let client: TestClient;
let other: TestClient;
let email: string;

afterEach(() => setClock());

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant);
  other = await seedClient(tenant);
  email = `par-${crypto.randomUUID().slice(0, 8)}@example.com`;
  await seedUser(tenant, email, PASSWORD);
});

const par = (params: Record<string, string>, who: TestClient | null = client) =>
  call("/oauth/par", {
    method: "POST",
    host,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...(who ? { client_id: who.client_id, client_secret: who.client_secret } : {}), ...params }).toString(),
  });

const codeRequest = (state = "s1") => ({ response_type: "code", redirect_uri: CALLBACK, scope: "openid email", state });

async function pushed(who: TestClient = client, params: Record<string, string> = codeRequest()): Promise<string> {
  const res = await par(params, who);
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { request_uri: string }).request_uri;
}

describe("POST /oauth/par", () => {
  it("answers 201 with a request_uri of the RFC's form and expires_in 60, uncached; discovery names the endpoint", async () => {
    const res = await par(codeRequest());
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toContain("no-store");
    const body = (await res.json()) as { request_uri: string; expires_in: number };
    expect(body.request_uri).toMatch(URI_FORM);
    expect(body.expires_in).toBe(60);
    const discovery = (await (await call("/.well-known/openid-configuration", { host })).json()) as Record<string, unknown>;
    expect(discovery.pushed_authorization_request_endpoint).toBe(`http://${host}/oauth/par`);
    expect(discovery.require_pushed_authorization_requests).toBe(false);
  });

  it("requires client authentication", async () => {
    const none = await par({ client_id: client.client_id, ...codeRequest() }, null);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: "invalid_client" });
    const wrong = await par({ client_id: client.client_id, client_secret: "wrong", ...codeRequest() }, null);
    expect(wrong.status).toBe(401);
  });

  it("validates the pushed request as /authorize would, answering the RFC's error as JSON, never a 5xx", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ ...codeRequest(), redirect_uri: "https://evil.example.com/cb" }, "invalid_request"],
      [{ redirect_uri: CALLBACK, scope: "openid" }, "invalid_request"],
      [{ ...codeRequest(), response_type: "bogus" }, "unsupported_response_type"],
      [{ ...codeRequest(), request_uri: "urn:ietf:params:oauth:request_uri:x" }, "invalid_request"],
      [{ ...codeRequest(), max_age: "-1" }, "invalid_request"],
    ];
    for (const [params, error] of cases) {
      const res = await par(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(await res.json()).toMatchObject({ error });
    }
    const garbage = await call("/oauth/par", { method: "POST", host, headers: { "content-type": "application/json" }, body: "{not json" });
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ error: "invalid_request" });
  });
});

describe("/authorize with request_uri", () => {
  it("runs the pushed request: the login answers the pushed redirect_uri and state, and the code redeems", async () => {
    const requestUri = await pushed(client, codeRequest("pushed-state"));
    // Query parameters beside client_id and request_uri are ignored (RFC 9126 §4).
    const res = await authorize({ client_id: client.client_id, request_uri: requestUri, state: "ignored" }, { host });
    expect(res.status).toBe(302);
    const browser = new TestBrowser(host);
    const location = res.headers.get("location") ?? "";
    expect(location).toMatch(/^\/u2\/login\?state=/);
    const page = await browser.get(location);
    const done = await browser.post(location, { _csrf: csrfOf(await page.text()), email, password: PASSWORD });
    const answer = new URL(done.headers.get("location") ?? "");
    expect(answer.origin + answer.pathname).toBe(CALLBACK);
    expect(answer.searchParams.get("state")).toBe("pushed-state");
    const code = answer.searchParams.get("code") ?? "";
    const tokens = await tokenForm(
      { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      host,
    );
    expect(tokens.status).toBe(200);
  });

  it("uses a request_uri once", async () => {
    const requestUri = await pushed();
    expect((await authorize({ client_id: client.client_id, request_uri: requestUri }, { host })).status).toBe(302);
    const again = await authorize({ client_id: client.client_id, request_uri: requestUri }, { host });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_request_uri" });
  });

  it("refuses a request_uri after its 60 seconds", async () => {
    const requestUri = await pushed();
    const later = Date.now() + 61_000;
    setClock(() => later);
    const res = await authorize({ client_id: client.client_id, request_uri: requestUri }, { host });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request_uri" });
  });

  it("refuses another client's request_uri, which stays usable by its own client", async () => {
    const requestUri = await pushed(client);
    const foreign = await authorize({ client_id: other.client_id, request_uri: requestUri }, { host });
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ error: "invalid_request_uri" });
    expect((await authorize({ client_id: client.client_id, request_uri: requestUri }, { host })).status).toBe(302);
  });

  it("answers malformed references directly with 400, never a redirect nor a 5xx", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ client_id: client.client_id, request_uri: "https://attacker.example.com/request.jwt" }, "invalid_request_uri"],
      [{ client_id: client.client_id, request_uri: "urn:ietf:params:oauth:request_uri:unknown" }, "invalid_request_uri"],
      [{ request_uri: "urn:ietf:params:oauth:request_uri:unknown" }, "invalid_request"],
      [{ client_id: "nobody", request_uri: "urn:ietf:params:oauth:request_uri:unknown" }, "invalid_request"],
    ];
    for (const [params, error] of cases) {
      const res = await authorize(params, { host });
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(await res.json()).toMatchObject({ error });
    }
  });
});

describe("require_pushed_authorization_requests", () => {
  it("is a client setting of the management API, and /authorize then refuses requests that were not pushed", async () => {
    const created = await mgmt("POST", "/clients", {
      headers: { "tenant-id": tenant },
      body: { name: "PAR only", callbacks: [CALLBACK], token_endpoint_auth_method: "client_secret_post", require_pushed_authorization_requests: true },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const app = (await created.json()) as { client_id: string; client_secret: string; require_pushed_authorization_requests: boolean };
    expect(app.require_pushed_authorization_requests).toBe(true);
    const parOnly = { client_id: app.client_id, client_secret: app.client_secret };

    const plain = await authorize({ client_id: app.client_id, ...codeRequest() }, { host });
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ error: "invalid_request" });
    const requestUri = await pushed(parOnly);
    expect((await authorize({ client_id: app.client_id, request_uri: requestUri }, { host })).status).toBe(302);

    const patched = await mgmt("PATCH", `/clients/${app.client_id}`, { headers: { "tenant-id": tenant }, body: { require_pushed_authorization_requests: false } });
    expect(patched.status).toBe(200);
    expect((await authorize({ client_id: app.client_id, ...codeRequest() }, { host })).status).toBe(302);
    const invalid = await mgmt("PATCH", `/clients/${app.client_id}`, { headers: { "tenant-id": tenant }, body: { require_pushed_authorization_requests: "yes" } });
    expect(invalid.status).toBe(400);
  });
});
