import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { inheritingApp, tenantRows } from "../helpers/inheritance";
import { deliveries, hookUrl } from "../helpers/outbox";
import { expectReachability } from "../helpers/reach";

/**
 * `/api/v2/emails/provider` (the reference platform's routes) and its control-plane inheritance (issue 15
 * point 2): a child without a provider of its own shows and sends through the control plane's.
 */

const asTenant = (tenant: string) => ({ headers: { "tenant-id": tenant } });
const provider = (apiKey = "SG.secret-key", from = "noreply@example.com") => ({
  name: "sendgrid",
  enabled: true,
  default_from_address: from,
  credentials: { api_key: apiKey },
});

describe("email provider management", () => {
  it("configures, reads (never the API key), refuses a second POST, updates and deletes", async () => {
    const tenant = await createTenant();
    expect((await mgmt("GET", "/emails/provider", asTenant(tenant))).status).toBe(404);
    const created = await mgmt("POST", "/emails/provider", { ...asTenant(tenant), body: provider() });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(JSON.parse(text)).toEqual({ name: "sendgrid", enabled: true, default_from_address: "noreply@example.com", credentials: {}, settings: {} });
    expect(text).not.toContain("SG.secret-key");
    expect((await mgmt("POST", "/emails/provider", { ...asTenant(tenant), body: provider() })).status).toBe(409);
    const patched = await mgmt("PATCH", "/emails/provider", { ...asTenant(tenant), body: { enabled: false, default_from_address: "team@example.com" } });
    expect(await patched.json()).toMatchObject({ enabled: false, default_from_address: "team@example.com" });
    expect(await (await mgmt("GET", "/emails/provider?fields=name", asTenant(tenant))).json()).toEqual({ name: "sendgrid" });
    const stored = JSON.stringify(await tenantRows(tenant, "SELECT value FROM _settings WHERE key = 'email_provider'"));
    expect(stored).not.toContain("SG.secret-key");
    expect((await mgmt("DELETE", "/emails/provider", asTenant(tenant))).status).toBe(204);
    expect(await (await mgmt("GET", "/emails/provider", asTenant(tenant))).json()).toMatchObject({ statusCode: 404, errorCode: "inexistent_email_provider" });
    expect((await mgmt("DELETE", "/emails/provider", asTenant(tenant))).status).toBe(404);
  });

  it("bad bodies are 400 and write nothing: an unsupported provider, no credentials, unknown fields, malformed JSON, a bad address", async () => {
    const tenant = await createTenant();
    for (const body of [
      { ...provider(), name: "smtp" },
      { name: "sendgrid" },
      { ...provider(), extra: 1 },
      { ...provider(), default_from_address: "not an address" },
      { ...provider(), credentials: { api_key: 42 } },
      "{not json",
    ]) {
      const res = await mgmt("POST", "/emails/provider", { ...asTenant(tenant), body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, error: "Bad Request" });
    }
    expect((await mgmt("GET", "/emails/provider", asTenant(tenant))).status).toBe(404);
    expect((await mgmt("PATCH", "/emails/provider", { ...asTenant(tenant), body: {} })).status).toBe(400);
  });

  it("who can reach it: no token 401, missing scope 403, another tenant 403, the right scope succeeds", async () => {
    const configured = async (tenant: string) => {
      await mgmt("POST", "/emails/provider", { ...asTenant(tenant), body: provider() });
      return "/emails/provider";
    };
    await expectReachability("POST", () => "/emails/provider", "create:email_provider", 201, () => provider());
    await expectReachability("GET", configured, "read:email_provider", 200);
    await expectReachability("PATCH", configured, "update:email_provider", 200, () => ({ enabled: false }));
    await expectReachability("DELETE", configured, "delete:email_provider", 204);
  });
});

/** Configures the control plane's provider for one test (removed by the returned function). */
async function controlPlaneProvider(apiKey: string) {
  await mgmt("DELETE", "/emails/provider");
  const res = await mgmt("POST", "/emails/provider", { body: provider(apiKey, "platform@example.com") });
  expect(res.status).toBe(201);
  return () => mgmt("DELETE", "/emails/provider");
}

/** A child that can start passwordless email logins. */
async function passwordlessChild() {
  const child = await createTenant();
  const client = await seedClient(child);
  expect((await mgmt("POST", "/connections", { ...asTenant(child), body: { name: "email", strategy: "email", enabled_clients: [client.client_id] } })).status).toBe(201);
  const start = (send: ReturnType<typeof inheritingApp>, email: string) =>
    send("POST", `http://${child}.localhost:8787/passwordless/start`, {
      body: { client_id: client.client_id, client_secret: client.client_secret, connection: "email", email, send: "code" },
      headers: { "cf-connecting-ip": `203.0.113.${Math.floor(Math.random() * 250) + 1}` },
    });
  return { child, start };
}

describe("email provider inherited from the control plane", () => {
  it("a child without its own shows the control plane's marked inherited (no secret); DELETE is 403; PATCH creates the child's own and leaves the control plane's", async () => {
    const done = await controlPlaneProvider("SG.platform-key");
    try {
      const send = inheritingApp();
      const child = await createTenant();
      const got = await send("GET", "/api/v2/emails/provider", { tenant: child });
      const text = await got.text();
      expect(JSON.parse(text)).toMatchObject({ name: "sendgrid", default_from_address: "platform@example.com", inherited: true });
      expect(text).not.toContain("SG.platform-key");
      const refused = await send("DELETE", "/api/v2/emails/provider", { tenant: child });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { message: string }).message).toContain("inherited");
      const partial = await send("PATCH", "/api/v2/emails/provider", { tenant: child, body: { default_from_address: "child@example.com" } });
      expect(partial.status).toBe(400);
      expect(await tenantRows(child, "SELECT key FROM _settings WHERE key = 'email_provider'")).toEqual([]);

      const own = await send("PATCH", "/api/v2/emails/provider", { tenant: child, body: provider("SG.child-key", "child@example.com") });
      expect(own.status).toBe(200);
      expect(await own.json()).toEqual({ name: "sendgrid", enabled: true, default_from_address: "child@example.com", credentials: {}, settings: {} });
      expect(await (await mgmt("GET", "/emails/provider")).json()).toMatchObject({ default_from_address: "platform@example.com" });
      expect(await (await send("GET", "/api/v2/emails/provider", { tenant: child })).json()).not.toHaveProperty("inherited");
    } finally {
      await done();
    }
  });

  it("a child's passwordless email goes out through the control plane's provider; the child's own provider wins once configured", async () => {
    const done = await controlPlaneProvider("SG.platform-key");
    try {
      const name = uniqueId("mail");
      const send = inheritingApp({}, { EMAIL_API_BASE: hookUrl(name) });
      const { child, start } = await passwordlessChild();
      const email = `${uniqueId("u")}@example.com`;
      expect((await start(send, email)).status).toBe(200);
      const [delivery] = await deliveries(name);
      expect(delivery?.body).toMatchObject({ personalizations: [{ to: [{ email }] }], from: { email: "platform@example.com" } });
      expect(JSON.stringify(delivery)).toContain("Bearer SG.platform-key");

      expect((await send("POST", "/api/v2/emails/provider", { tenant: child, body: provider("SG.child-key", "child@example.com") })).status).toBe(201);
      expect((await start(send, email)).status).toBe(200);
      const latest = (await deliveries(name)).at(-1);
      expect(latest?.body).toMatchObject({ from: { email: "child@example.com" } });
      expect(JSON.stringify(latest)).toContain("Bearer SG.child-key");
    } finally {
      await done();
    }
  });

  it("resolveControlPlane returning undefined opts a tenant out: no inherited provider shown or used", async () => {
    const done = await controlPlaneProvider("SG.platform-key");
    try {
      const name = uniqueId("mail");
      const { child, start } = await passwordlessChild();
      const send = inheritingApp({ controlPlane: { resolveControlPlane: ({ tenant_id }) => (tenant_id === child ? undefined : { tenantId: CP.tenantId }) } }, { EMAIL_API_BASE: hookUrl(name) });
      expect((await send("GET", "/api/v2/emails/provider", { tenant: child })).status).toBe(404);
      await start(send, `${uniqueId("u")}@example.com`);
      expect(await deliveries(name)).toEqual([]);
    } finally {
      await done();
    }
  });
});
