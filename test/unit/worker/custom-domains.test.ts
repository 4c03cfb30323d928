import { describe, expect, it } from "vitest";
import { CloudflareSaasProvider } from "../../../src/worker/custom-domains/cloudflare";
import { ControlPlaneDomains } from "../../../src/worker/custom-domains/control-plane";
import { hostnameProblem } from "../../../src/worker/custom-domains/hostname";
import { LocalCertificateProvider } from "../../../src/worker/custom-domains/local";
import { forgetHost, resolveHost, type TenantDirectory } from "../../../src/worker/routing/resolve-tenant";
import type { Settings } from "../../../src/worker/settings";

describe("custom-domain hostname rules", () => {
  it("accepts ordinary names, punycode included", () => {
    for (const host of ["login.example.com", "a.b.c.example.co.uk", "xn--bcher-kva.example", "l0gin-1.example.io"]) {
      expect(hostnameProblem(host, "auth.example.net"), host).toBeNull();
    }
  });

  it("refuses the issuer apex and hosts under it, whatever the apex's port", () => {
    expect(hostnameProblem("auth.example.net", "auth.example.net")).toMatch(/own domain/);
    expect(hostnameProblem("acme.auth.example.net", "auth.example.net:443")).toMatch(/own domain/);
    expect(hostnameProblem("auth.example.net.evil.test", "auth.example.net")).toBeNull();
  });
});

/** A fetch that records each call and answers from a script. */
function recordingFetch(answers: Response[]) {
  const calls: { url: string; method: string; auth: string | null; body: unknown }[] = [];
  const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    calls.push({
      url: request.url,
      method: request.method,
      auth: request.headers.get("authorization"),
      body: request.method === "POST" ? await request.json() : undefined,
    });
    const next = answers.shift();
    if (!next) throw new Error("unexpected call");
    return next;
  }) as typeof fetch;
  return { calls, fetcher };
}

const pendingHostname = {
  id: "ch_123",
  hostname: "login.acme.test",
  status: "pending",
  ssl: { status: "pending_validation" },
  ownership_verification: { type: "txt", name: "_cf-custom-hostname.login.acme.test", value: "5cc4-uuid" },
};

describe("Cloudflare for SaaS certificate provider", () => {
  const options = { apiToken: "cf-token", zoneId: "zone-1", apiBase: "https://cf.test/client/v4", cnameTarget: "edge.gatehouse.example" };

  it("registers a managed hostname (HTTP validation, TLS 1.2) and reports it pending with its records", async () => {
    const { calls, fetcher } = recordingFetch([Response.json({ success: true, result: pendingHostname })]);
    const provider = new CloudflareSaasProvider({ ...options, fetch: fetcher });
    const state = await provider.register({ domain: "login.acme.test", type: "auth0_managed_certs" });
    expect(calls).toEqual([
      {
        url: "https://cf.test/client/v4/zones/zone-1/custom_hostnames",
        method: "POST",
        auth: "Bearer cf-token",
        body: { hostname: "login.acme.test", ssl: { method: "http", type: "dv", settings: { min_tls_version: "1.2" } } },
      },
    ]);
    expect(state).toEqual({
      providerRef: "ch_123",
      status: "pending_verification",
      verification: {
        methods: [
          { name: "cname", record: "edge.gatehouse.example" },
          { name: "txt", record: "5cc4-uuid", domain: "_cf-custom-hostname.login.acme.test" },
        ],
        status: "pending",
      },
      certificate: { status: "provisioning" },
    });
  });

  it("a self-managed hostname registers without a certificate and points at the origin", async () => {
    const { calls, fetcher } = recordingFetch([Response.json({ success: true, result: pendingHostname })]);
    const state = await new CloudflareSaasProvider({ ...options, fetch: fetcher }).register({ domain: "login.acme.test", type: "self_managed_certs" });
    expect(calls[0]?.body).toEqual({ hostname: "login.acme.test" });
    expect(state.origin_domain_name).toBe("edge.gatehouse.example");
    expect(state.verification.methods).toEqual([{ name: "txt", record: "5cc4-uuid", domain: "_cf-custom-hostname.login.acme.test" }]);
  });

  it("check: active hostname and certificate is ready; a timed-out validation is failed with its message", async () => {
    const active = { ...pendingHostname, status: "active", ssl: { status: "active" } };
    const timedOut = { ...pendingHostname, ssl: { status: "validation_timed_out", validation_errors: [{ message: "CAA record forbids" }] } };
    const { calls, fetcher } = recordingFetch([Response.json({ success: true, result: active }), Response.json({ success: true, result: timedOut })]);
    const provider = new CloudflareSaasProvider({ ...options, fetch: fetcher });
    const ready = await provider.check("ch_123", { domain: "login.acme.test", type: "auth0_managed_certs" });
    expect(ready).toMatchObject({ status: "ready", verification: { status: "verified" }, certificate: { status: "provisioned" } });
    const failed = await provider.check("ch_123", { domain: "login.acme.test", type: "auth0_managed_certs" });
    expect(failed).toMatchObject({ status: "failed", verification: { status: "failed", error_msg: "CAA record forbids" }, certificate: { status: "provisioning_failed" } });
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      "GET https://cf.test/client/v4/zones/zone-1/custom_hostnames/ch_123",
      "GET https://cf.test/client/v4/zones/zone-1/custom_hostnames/ch_123",
    ]);
  });

  it("a duplicate hostname is a 409 domain_conflict; another refusal a 502 with Cloudflare's message", async () => {
    const { fetcher } = recordingFetch([
      Response.json({ success: false, errors: [{ code: 1406, message: "Duplicate custom hostname found." }] }, { status: 409 }),
      Response.json({ success: false, errors: [{ code: 10000, message: "Authentication error" }] }, { status: 403 }),
    ]);
    const provider = new CloudflareSaasProvider({ ...options, fetch: fetcher });
    await expect(provider.register({ domain: "login.acme.test", type: "auth0_managed_certs" })).rejects.toMatchObject({ status: 409 });
    await expect(provider.register({ domain: "login.acme.test", type: "auth0_managed_certs" })).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining("Authentication error"),
    });
  });

  it("remove deletes the hostname; one already gone is fine", async () => {
    const { calls, fetcher } = recordingFetch([
      Response.json({ success: true, result: { id: "ch_123" } }),
      Response.json({ success: false, errors: [{ code: 1436, message: "not found" }] }, { status: 404 }),
    ]);
    const provider = new CloudflareSaasProvider({ ...options, fetch: fetcher });
    await provider.remove("ch_123");
    await provider.remove("ch_123");
    expect(calls.map((c) => c.method)).toEqual(["DELETE", "DELETE"]);
  });
});

describe("local certificate provider", () => {
  it("marks every hostname ready with the records a person would publish", async () => {
    const provider = new LocalCertificateProvider("localhost");
    const managed = await provider.register({ domain: "login.acme.test", type: "auth0_managed_certs" });
    expect(managed).toMatchObject({ status: "ready", verification: { status: "verified", methods: [{ name: "cname", record: "localhost" }] } });
    expect(await provider.check(managed.providerRef, { domain: "login.acme.test", type: "auth0_managed_certs" })).toMatchObject({ providerRef: managed.providerRef, status: "ready" });
  });
});

describe("control-plane forwarding client", () => {
  it("sends the tenant's id, the bearer and the body; maps the control plane's 404 to inexistent_custom_domain", async () => {
    const seen: Request[] = [];
    const client = new ControlPlaneDomains(
      {
        baseUrl: "https://cp.example/",
        bearer: "tok",
        fetch: async (r) => {
          seen.push(r);
          return Response.json({ message: "gone" }, { status: 404 });
        },
      },
      "acme",
    );
    await expect(client.verify("cd_1")).rejects.toMatchObject({ status: 404, message: "The custom domain does not exist" });
    expect(seen[0]?.url).toBe("https://cp.example/api/v2/custom-domains/cd_1/verify");
    expect(seen[0]?.headers.get("tenant-id")).toBe("acme");
    expect(seen[0]?.headers.get("authorization")).toBe("Bearer tok");
  });

  it("an unreachable control plane is a 502, not a 500", async () => {
    const client = new ControlPlaneDomains({ baseUrl: "https://cp.example", bearer: "t", fetch: async () => Promise.reject(new Error("ECONNREFUSED")) }, "acme");
    await expect(client.create({ domain: "x.example", type: "auth0_managed_certs" })).rejects.toMatchObject({ status: 502 });
  });
});

describe("host cache (SPEC §8: positive TTL, negative TTL)", () => {
  const settings = {
    issuer: "http://localhost:8787/",
    apexHost: "localhost:8787",
    issuerProtocol: "http:",
    controlPlaneTenantId: "control_plane",
    hostCacheTtlMs: 30_000,
    hostCacheNegativeTtlMs: 5_000,
  } as Settings;

  function directory(domains: Record<string, string>) {
    const probes: string[] = [];
    const dir: TenantDirectory = {
      hasTenant: async () => true,
      resolveCustomDomain: async (host) => {
        probes.push(host);
        return domains[host] ? { tenantId: domains[host], customDomain: host } : null;
      },
      countTenants: async () => 2,
    };
    return { dir, probes };
  }

  it("a miss is remembered for the negative TTL only: a domain added meanwhile shows up once it expires", async () => {
    forgetHost();
    const domains: Record<string, string> = {};
    const { dir, probes } = directory(domains);
    expect(await resolveHost("login.acme.test", settings, dir, 1_000)).toBeNull();
    domains["login.acme.test"] = "acme";
    expect(await resolveHost("login.acme.test", settings, dir, 5_999)).toBeNull();
    expect(probes).toHaveLength(1);
    expect(await resolveHost("login.acme.test", settings, dir, 6_000)).toMatchObject({ tenantId: "acme", via: "custom_domain" });
    expect(probes).toHaveLength(2);
  });

  it("a hit is kept for the positive TTL, then asked again (a removed domain stops resolving)", async () => {
    forgetHost();
    const domains: Record<string, string> = { "id.beta.test": "beta" };
    const { dir, probes } = directory(domains);
    expect(await resolveHost("ID.Beta.Test", settings, dir, 0)).toMatchObject({ tenantId: "beta", customDomain: "id.beta.test" });
    delete domains["id.beta.test"];
    expect(await resolveHost("id.beta.test", settings, dir, 29_999)).toMatchObject({ tenantId: "beta" });
    expect(probes).toHaveLength(1);
    expect(await resolveHost("id.beta.test", settings, dir, 30_000)).toBeNull();
    expect(probes).toHaveLength(2);
  });

  it("a port on the request host is ignored for the lookup; apex hosts are never probed", async () => {
    forgetHost();
    const { dir, probes } = directory({ "login.acme.test": "acme" });
    expect(await resolveHost("login.acme.test:8787", settings, dir, 0)).toMatchObject({ tenantId: "acme" });
    expect(await resolveHost("localhost:8787", settings, dir, 0)).toBeNull();
    expect(await resolveHost("x.y.localhost:8787", settings, dir, 0)).toBeNull();
    expect(await resolveHost("other.localhost:9999", settings, dir, 0)).toBeNull();
    expect(probes).toEqual(["login.acme.test"]);
  });
});

describe("subdomain routing options (reservedSubdomains, resolveSubdomain)", () => {
  const base = {
    issuer: "http://localhost:8787/",
    apexHost: "localhost:8787",
    issuerProtocol: "http:",
    controlPlaneTenantId: "control_plane",
    hostCacheTtlMs: 0,
    hostCacheNegativeTtlMs: 0,
  } as Settings;
  const dir: TenantDirectory = { hasTenant: async (id) => ["acme", "beta"].includes(id), resolveCustomDomain: async () => null, countTenants: async () => 3 };

  it("a reserved label is nobody's subdomain, even when a tenant has that id", async () => {
    forgetHost();
    const settings = { ...base, reservedSubdomains: ["acme"] } as Settings;
    expect(await resolveHost("acme.localhost:8787", settings, dir, 0)).toBeNull();
    expect(await resolveHost("beta.localhost:8787", settings, dir, 0)).toMatchObject({ tenantId: "beta", via: "subdomain" });
  });

  it("resolveSubdomain maps a label to the tenant it names", async () => {
    forgetHost();
    const settings = { ...base, reservedSubdomains: [], resolveSubdomain: (label: string) => (label === "www-acme" ? "acme" : null) } as Settings;
    expect(await resolveHost("www-acme.localhost:8787", settings, dir, 0)).toMatchObject({ tenantId: "acme" });
    expect(await resolveHost("beta.localhost:8787", settings, dir, 0)).toBeNull();
  });
});
