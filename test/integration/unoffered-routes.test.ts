import { seedUser } from "../helpers/flows";
import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt } from "../helpers/api";
import { tenantManagementToken } from "../helpers/management";
import { mintWithTenantKey } from "../helpers/mint";
import { expectError } from "../helpers/roles";

/**
 * Routes of the reference platform that Gatehouse does not offer answer 403 feature_not_enabled, not 404
 * (issue 9 point 8), so tools that walk every resource type skip them; real routes still answer as before.
 */

/** The resource types the reference platform's deploy CLI reads that this service does not offer. */
const WALK = [
  "/rules",
  "/prompts/rendering",
  "/rules-configs",
  "/hooks/hk_x/secrets",
  "/anomaly/blocks/ips/203.0.113.7",
  "/migrations",
  "/network-acls",
  "/user-attribute-profiles",
  "/connection-profiles",
  "/token-exchange-profiles",
  "/device-credentials",
  "/blacklists/tokens",
];

/**
 * Issue 28 point 2: reads whose true answer is "none", in what the reference platform answers on a tenant
 * without any and what auth0-deploy-cli's handler for each tolerates (src/worker/management/unoffered.ts
 * names the handler beside each row): 200 with nothing in it, or 404 where the handler reads 404 as none.
 */
const NONE: [path: string, status: number, body: unknown][] = [
  ["/branding/phone/providers", 200, { providers: [] }],
  ["/branding/phone/templates", 200, { templates: [] }],
  ["/forms?page=0&per_page=50&include_totals=true", 200, { start: 0, limit: 50, total: 0, forms: [] }],
  ["/forms", 200, []],
  ["/flows?page=0&per_page=100&include_totals=true", 200, { start: 0, limit: 100, total: 0, flows: [] }],
  ["/flows/vault/connections?page=0&per_page=50&include_totals=true", 200, { start: 0, limit: 50, total: 0, connections: [] }],
  ["/self-service-profiles?page=0&per_page=50&include_totals=true", 200, { start: 0, limit: 50, total: 0, self_service_profiles: [] }],
  ["/event-streams?take=50", 200, { eventStreams: [] }],
];

describe("routes the service does not offer", () => {
  it("a deploy-CLI-style walk gets 403 feature_not_enabled on each unoffered resource type, not 404", async () => {
    const tenant = await createTenant();
    const token = await tenantManagementToken(tenant, ["read:clients"]);
    for (const path of WALK) {
      await expectError(await mgmt("GET", path, { token }), 403, "feature_not_enabled", /not enabled/);
    }
    for (const [method, path] of [["POST", "/rules"], ["PATCH", "/rules/rul_1"], ["DELETE", "/rules-configs/key"], ["PUT", "/rules-configs/key"], ["POST", "/flows"]] as const) {
      await expectError(await mgmt(method, path, { token, body: {} }), 403, "feature_not_enabled");
    }
    const body = (await (await mgmt("GET", "/rules", { token })).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ statusCode: 403, error: "Forbidden", errorCode: "feature_not_enabled", message: 'The feature "rules" is not enabled on this tenant' });
  });

  it("reads whose true answer is none answer it as the reference does; writes there stay 403, never a scope error", async () => {
    const tenant = await createTenant();
    const token = await tenantManagementToken(tenant, ["read:clients"]);
    for (const [path, status, body] of NONE) {
      const res = await mgmt("GET", path, { token });
      expect(res.status, path).toBe(status);
      const json = (await res.json()) as unknown;
      if (Array.isArray(body) || Object.keys(body as object).length === 0) expect(json, path).toEqual(body);
      else expect(json, path).toMatchObject(body as object);
      expect(JSON.stringify(json), path).not.toMatch(/Insufficient scope/);
    }
    for (const [method, path] of [
      ["POST", "/branding/phone/providers"],
      ["POST", "/forms"],
      ["POST", "/flows/vault/connections"],
      ["POST", "/self-service-profiles"],
      ["POST", "/event-streams"],
    ] as const) {
      await expectError(await mgmt(method, path, { token, body: {} }), 403, "feature_not_enabled", /not enabled/);
    }
    // No token is still 401 on a read answered "none".
    await expectError(await mgmt("GET", "/forms", { token: "", headers: { "tenant-id": tenant } }), 401, "missing_token");
  });

  it("no token is still 401, and a user's token 403", async () => {
    const tenant = await createTenant();
    for (const path of ["/rules", "/stats/daily", "/organizations"]) {
      await expectError(await mgmt("GET", path, { token: "", headers: { "tenant-id": tenant } }), 401, "missing_token");
      await expectError(await mgmt("GET", path, { token: "not-a-jwt", headers: { "tenant-id": tenant } }), 403, "invalid_token");
    }
    // The user exists: management auth refuses a user token whose user is gone or blocked (issue 25 finding 5).
    const user = await seedUser(tenant, `unoffered-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const userToken = await mintWithTenantKey(tenant, { iss: `http://${tenant}.localhost:8787/`, aud: CP.audience, scope: "read:current_user", sub: user.user_id, gty: "password" });
    await expectError(await mgmt("GET", "/rules", { token: userToken }), 403, "feature_not_enabled");
  });

  it("real routes keep answering: webhook hooks, tenants, branding, attack protection, and unknown paths stay 404", async () => {
    const tenant = await createTenant();
    const asTenant = { headers: { "tenant-id": tenant } };
    expect((await mgmt("GET", "/hooks", asTenant)).status).toBe(200);
    expect((await mgmt("GET", "/hooks/hk_missing", asTenant)).status).toBe(404);
    expect((await mgmt("GET", `/tenants/${tenant}`)).status).toBe(200);
    expect((await mgmt("GET", "/branding", asTenant)).status).toBe(200);
    expect((await mgmt("GET", "/attack-protection/brute-force-protection", asTenant)).status).toBe(200);
    expect((await mgmt("GET", "/roles", asTenant)).status).toBe(200);
    // Email templates are served (issue 29 point 4): a template never created is 404, not 403.
    await expectError(await mgmt("GET", "/email-templates/verify_email", asTenant), 404, "inexistent_email_template");
    await expectError(await mgmt("GET", "/no-such-resource", asTenant), 404);
  });
});
