import { Management, ManagementClient, ManagementError, TokenProvider } from "auth0";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localFetch, type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { MANAGEMENT_AUDIENCE, sdkApiBase, sdkOptions } from "./helpers/auth0";

/**
 * The foundation, driven by real clients against a running `wrangler dev`: the reference platform's Node SDK
 * (`auth0` 7.1.0) for tokens and the management API, and `jose` for verifying what we issue.
 *
 * Mechanisms used from the SDK (see helpers/auth0.ts for how its base URL is pointed at plain http):
 * - `TokenProvider` (exported by `auth0`): the SDK's own client_credentials grant against /oauth/token.
 * - `ManagementClient` with clientId/clientSecret: it fetches and caches its own token the same way.
 * - `ManagementClient.fetch(path, init)`: the SDK's passthrough ("endpoints not yet supported in the SDK").
 *   The SDK has no typed tenants create/list (its `tenants` resource only has `settings`), so creating and
 *   listing tenants goes through it: SDK auth header, base URL, telemetry header and retries apply, but it
 *   returns the raw Response and does NOT turn error statuses into SDK errors, so the duplicate-tenant 409 is
 *   asserted on that Response.
 * - Typed SDK calls (`tenants.settings.get()`) are used where the SDK's own error parsing is under test: they
 *   throw `ManagementError` subclasses with the status and our parsed JSON body.
 */
describe("foundation through the auth0 Node SDK", () => {
  let server: RunningServer;
  let management: ManagementClient;
  const tenantId = `e2e-${Date.now().toString(36)}`;

  beforeAll(async () => {
    server = await startServer();
    management = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("issues a management token to the SDK's client_credentials TokenProvider that verifies against our JWKS", async () => {
    const provider = new TokenProvider({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const token = await provider.getAccessToken();

    expect(decodeProtectedHeader(token).alg).toBe("RS256");
    const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", server.baseUrl));
    const { payload } = await jwtVerify(token, jwks, { issuer: `${server.baseUrl}/`, audience: MANAGEMENT_AUDIENCE });
    expect(payload.iss).toBe(server.issuer);
    expect(typeof payload.exp).toBe("number");
    expect(String(payload.scope).split(" ")).toEqual(expect.arrayContaining(["create:tenants", "read:tenants"]));
  });

  it("advertises the same issuer and JWKS in discovery", async () => {
    const res = await fetch(`${server.baseUrl}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const discovery = (await res.json()) as { issuer: string; jwks_uri: string; token_endpoint: string };
    expect(discovery.issuer).toBe(server.issuer);
    expect(discovery.jwks_uri).toBe(`${server.baseUrl}/.well-known/jwks.json`);
    expect(discovery.token_endpoint).toBe(`${server.baseUrl}/oauth/token`);
  });

  it("creates a tenant through the SDK's passthrough request with the SDK's own token", async () => {
    const res = await management.fetch("/tenants", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: tenantId, name: "E2E tenant", friendly_name: "E2E Tenant" }),
    });
    expect(res.status).toBe(201);
    const tenant = (await res.json()) as { id: string; name: string; friendly_name: string };
    expect(tenant).toMatchObject({ id: tenantId, name: "E2E tenant", friendly_name: "E2E Tenant" });
  });

  it("serves the new tenant on its own host with its own issuer and signing keys", async () => {
    const tenantBase = `http://${tenantId}.localhost:${server.port}`;
    const res = await localFetch(`${tenantBase}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const discovery = (await res.json()) as { issuer: string; jwks_uri: string };
    expect(discovery.issuer).toBe(`${tenantBase}/`);

    const kids = async (url: string) => ((await (await localFetch(url)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    const tenantKids = await kids(discovery.jwks_uri);
    const controlPlaneKids = await kids(`${server.baseUrl}/.well-known/jwks.json`);
    expect(tenantKids.length).toBeGreaterThan(0);
    expect(tenantKids.filter((kid) => controlPlaneKids.includes(kid))).toEqual([]);
  });

  it("lists tenants as a plain array and with Auth0-style totals", async () => {
    const plain = await management.fetch("/tenants");
    expect(plain.status).toBe(200);
    const tenants = (await plain.json()) as Array<{ id: string }>;
    expect(tenants.map((t) => t.id)).toContain(tenantId);

    // Absolute URL on the SDK's own base: a relative "/tenants?..." would have its "?" percent-encoded.
    const paged = await management.fetch(`${sdkApiBase(server)}/tenants?page=0&per_page=1&include_totals=true`);
    expect(paged.status).toBe(200);
    const page = (await paged.json()) as { tenants: unknown[]; start: number; limit: number; length: number; total: number };
    expect(page).toMatchObject({ start: 0, limit: 1, length: 1 });
    expect(page.tenants).toHaveLength(1);
    expect(page.total).toBeGreaterThanOrEqual(2); // the control plane and ours
  });

  it("reads the created tenant back by id", async () => {
    const res = await management.fetch(`/tenants/${tenantId}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: tenantId, friendly_name: "E2E Tenant" });
  });

  it("answers a duplicate tenant with 409 in the error shape the SDK parses", async () => {
    const res = await management.fetch("/tenants", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: tenantId, name: "again" }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ statusCode: 409, error: "Conflict", message: expect.any(String), errorCode: expect.any(String) });
  });

  it("surfaces a failing typed SDK call as the SDK's ManagementError with our status and body", async () => {
    // An unknown client id: the server answers 404 inexistent_client.
    const error = await management.clients.get("no-such-client").then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ManagementError);
    const managementError = error as ManagementError;
    expect(managementError.statusCode).toBe(404);
    expect(managementError.body).toMatchObject({ statusCode: 404, error: "Not Found", message: expect.any(String), errorCode: "inexistent_client" });
    // A route the reference offers and Gatehouse does not: 403 feature_not_enabled, so walkers skip it.
    const notOffered = await management.rules.list().then(
      () => null,
      (e: unknown) => e,
    );
    expect((notOffered as ManagementError).statusCode).toBe(403);
    expect((notOffered as ManagementError).body).toMatchObject({ statusCode: 403, error: "Forbidden", errorCode: "feature_not_enabled" });
  });

  it("reads and updates the tenant settings through the SDK (default_signing_alg is Gatehouse's)", async () => {
    const before = await management.tenants.settings.get();
    expect((before as Record<string, unknown>).default_signing_alg).toBe("RS256");
    await management.tenants.settings.update({ default_audience: "urn:e2e:default" });
    expect((await management.tenants.settings.get()).default_audience).toBe("urn:e2e:default");
  });

  it("surfaces a typed 401 from the SDK when its own token request is refused", async () => {
    const wrong = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: "not-the-secret" });
    const error = await wrong.tenants.settings.get().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ManagementError);
    expect((error as ManagementError).statusCode).toBe(401);
    expect((error as ManagementError).body).toMatchObject({ error: "invalid_client" });
  });

  it("surfaces a rejected bearer token as the SDK's typed ForbiddenError (SPEC: invalid token is 403)", async () => {
    const forged = new ManagementClient({ ...sdkOptions(server), token: "not-a-jwt" });
    const error = await forged.tenants.settings.get().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Management.ForbiddenError);
    expect((error as ManagementError).statusCode).toBe(403);
    expect((error as ManagementError).body).toMatchObject({ errorCode: "invalid_token" });
  });
});
