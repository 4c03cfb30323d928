import { createExecutionContext, env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/worker/app";
import type { CustomDomainRecord } from "../../src/shared/types";
import { BASE, CP, call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, tokenForm } from "../helpers/flows";
import { tenantManagementToken } from "../helpers/management";
import { expectRefusals, reachKit } from "../helpers/route-reach";

const platform = () => env.PLATFORM.getByName("platform");
const MANAGEMENT = "urn:gatehouse:management";

/** Claims a domain for a tenant through the control plane (POST with tenant_id). */
async function claim(tenant: string, domain = `login.${uniqueId("d")}.example.test`, type = "auth0_managed_certs") {
  const res = await mgmt("POST", "/custom-domains", { body: { tenant_id: tenant, domain, type } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as CustomDomainRecord;
}

const issuerOn = async (host: string, headers: Record<string, string> = {}) => {
  const res = await call("/.well-known/openid-configuration", { host, headers });
  return { status: res.status, body: (await res.json()) as { issuer?: string; jwks_uri?: string; error_description?: string } };
};

describe("custom domains: the reference platform's shapes (issue 15 point 1)", () => {
  it("POST answers 201 with custom_domain_id, the lowercased domain, primary, status, type and verification methods", async () => {
    const tenant = await createTenant();
    const domain = `Login.${uniqueId("shape")}.Example.TEST`;
    const res = await mgmt("POST", "/custom-domains", { body: { tenant_id: tenant, domain, type: "auth0_managed_certs" } });
    expect(res.status).toBe(201);
    const record = (await res.json()) as CustomDomainRecord;
    expect(record).toMatchObject({
      custom_domain_id: expect.stringMatching(/^cd_/),
      domain: domain.toLowerCase(),
      primary: true,
      status: "ready",
      type: "auth0_managed_certs",
      tenant_id: tenant,
      tls_policy: "recommended",
      verification: { methods: [{ name: "cname", record: "localhost" }], status: "verified" },
    });
    // A second domain of the same tenant is not primary; a self-managed one gets a TXT record and an origin.
    const second = (await (await mgmt("POST", "/custom-domains", { body: { tenant_id: tenant, domain: `id.${uniqueId("s")}.example.test`, type: "self_managed_certs" } })).json()) as CustomDomainRecord;
    expect(second.primary).toBe(false);
    expect(second.origin_domain_name).toBe("localhost");
    expect(second.verification.methods[0]).toMatchObject({ name: "txt", domain: `_cf-custom-hostname.${second.domain}`, record: expect.stringContaining("verification=") });
  });

  it("GET lists the target tenant's domains ordered by domain, GET /{id} reads one, fields narrows them", async () => {
    const tenant = await createTenant();
    const b = await claim(tenant, `b.${uniqueId("l")}.example.test`);
    const a = await claim(tenant, `a.${uniqueId("l")}.example.test`);
    await claim(await createTenant());
    const list = (await (await mgmt("GET", "/custom-domains", { headers: { "tenant-id": tenant } })).json()) as CustomDomainRecord[];
    expect(list.map((d) => d.custom_domain_id)).toEqual([a.custom_domain_id, b.custom_domain_id]);
    const one = await mgmt("GET", `/custom-domains/${b.custom_domain_id}`, { headers: { "tenant-id": tenant } });
    expect(await one.json()).toEqual(b);
    const narrowed = (await (await mgmt("GET", "/custom-domains?fields=domain,status&include_fields=true", { headers: { "tenant-id": tenant } })).json()) as object[];
    expect(narrowed[0]).toEqual({ domain: a.domain, status: "ready" });
    const bad = await mgmt("GET", "/custom-domains?sort=status:1", { headers: { "tenant-id": tenant } });
    expect(bad.status).toBe(400);
  });

  it("PATCH updates tls_policy, custom_client_ip_header and merges domain_metadata; unknown fields are 400", async () => {
    const tenant = await createTenant();
    const d = await claim(tenant);
    const res = await mgmt("PATCH", `/custom-domains/${d.custom_domain_id}`, {
      headers: { "tenant-id": tenant },
      body: { custom_client_ip_header: "cf-connecting-ip", domain_metadata: { team: "blue", drop: "x" } },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ custom_client_ip_header: "cf-connecting-ip", domain_metadata: { team: "blue", drop: "x" } });
    const merged = (await (await mgmt("PATCH", `/custom-domains/${d.custom_domain_id}`, { headers: { "tenant-id": tenant }, body: { domain_metadata: { drop: null, more: "y" } } })).json()) as CustomDomainRecord;
    expect(merged.domain_metadata).toEqual({ team: "blue", more: "y" });
    expect((await mgmt("PATCH", `/custom-domains/${d.custom_domain_id}`, { headers: { "tenant-id": tenant }, body: { domain: "other.example" } })).status).toBe(400);
    expect((await mgmt("PATCH", `/custom-domains/${d.custom_domain_id}`, { headers: { "tenant-id": tenant }, body: { tls_policy: "compatible" } })).status).toBe(400);
  });

  it("DELETE answers 204, the domain is gone and its host stops resolving; a second DELETE is 404", async () => {
    const tenant = await createTenant();
    const d = await claim(tenant);
    expect((await issuerOn(d.domain)).body.issuer).toBe(`https://${d.domain}/`);
    expect((await mgmt("DELETE", `/custom-domains/${d.custom_domain_id}`, { headers: { "tenant-id": tenant } })).status).toBe(204);
    const gone = await mgmt("GET", `/custom-domains/${d.custom_domain_id}`, { headers: { "tenant-id": tenant } });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ statusCode: 404, errorCode: "inexistent_custom_domain", message: "The custom domain does not exist" });
    expect((await issuerOn(d.domain)).status).toBe(404);
    expect((await mgmt("DELETE", `/custom-domains/${d.custom_domain_id}`, { headers: { "tenant-id": tenant } })).status).toBe(404);
  });

  it("POST /{id}/verify moves a pending domain to ready, and only then does its host route", async () => {
    const tenant = await createTenant();
    const domain = `pending.${uniqueId("v")}.example.test`;
    const pending = await platform().domains().add(
      { tenant_id: tenant, domain, type: "auth0_managed_certs" },
      { providerRef: "local:pending", status: "pending_verification", verification: { methods: [{ name: "cname", record: "localhost" }], status: "pending" } },
    );
    if (!pending.ok) throw new Error("seed failed");
    expect((await issuerOn(domain)).status).toBe(404);
    const res = await mgmt("POST", `/custom-domains/${pending.value.custom_domain_id}/verify`, { headers: { "tenant-id": tenant } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ custom_domain_id: pending.value.custom_domain_id, status: "ready", verification: { status: "verified" } });
    expect((await issuerOn(domain)).body.issuer).toBe(`https://${domain}/`);
  });
});

describe("custom domains: one tenant per domain, valid hostnames (issue 15 point 1)", () => {
  it("a domain claimed by one tenant is 409 for another, whatever its case, and for the same tenant", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const d = await claim(a);
    for (const [tenant, domain] of [[b, d.domain.toUpperCase()], [a, d.domain], [b, ` ${d.domain} `]] as const) {
      const res = await mgmt("POST", "/custom-domains", { body: { tenant_id: tenant, domain, type: "auth0_managed_certs" } });
      expect(res.status, domain).toBe(409);
      expect(await res.json()).toMatchObject({ statusCode: 409, errorCode: "domain_conflict" });
    }
    expect(((await (await mgmt("GET", "/custom-domains", { headers: { "tenant-id": b } })).json()) as unknown[]).length).toBe(0);
  });

  it.each([
    ["an IPv4 address", "192.0.2.10"],
    ["an IPv6 address", "[2001:db8::1]"],
    ["a port", "login.example.com:8443"],
    ["a wildcard", "*.example.com"],
    ["the issuer apex", "localhost"],
    ["a host under the issuer apex", "acme.localhost"],
    ["a single label", "intranet"],
    ["an empty label", "login..example.com"],
    ["a label over 63 characters", `${"a".repeat(64)}.example.com`],
    ["a name over 253 characters", `${"abcdefghi.".repeat(26)}com`],
    ["a leading hyphen", "-login.example.com"],
    ["an underscore", "log_in.example.com"],
    ["a URL", "https://login.example.com/"],
    ["a trailing dot", "login.example.com."],
    ["unicode", "lögin.example.com"],
    ["a numeric top-level label", "login.example.123"],
  ])("refuses %s with 400 and writes nothing", async (_what, domain) => {
    const tenant = await createTenant();
    const res = await mgmt("POST", "/custom-domains", { body: { tenant_id: tenant, domain, type: "auth0_managed_certs" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: 400, error: "Bad Request", message: expect.stringContaining("domain") });
    expect(await platform().domains().list(tenant)).toEqual([]);
  });

  it("bad bodies are 400: malformed JSON, wrong types, unknown type or fields, missing domain", async () => {
    const tenant = await createTenant();
    const bodies: unknown[] = [
      "{not json",
      { domain: 42, type: "auth0_managed_certs" },
      { domain: "x.example.com", type: "vendor_certs" },
      { domain: "x.example.com", type: "auth0_managed_certs", colour: "red" },
      { type: "auth0_managed_certs" },
      { domain: "x.example.com", type: "auth0_managed_certs", verification_method: "http" },
      { domain: "x.example.com", type: "auth0_managed_certs", domain_metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"])) },
    ];
    for (const body of bodies) {
      const res = await mgmt("POST", "/custom-domains", { headers: { "tenant-id": tenant }, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { errorCode: string }).errorCode).toBe("invalid_body");
    }
    expect(await platform().domains().list(tenant)).toEqual([]);
  });

  it("a control-plane token may name tenant_id; an unknown tenant_id is 404", async () => {
    const res = await mgmt("POST", "/custom-domains", { body: { tenant_id: "no-such-tenant", domain: `x.${uniqueId()}.example.test`, type: "auth0_managed_certs" } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toBe("Tenant not found");
  });

  it("a child tenant's token claims domains for itself only: naming another tenant is 403 with the SPEC's message", async () => {
    const child = await createTenant();
    const other = await createTenant();
    const token = await tenantManagementToken(child, ["create:custom_domains", "read:custom_domains"]);
    const own = await mgmt("POST", "/custom-domains", { token, body: { domain: `own.${uniqueId()}.example.test`, type: "auth0_managed_certs" } });
    expect(own.status).toBe(201);
    expect(((await own.json()) as CustomDomainRecord).tenant_id).toBe(child);
    const foreign = await mgmt("POST", "/custom-domains", { token, body: { tenant_id: other, domain: `x.${uniqueId()}.example.test`, type: "auth0_managed_certs" } });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { message: string }).message).toBe("Cross-tenant management requires a control-plane token");
    expect(await platform().domains().list(other)).toEqual([]);
    // Another tenant's domain is invisible to it by id.
    const theirs = await claim(other);
    expect((await mgmt("GET", `/custom-domains/${theirs.custom_domain_id}`, { token })).status).toBe(404);
    expect((await mgmt("DELETE", `/custom-domains/${theirs.custom_domain_id}`, { token })).status).toBe(403);
  });
});

describe("custom domains: who can reach each route", () => {
  it("no token 401; lacking scope, another tenant's, an end user's and a revoked token 403", async () => {
    const kit = await reachKit(["read:custom_domains", "create:custom_domains", "update:custom_domains", "delete:custom_domains"]);
    const d = await claim(kit.tenant);
    await expectRefusals(kit, "GET", "/custom-domains", "read:custom_domains");
    await expectRefusals(kit, "POST", "/custom-domains", "create:custom_domains", { domain: `r.${uniqueId()}.example.test`, type: "auth0_managed_certs" });
    await expectRefusals(kit, "GET", `/custom-domains/${d.custom_domain_id}`, "read:custom_domains");
    await expectRefusals(kit, "PATCH", `/custom-domains/${d.custom_domain_id}`, "update:custom_domains", { tls_policy: "recommended" });
    await expectRefusals(kit, "POST", `/custom-domains/${d.custom_domain_id}/verify`, "create:custom_domains");
    await expectRefusals(kit, "DELETE", `/custom-domains/${d.custom_domain_id}`, "delete:custom_domains");
    // The tenant's own token with the scopes succeeds on every route.
    const as = { token: kit.allowed };
    expect((await mgmt("GET", "/custom-domains", as)).status).toBe(200);
    expect((await mgmt("GET", `/custom-domains/${d.custom_domain_id}`, as)).status).toBe(200);
    expect((await mgmt("PATCH", `/custom-domains/${d.custom_domain_id}`, { ...as, body: { tls_policy: "recommended" } })).status).toBe(200);
    expect((await mgmt("POST", `/custom-domains/${d.custom_domain_id}/verify`, as)).status).toBe(200);
    expect((await mgmt("DELETE", `/custom-domains/${d.custom_domain_id}`, as)).status).toBe(204);
  });
});

describe("custom domains: resolution and issuer (SPEC §5.5 step 4, §5.6)", () => {
  it("discovery, JWKS and tokens on a custom domain carry iss https://<domain>/; x-forwarded-host wins over host", async () => {
    const tenant = await createTenant();
    const d = await claim(tenant);
    const discovery = await issuerOn(d.domain.toUpperCase());
    expect(discovery.body.issuer).toBe(`https://${d.domain}/`);
    expect(discovery.body.jwks_uri).toBe(`https://${d.domain}/.well-known/jwks.json`);
    // Sent to another tenant's subdomain, the forwarded host decides.
    const other = await createTenant();
    expect((await issuerOn(`${other}.localhost:8787`, { "x-forwarded-host": d.domain })).body.issuer).toBe(`https://${d.domain}/`);
    const jwks = (await (await call("/.well-known/jwks.json", { host: d.domain })).json()) as { keys: { kid: string }[] };
    const own = (await (await call("/.well-known/jwks.json", { host: `${tenant}.localhost:8787` })).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(own.keys.map((k) => k.kid));
    const client = await seedClient(tenant, { grant_types: ["client_credentials"] });
    await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: client.client_id, audience: MANAGEMENT, scope: ["read:custom_domains"] } });
    const res = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: MANAGEMENT }, {}, d.domain);
    expect(res.status).toBe(200);
    const accessToken = ((await res.json()) as { access_token: string }).access_token;
    expect(decodeJwt(accessToken)).toMatchObject({ iss: `https://${d.domain}/`, tenant_id: tenant });
    // The management API accepts the tenant's own token issued on its custom domain.
    const list = await mgmt("GET", "/custom-domains", { token: accessToken, host: d.domain });
    expect(list.status).toBe(200);
  });

  it("a token issued on one tenant's custom domain is not accepted as another tenant's", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const d = await claim(a);
    const { mintWithTenantKey } = await import("../helpers/mint");
    const forged = await mintWithTenantKey(b, { iss: `https://${d.domain}/`, aud: MANAGEMENT, scope: "read:custom_domains" });
    expect((await mgmt("GET", "/custom-domains", { token: forged })).status).toBe(403);
  });

  it("the login page on a custom domain is served for its tenant", async () => {
    const tenant = await createTenant();
    const d = await claim(tenant);
    const client = await seedClient(tenant, { callbacks: ["https://app.example.test/cb"] });
    const res = await call(`/authorize?${new URLSearchParams({ client_id: client.client_id, response_type: "code", redirect_uri: "https://app.example.test/cb", scope: "openid", state: "s" })}`, { host: d.domain });
    expect([200, 302]).toContain(res.status);
    if (res.status === 302) expect(res.headers.get("location")).toContain("/u2/login");
  });
});

describe("custom domains on a tenant deployment (SPEC §4.2, §7)", () => {
  const app = createApp();
  const send = (deploymentEnv: Record<string, unknown>, method: string, path: string, token: string, body?: unknown) =>
    app.fetch(
      new Request(`${BASE}/api/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }),
      { ...env, ...deploymentEnv },
      createExecutionContext(),
    );

  it("without CONTROL_PLANE_URL, writes answer 501 while reads keep working", async () => {
    const tenant = await createTenant();
    const d = await claim(tenant);
    const token = await tenantManagementToken(tenant, ["read:custom_domains", "create:custom_domains", "delete:custom_domains"]);
    const tenantDeployment = { DEPLOYMENT_ROLE: "tenant" };
    const write = await send(tenantDeployment, "POST", "/custom-domains", token, { domain: `n.${uniqueId()}.example.test`, type: "auth0_managed_certs" });
    expect(write.status).toBe(501);
    expect(await write.json()).toMatchObject({ statusCode: 501 });
    expect((await send(tenantDeployment, "DELETE", `/custom-domains/${d.custom_domain_id}`, token)).status).toBe(501);
    expect((await send(tenantDeployment, "POST", `/custom-domains/${d.custom_domain_id}/verify`, token)).status).toBe(501);
    const read = await send(tenantDeployment, "GET", "/custom-domains", token);
    expect(read.status).toBe(200);
    expect(((await read.json()) as CustomDomainRecord[]).map((x) => x.domain)).toEqual([d.domain]);
  });

  it("with CONTROL_PLANE_URL, a write is forwarded to the control plane and its answer mirrored locally", async () => {
    const tenant = await createTenant();
    const token = await tenantManagementToken(tenant, ["read:custom_domains", "create:custom_domains", "delete:custom_domains"]);
    const domain = `fwd.${uniqueId()}.example.test`;
    const recorded: { url: string; method: string; headers: Record<string, string>; body: unknown }[] = [];
    const controlPlaneRecord: CustomDomainRecord = {
      custom_domain_id: `cd_${uniqueId("cp").replace("-", "")}`,
      tenant_id: tenant,
      domain,
      primary: true,
      status: "ready",
      type: "auth0_managed_certs",
      verification: { methods: [{ name: "cname", record: "edge.gatehouse.example" }], status: "verified" },
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    };
    const CONTROL_PLANE = {
      async fetch(request: Request) {
        recorded.push({
          url: request.url,
          method: request.method,
          headers: Object.fromEntries(request.headers),
          body: request.method === "POST" && request.body ? await request.json() : undefined,
        });
        return request.method === "DELETE" ? new Response(null, { status: 204 }) : Response.json(controlPlaneRecord, { status: 201 });
      },
    };
    const deployment = { DEPLOYMENT_ROLE: "tenant", CONTROL_PLANE_URL: "https://cp.gatehouse.example", CONTROL_PLANE_API_TOKEN: "cp-api-token", CONTROL_PLANE };
    const created = await send(deployment, "POST", "/custom-domains", token, { domain: domain.toUpperCase(), type: "auth0_managed_certs" });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual(controlPlaneRecord);
    expect(recorded).toEqual([
      {
        url: "https://cp.gatehouse.example/api/v2/custom-domains",
        method: "POST",
        headers: expect.objectContaining({ authorization: "Bearer cp-api-token", "tenant-id": tenant }),
        body: { domain, type: "auth0_managed_certs", tenant_id: tenant },
      },
    ]);
    // Mirrored: the local registry has the control plane's record (same id) and the host routes.
    expect(await platform().domains().get(controlPlaneRecord.custom_domain_id)).toMatchObject({ domain, tenant_id: tenant, status: "ready" });
    expect((await issuerOn(domain)).body.issuer).toBe(`https://${domain}/`);
    const removed = await send(deployment, "DELETE", `/custom-domains/${controlPlaneRecord.custom_domain_id}`, token);
    expect(removed.status).toBe(204);
    expect(recorded.at(-1)).toMatchObject({ method: "DELETE", url: `https://cp.gatehouse.example/api/v2/custom-domains/${controlPlaneRecord.custom_domain_id}` });
    expect(await platform().domains().get(controlPlaneRecord.custom_domain_id)).toBeNull();
  });

  it("the control plane's refusal comes back with its status: a 409 stays a 409 and nothing is mirrored", async () => {
    const tenant = await createTenant();
    const token = await tenantManagementToken(tenant, ["create:custom_domains"]);
    const domain = `taken.${uniqueId()}.example.test`;
    const CONTROL_PLANE = { fetch: async () => Response.json({ statusCode: 409, message: "taken" }, { status: 409 }) };
    const res = await send({ DEPLOYMENT_ROLE: "tenant", CONTROL_PLANE_URL: "https://cp.gatehouse.example", CONTROL_PLANE }, "POST", "/custom-domains", token, { domain, type: "auth0_managed_certs" });
    expect(res.status).toBe(409);
    expect(await platform().domains().list(tenant)).toEqual([]);
  });
});

describe("custom domains: the control plane's own", () => {
  it("the control plane lists its own domains without a tenant-id header", async () => {
    const d = await claim(CP.tenantId, `cp.${uniqueId()}.example.test`);
    const list = (await (await mgmt("GET", "/custom-domains")).json()) as CustomDomainRecord[];
    expect(list.map((x) => x.custom_domain_id)).toContain(d.custom_domain_id);
    expect((await mgmt("DELETE", `/custom-domains/${d.custom_domain_id}`)).status).toBe(204);
  });
});
