import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, tokenForm } from "../helpers/flows";

type AppOptions = NonNullable<Parameters<typeof import("../../src/worker/app").createApp>[0]>;

async function appWith(options: AppOptions) {
  const { createApp } = await import("../../src/worker/app");
  const app = createApp(options);
  return (path: string, host: string, init: RequestInit = {}) =>
    app.fetch(new Request(`http://localhost:8787${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), host } }), env, createExecutionContext());
}

const jwks = async (res: Response) => ((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();

/** A control-plane organization named `label` standing for `tenantId` (as tenant organizations do). */
async function organizationFor(label: string, tenantId: string) {
  const res = await mgmt("POST", "/organizations", { body: { name: label, metadata: { tenant_id: tenantId } } });
  expect(res.status, await res.clone().text()).toBe(201);
}

describe("subdomain routing: useOrganizations (default) and baseDomain (SPEC 'Control-plane inheritance')", () => {
  it("a label naming a control-plane organization serves that organization's tenant", async () => {
    const id = await createTenant();
    const label = uniqueId("brand");
    await organizationFor(label, id);
    const own = await call("/.well-known/jwks.json", { host: `${id}.localhost:8787` });
    const viaOrg = await call("/.well-known/jwks.json", { host: `${label}.localhost:8787` });
    expect(viaOrg.status).toBe(200);
    expect(await jwks(viaOrg)).toEqual(await jwks(own));
    const discovery = (await (await call("/.well-known/openid-configuration", { host: `${label}.localhost:8787` })).json()) as { issuer: string };
    expect(discovery.issuer).toBe(`http://${label}.localhost:8787/`);
  });

  it("a token issued on such a host is accepted by the management API (its issuer is the tenant's)", async () => {
    const id = await createTenant();
    const label = uniqueId("brand");
    await organizationFor(label, id);
    const client = await seedClient(id, { grant_types: ["client_credentials"] });
    await mgmt("POST", "/client-grants", { headers: { "tenant-id": id }, body: { client_id: client.client_id, audience: CP.audience, scope: ["read:clients"] } });
    const res = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: CP.audience }, {}, `${label}.localhost:8787`);
    expect(res.status).toBe(200);
    const token = ((await res.json()) as { access_token: string }).access_token;
    expect((await mgmt("GET", "/clients", { token })).status).toBe(200);
  });

  it("with useOrganizations off the label is only ever the tenant id", async () => {
    const id = await createTenant();
    const label = uniqueId("plain");
    await organizationFor(label, id);
    const send = await appWith({ routing: { useOrganizations: false } });
    expect((await send("/.well-known/jwks.json", `${label}.localhost:8787`)).status).toBe(404);
    expect((await send("/.well-known/jwks.json", `${id}.localhost:8787`)).status).toBe(200);
  });

  it("an organization standing for the control plane never gives it a second issuer", async () => {
    const label = uniqueId("cp");
    await organizationFor(label, CP.tenantId);
    expect((await call("/.well-known/openid-configuration", { host: `${label}.localhost:8787` })).status).toBe(404);
  });

  it("baseDomain: tenants answer on {label}.{baseDomain}, with that host as issuer; unknown labels are 404", async () => {
    const id = await createTenant();
    const send = await appWith({ routing: { baseDomain: "tenants.localhost:8787" } });
    const res = await send("/.well-known/openid-configuration", `${id}.tenants.localhost:8787`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { issuer: string }).issuer).toBe(`http://${id}.tenants.localhost:8787/`);
    const unknown = await send("/.well-known/openid-configuration", `${uniqueId("nobody")}.tenants.localhost:8787`);
    expect(unknown.status).toBe(404);
    // An error of a public document is never cacheable, unlike the document itself.
    expect(unknown.headers.get("cache-control")).toBe("no-store");
    expect((await send("/.well-known/jwks.json", `${uniqueId("nobody")}.tenants.localhost:8787`)).headers.get("cache-control")).toBe("no-store");
    // The apex still serves the control plane.
    const apex = (await (await send("/.well-known/openid-configuration", "localhost:8787")).json()) as { issuer: string };
    expect(apex.issuer).toBe("http://localhost:8787/");
  });
});
