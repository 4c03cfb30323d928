import { describe, expect, it } from "vitest";
import { forgetHost, resolveTenant, type TenantDirectory } from "../../../src/worker/routing/resolve-tenant";
import type { Settings } from "../../../src/worker/settings";

const settings = {
  issuer: "http://localhost:8787/",
  apexHost: "localhost:8787",
  issuerProtocol: "http:",
  controlPlaneTenantId: "control_plane",
  hostCacheTtlMs: 30_000,
  hostCacheNegativeTtlMs: 5_000,
} as Settings;

function fakeDirectory(tenants: string[], domains: Record<string, string> = {}) {
  const probes: string[] = [];
  const directory: TenantDirectory = {
    hasTenant: async (id) => tenants.includes(id),
    resolveCustomDomain: async (host) => {
      probes.push(host);
      return domains[host] ? { tenantId: domains[host], customDomain: host } : null;
    },
    countTenants: async () => tenants.length,
  };
  return { directory, probes };
}

const req = (url: string, headers: Record<string, string> = {}) => new Request(url, { headers });

describe("tenant resolution order (SPEC §5.5)", () => {
  it("the tenant-id header wins over the host", async () => {
    forgetHost();
    const { directory } = fakeDirectory(["control_plane", "acme", "beta"]);
    const t = await resolveTenant(req("http://beta.localhost:8787/x", { "tenant-id": "acme" }), settings, directory);
    expect(t).toMatchObject({ id: "acme", via: "header", issuer: "http://localhost:8787/" });
  });

  it("a tenant subdomain resolves with its own issuer; an unknown one is 404 Tenant not found", async () => {
    forgetHost();
    const { directory, probes } = fakeDirectory(["control_plane", "acme", "beta"]);
    const t = await resolveTenant(req("http://acme.localhost:8787/"), settings, directory);
    expect(t).toMatchObject({ id: "acme", via: "subdomain", issuer: "http://acme.localhost:8787/" });
    await expect(resolveTenant(req("http://nope.localhost:8787/"), settings, directory)).rejects.toThrow("Tenant not found");
    // Hosts under the apex are never probed as custom domains, even deeper ones.
    await expect(resolveTenant(req("http://a.b.localhost:8787/"), settings, directory)).rejects.toThrow("Tenant not found");
    expect(probes).toEqual([]);
  });

  it("a custom domain matches exactly, lowercased, x-forwarded-host first, issuer https://domain/", async () => {
    forgetHost();
    const { directory, probes } = fakeDirectory(["control_plane", "acme", "beta"], { "login.acme.test": "acme" });
    const t = await resolveTenant(req("http://whatever.internal/", { "x-forwarded-host": "LOGIN.Acme.test" }), settings, directory);
    expect(t).toMatchObject({ id: "acme", via: "custom_domain", issuer: "https://login.acme.test/" });
    expect(probes).toEqual(["login.acme.test"]);
    await expect(resolveTenant(req("http://other.test/"), settings, directory)).rejects.toThrow("Tenant not found");
  });

  it("the tenant_id query parameter is used when the host names nothing", async () => {
    forgetHost();
    const { directory } = fakeDirectory(["control_plane", "acme", "beta"]);
    const t = await resolveTenant(req("http://localhost:8787/u2/guardian/enroll?tenant_id=beta"), settings, directory);
    expect(t).toMatchObject({ id: "beta", via: "query" });
  });

  it("with exactly one tenant, any host falls back to it; the apex serves the control plane", async () => {
    forgetHost();
    const single = fakeDirectory(["control_plane"]).directory;
    expect(await resolveTenant(req("http://unknown.test/"), settings, single)).toMatchObject({ id: "control_plane", via: "single_tenant" });
    const many = fakeDirectory(["control_plane", "acme"]).directory;
    expect(await resolveTenant(req("http://localhost:8787/"), settings, many)).toMatchObject({ id: "control_plane", via: "apex" });
    expect(await resolveTenant(req("http://127.0.0.1:8787/"), settings, many)).toMatchObject({ id: "control_plane", via: "apex" });
  });

  it("caches host answers per isolate (a repeat does not ask the registry again)", async () => {
    forgetHost();
    const { directory, probes } = fakeDirectory(["control_plane", "acme"], { "id.acme.test": "acme" });
    await resolveTenant(req("http://id.acme.test/"), settings, directory);
    await resolveTenant(req("http://id.acme.test/"), settings, directory);
    expect(probes).toEqual(["id.acme.test"]);
  });
});
