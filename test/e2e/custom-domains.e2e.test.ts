import { randomBytes } from "node:crypto";
import { ManagementClient } from "auth0";
import { createLocalJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { MANAGEMENT_AUDIENCE, sdkOptions } from "./helpers/auth0";
import { type CallbackServer, startCallbackServer } from "./helpers/browser";
import { domainFetch } from "./helpers/domain-fetch";
import { loginOnDomain } from "./helpers/domain-login";

/**
 * Custom domains end to end (issue 15): the control plane creates a tenant and claims a custom domain for it
 * with the `auth0` SDK; Chromium resolves that domain to 127.0.0.1 (a host-resolver MAP rule) and logs a user
 * in through it; openid-client discovers the domain as its own OpenID provider and redeems the code; `jose`
 * checks that every token carries the domain's issuer. A child tenant's token is refused on another tenant.
 */

const random = () => randomBytes(5).toString("hex");

describe("a tenant on its custom domain: auth0 SDK, Chromium, openid-client, jose", () => {
  let server: RunningServer;
  let callbacks: CallbackServer;
  let admin: ManagementClient;
  const tenant = `cd-${random()}`;
  const domain = `login.${random()}.example.test`;
  let customDomainId: string;
  /** Per-request options of the SDK that target the tenant (the `tenant-id` header, SPEC §4). */
  const onTenant = { headers: { "tenant-id": tenant } };
  let failed = false;

  async function controlPlaneToken(): Promise<string> {
    const res = await fetch(`${server.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: server.clientId, client_secret: server.clientSecret, audience: MANAGEMENT_AUDIENCE }),
    });
    return ((await res.json()) as { access_token: string }).access_token;
  }

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    callbacks = await startCallbackServer();
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const created = await fetch(`${server.baseUrl}/api/v2/tenants`, {
      method: "POST",
      headers: { authorization: `Bearer ${await controlPlaneToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ id: tenant, name: `Tenant ${tenant}` }),
    });
    expect(created.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await callbacks?.close().catch(() => undefined);
    if (failed && server) process.stderr.write(`\n--- wrangler output (custom-domains.e2e) ---\n${server.log()}\n`);
    await server?.stop();
  }, 60_000);

  it("the control plane claims a domain for the tenant with the auth0 SDK, verifies it and lists it", async () => {
    try {
      const created = await admin.customDomains.create({ domain, type: "auth0_managed_certs", tenant_id: tenant } as Parameters<typeof admin.customDomains.create>[0]);
      expect(created).toMatchObject({ domain, type: "auth0_managed_certs", primary: true, verification: { methods: [expect.objectContaining({ name: "cname" })] } });
      customDomainId = created.custom_domain_id;
      const verified = await admin.customDomains.verify(customDomainId);
      expect(verified).toMatchObject({ custom_domain_id: customDomainId, status: "ready" });
      const listed = await admin.customDomains.list({}, onTenant);
      expect(listed.map((d) => d.domain)).toEqual([domain]);
      // Claimed once: the same name in another case is a 409 for anyone.
      await expect(admin.customDomains.create({ domain: domain.toUpperCase(), type: "self_managed_certs" })).rejects.toMatchObject({ statusCode: 409 });
    } catch (error) {
      failed = true;
      throw error;
    }
  });

  it("logs a user in through the custom domain: discovery, the login page, the code and every token name the domain as issuer", async () => {
    try {
      const redirectUri = `${callbacks.origin}/callback`;
      const app = await admin.clients.create(
        { name: "Custom Domain App", app_type: "regular_web", callbacks: [redirectUri], grant_types: ["authorization_code"], token_endpoint_auth_method: "client_secret_post" },
        onTenant,
      );
      const user = { email: `cd-${random()}@example.com`, password: `Correct-Horse-${random()}` };
      await admin.users.create({ connection: "Username-Password-Authentication", email: user.email, password: user.password }, onTenant);

      const { origin, issuer, config, loginUrl, requested, tokens, jwks: jwksDoc, nonce } = await loginOnDomain({
        domain,
        port: server.port,
        clientId: app.client_id as string,
        clientSecret: app.client_secret as string,
        callbacks,
        redirectUri,
        ...user,
      });
      expect(config.serverMetadata()).toMatchObject({ issuer, authorization_endpoint: `${origin}/authorize`, jwks_uri: `${origin}/.well-known/jwks.json` });
      expect(loginUrl.host).toBe(`${domain}:${server.port}`);
      expect(loginUrl.pathname).toBe("/u2/login");
      // The whole login stayed on the custom domain (and the loopback callback).
      for (const r of requested) expect([domain, "127.0.0.1"]).toContain(new URL(r).hostname);

      // jose verifies the ID token against the JWKS the custom domain publishes, with the domain's issuer.
      expect(jwksDoc.keys.length).toBeGreaterThan(0);
      const { payload } = await jwtVerify(tokens.id_token as string, createLocalJWKSet(jwksDoc), { issuer, audience: app.client_id as string });
      expect(payload).toMatchObject({ iss: issuer, email: user.email, nonce });
    } catch (error) {
      failed = true;
      throw error;
    }
  });

  it("without a port the domain's issuer is https://<domain>/ (SPEC §5.6)", async () => {
    const res = await domainFetch(domain)(`http://${domain}:${server.port}/.well-known/openid-configuration`, { headers: { "x-forwarded-host": domain } });
    expect(((await res.json()) as { issuer: string }).issuer).toBe(`https://${domain}/`);
  });

  it("a child tenant's token never reads or creates other tenants, with the SPEC's message", async () => {
    const cp = await controlPlaneToken();
    const other = `cd-${random()}`;
    await fetch(`${server.baseUrl}/api/v2/tenants`, { method: "POST", headers: { authorization: `Bearer ${cp}`, "content-type": "application/json" }, body: JSON.stringify({ id: other }) });
    const m2m = await admin.clients.create({ name: "child m2m", app_type: "non_interactive", grant_types: ["client_credentials"] }, onTenant);
    await admin.clientGrants.create({ client_id: m2m.client_id as string, audience: MANAGEMENT_AUDIENCE, scope: ["read:tenants", "create:tenants", "read:custom_domains"] }, onTenant);
    const tokenRes = await domainFetch(domain)(`http://${domain}:${server.port}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret, audience: MANAGEMENT_AUDIENCE }),
    });
    const childToken = ((await tokenRes.json()) as { access_token: string }).access_token;
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/api/v2${path}`, { ...init, headers: { authorization: `Bearer ${childToken}`, "content-type": "application/json", ...(init.headers as Record<string, string>) } });
    const read = await call(`/tenants/${other}`);
    expect(read.status).toBe(403);
    expect(((await read.json()) as { message: string }).message).toBe("Cross-tenant management requires a control-plane token");
    expect((await call("/custom-domains", { headers: { "tenant-id": other } })).status).toBe(403);
    expect((await call("/tenants", { method: "POST", body: JSON.stringify({ id: `x-${random()}` }) })).status).toBe(403);
  });
});
