import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient } from "../helpers/flows";

/**
 * Issue 33 point 5: the `iss` authorization response parameter (RFC 9207), so that a client talking to
 * several servers can tell which one answered (mix-up attacks): on codes, tokens and errors alike.
 */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let client: TestClient;
let cookie: string;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant);
  const user = await seedUser(tenant, `iss-${crypto.randomUUID().slice(0, 8)}@example.com`);
  cookie = await sessionCookie(tenant, user.user_id, client.client_id);
});

describe("iss in authorization responses (RFC 9207)", () => {
  it("is advertised in discovery", async () => {
    const doc = (await (await call("/.well-known/openid-configuration", { host })).json()) as Record<string, unknown>;
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
  });

  it("names the tenant's issuer beside a code in the query", async () => {
    const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "s" }, { cookie, host });
    const { query } = redirectParams(res);
    expect(query.get("code")).toBeTruthy();
    expect(query.get("iss")).toBe(`http://${host}/`);
  });

  it("names it in the fragment beside tokens, and on an error sent to the redirect_uri", async () => {
    const implicit = await authorize(
      { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "id_token", scope: "openid", nonce: "n", state: "s" },
      { cookie, host },
    );
    expect(redirectParams(implicit).fragment.get("iss")).toBe(`http://${host}/`);
    const refused = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", prompt: "none", max_age: "x" }, { host });
    const { query } = redirectParams(refused);
    expect(query.get("error")).toBe("invalid_request");
    expect(query.get("iss")).toBe(`http://${host}/`);
  });
});
