import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";
import { seedClient, type TestClient, tokenForm } from "../helpers/flows";

/**
 * Security review (review5): a client grant's organization_usage (set through /client-grants and the
 * organizations' client-grants routes) was stored but never read by the token endpoint. A grant an
 * administrator marked `require` ("only with an organization") still gave the client a token without any
 * org_id, which an API that scopes data by org_id reads as unrestricted; a request naming an organization
 * got a token that did not carry it. Gatehouse issues no organization-bound client credentials, so both are
 * now refused with the OAuth error shape.
 */

const API = "https://orders.grant-org.example/";
let tenant: string;
let host: string;
let client: TestClient;
let grantId: string;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  const as = { headers: { "tenant-id": tenant } };
  expect((await mgmt("POST", "/resource-servers", { ...as, body: { identifier: API, name: "Orders", scopes: [{ value: "read:orders", description: "Read" }] } })).status).toBe(201);
  client = await seedClient(tenant, { grant_types: ["client_credentials"] });
  const grant = await mgmt("POST", "/client-grants", { ...as, body: { client_id: client.client_id, audience: API, scope: ["read:orders"], organization_usage: "require", allow_any_organization: true } });
  expect(grant.status, await grant.clone().text()).toBe(201);
  grantId = ((await grant.json()) as { id: string }).id;
});

const exchange = (extra: Record<string, string> = {}) =>
  tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: API, ...extra }, {}, host);

describe("client credentials and a grant's organization_usage", () => {
  it("a grant that requires an organization gives no token without one", async () => {
    const res = await exchange();
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe("access_denied");
    expect(body.error_description).toContain("organization_usage: require");
  });

  it("a request naming an organization is refused, never answered with a token that lacks it", async () => {
    const allow = await mgmt("PATCH", `/client-grants/${grantId}`, { headers: { "tenant-id": tenant }, body: { organization_usage: "allow" } });
    expect(allow.status).toBe(200);
    const named = await exchange({ organization: "org_abc123" });
    expect(named.status).toBe(400);
    expect(((await named.json()) as { error: string }).error).toBe("invalid_request");
    // Without one, an `allow` grant answers as before.
    const plain = await exchange();
    expect(plain.status).toBe(200);
    const token = ((await plain.json()) as { access_token: string }).access_token;
    expect(decodeJwt(token)).toMatchObject({ aud: API, scope: "read:orders" });
    expect(decodeJwt(token).org_id).toBeUndefined();
  });
});
