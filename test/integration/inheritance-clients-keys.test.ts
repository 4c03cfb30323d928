import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/worker/app";
import { CP, controlPlaneToken, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { inheritingApp, tenantRows } from "../helpers/inheritance";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";

/**
 * Control-plane inheritance of client settings and signing keys (issue 15 point 2; SPEC "Control-plane
 * inheritance", §2.9, §4.2 "Signing keys"): merged at run time, never written into the child.
 */

/** An application on the control plane whose URLs every child application accepts too. */
async function controlPlaneApp() {
  const host = `cp-${uniqueId("app").slice(-8)}.example.com`;
  const res = await mgmt("POST", "/clients", {
    body: { name: "Shared login", app_type: "spa", callbacks: [`https://${host}/callback`], web_origins: [`https://${host}`], allowed_logout_urls: [`https://${host}/bye`] },
  });
  expect(res.status).toBe(201);
  return { ...((await res.json()) as { client_id: string }), host };
}

const authorizeQuery = (clientId: string, redirectUri: string, extra: Record<string, string> = {}) =>
  new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s", ...extra });

describe("client settings inherited from the control-plane application (controlPlane.clientId)", () => {
  it("/authorize on a child accepts a callback registered only on the control-plane application; without inheritance it is refused", async () => {
    const shared = await controlPlaneApp();
    const send = inheritingApp({ controlPlane: { clientId: shared.client_id } });
    const child = await createTenant();
    const client = await seedClient(child, { callbacks: ["https://own.example.com/cb"] });
    const query = authorizeQuery(client.client_id, `https://${shared.host}/callback`);
    const inheriting = await send("GET", `http://${child}.localhost:8787/authorize?${query}`);
    expect(inheriting.status).toBe(302);
    expect(inheriting.headers.get("location")).toContain("/u2/login");
    // The child's own callback still works.
    const own = await send("GET", `http://${child}.localhost:8787/authorize?${authorizeQuery(client.client_id, "https://own.example.com/cb")}`);
    expect(own.headers.get("location")).toContain("/u2/login");

    const plain = await createApp().fetch(new Request(`http://${child}.localhost:8787/authorize?${query}`, { redirect: "manual" }), env, createExecutionContext());
    expect(plain.status).not.toBe(302);
    expect(await plain.text()).toContain("Invalid redirect URI");
  });

  it("web_message and logout accept the control-plane application's web origins and logout URLs", async () => {
    const shared = await controlPlaneApp();
    const send = inheritingApp({ controlPlane: { clientId: shared.client_id } });
    const child = await createTenant();
    const client = await seedClient(child, { callbacks: ["https://own.example.com/cb"] });
    const silent = authorizeQuery(client.client_id, `https://${shared.host}/callback`, { response_mode: "web_message", prompt: "none" });
    const res = await send("GET", `http://${child}.localhost:8787/authorize?${silent}`);
    expect(await res.clone().text()).not.toContain("web_origins");
    const logout = await send("GET", `http://${child}.localhost:8787/v2/logout?client_id=${client.client_id}&returnTo=${encodeURIComponent(`https://${shared.host}/bye`)}`);
    expect(logout.status).toBe(302);
    expect(logout.headers.get("location")).toBe(`https://${shared.host}/bye`);
  });

  it("the management API shows and stores the child application's own URLs only, after GET and PATCH", async () => {
    const shared = await controlPlaneApp();
    const send = inheritingApp({ controlPlane: { clientId: shared.client_id } });
    const child = await createTenant();
    const client = await seedClient(child, { callbacks: ["https://own.example.com/cb"] });
    const got = (await (await send("GET", `/api/v2/clients/${client.client_id}`, { tenant: child })).json()) as { callbacks: string[]; web_origins: string[] };
    expect(got.callbacks).toEqual(["https://own.example.com/cb"]);
    expect(got.web_origins).toEqual([]);
    const patched = await send("PATCH", `/api/v2/clients/${client.client_id}`, { tenant: child, body: { name: "renamed" } });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { callbacks: string[] }).callbacks).toEqual(["https://own.example.com/cb"]);
    const [row] = await tenantRows(child, "SELECT callbacks, web_origins, allowed_logout_urls FROM clients WHERE client_id = ?", client.client_id);
    expect(row).toEqual({ callbacks: JSON.stringify(["https://own.example.com/cb"]), web_origins: "[]", allowed_logout_urls: "[]" });
  });

  it("resolveControlPlane returning undefined opts a tenant out of the merged client settings", async () => {
    const shared = await controlPlaneApp();
    const optedOut = await createTenant();
    const send = inheritingApp({
      controlPlane: { clientId: shared.client_id, resolveControlPlane: ({ tenant_id }) => (tenant_id === optedOut ? undefined : { tenantId: CP.tenantId }) },
    });
    const client = await seedClient(optedOut, { callbacks: ["https://own.example.com/cb"] });
    const res = await send("GET", `http://${optedOut}.localhost:8787/authorize?${authorizeQuery(client.client_id, `https://${shared.host}/callback`)}`);
    expect(await res.text()).toContain("Invalid redirect URI");
  });

  it("a clientId returned by resolveControlPlane selects the application per tenant", async () => {
    const shared = await controlPlaneApp();
    const child = await createTenant();
    const send = inheritingApp({ controlPlane: { resolveControlPlane: () => ({ tenantId: CP.tenantId, clientId: shared.client_id }) } });
    const client = await seedClient(child, { callbacks: ["https://own.example.com/cb"] });
    const res = await send("GET", `http://${child}.localhost:8787/authorize?${authorizeQuery(client.client_id, `https://${shared.host}/callback`)}`);
    expect(res.headers.get("location")).toContain("/u2/login");
  });
});

type Key = { kid: string; inherited: boolean; current: boolean };

const controlPlaneKids = async () =>
  ((await (await mgmt("GET", "/keys/signing")).json()) as Key[]).filter((k) => !k.inherited).map((k) => k.kid);

const jwksOf = async (send: ReturnType<typeof inheritingApp>, tenant: string) =>
  (await (await send("GET", `http://${tenant}.localhost:8787/.well-known/jwks.json`)).json()) as { keys: { kid: string; d?: string }[] };

/** A client_credentials token issued by `tenant` for its management API, through the given app. */
async function childToken(send: ReturnType<typeof inheritingApp>, tenant: string): Promise<string> {
  const client = await seedClient(tenant, { grant_types: ["client_credentials"] });
  const grant = await send("POST", "/api/v2/client-grants", { tenant, body: { client_id: client.client_id, audience: CP.audience, scope: ["read:users"] } });
  expect(grant.status).toBe(201);
  const res = await send("POST", `http://${tenant}.localhost:8787/oauth/token`, {
    body: { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: CP.audience },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe("signing keys inherited from the control plane (controlPlane.signingKeys, INHERIT_SIGNING_KEYS=1)", () => {
  it("the child lists the control plane's keys with inherited: true after its own, without private material; its JWKS publishes them", async () => {
    const send = inheritingApp({ controlPlane: { signingKeys: true } });
    const child = await createTenant();
    const res = await send("GET", "/api/v2/keys/signing", { tenant: child });
    const text = await res.text();
    const keys = JSON.parse(text) as Key[];
    const parentKids = await controlPlaneKids();
    expect(keys.filter((k) => k.inherited).map((k) => k.kid).sort()).toEqual([...parentKids].sort());
    expect(keys[0]?.inherited).toBe(false);
    expect(text).not.toMatch(/private|"d":/);
    const one = await send("GET", `/api/v2/keys/signing/${parentKids[0]}`, { tenant: child });
    expect(await one.json()).toMatchObject({ kid: parentKids[0], inherited: true });
    const jwks = await jwksOf(send, child);
    for (const kid of parentKids) expect(jwks.keys.map((k) => k.kid)).toContain(kid);
    expect(jwks.keys.some((k) => k.d !== undefined)).toBe(false);
    // A token the control plane signed verifies against the child's JWKS.
    await expect(jwtVerify(await controlPlaneToken(), createLocalJWKSet(jwks as never))).resolves.toBeTruthy();
  });

  it("revoke and renew of an inherited kid are 403 and leave the control plane's key as it was; rotate adds a key of the child's own", async () => {
    const send = inheritingApp({ controlPlane: { signingKeys: true } });
    const child = await createTenant();
    const [kid] = await controlPlaneKids();
    for (const [method, path] of [
      ["PUT", `/api/v2/keys/signing/${kid}/revoke`],
      ["POST", `/api/v2/keys/signing/${kid}/renew`],
    ] as const) {
      const res = await send(method, path, { tenant: child });
      expect(res.status, path).toBe(403);
      expect(await res.json()).toMatchObject({ statusCode: 403, errorCode: "inherited_signing_key" });
    }
    expect(((await (await mgmt("GET", `/keys/signing/${kid}`)).json()) as { revoked: boolean }).revoked).toBe(false);
    expect((await send("POST", "/api/v2/keys/signing/rotate", { tenant: child })).status).toBe(201);
    expect(await tenantRows(child, "SELECT kid FROM signing_keys WHERE kid = ?", kid)).toEqual([]);
  });

  it("a child without a key of its own signs with the control plane's key, and the token verifies with jose against the child's JWKS", async () => {
    const send = inheritingApp({}, { INHERIT_SIGNING_KEYS: "1" });
    const child = await createTenant();
    const withOwnKey = await childToken(send, child);
    const ownKids = (await tenantRows(child, "SELECT kid FROM signing_keys")).map((r) => r.kid);
    expect(ownKids).toContain(decodeProtectedHeader(withOwnKey).kid);

    // A child provisioned without keys of its own (the seed skipped, or its keys removed by an operator).
    await runInDurableObject(env.TENANT.getByName(child), (_o, state) => {
      state.storage.sql.exec("DELETE FROM signing_keys");
      state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
    });
    invalidateTenantConfig(child);
    const inheritedToken = await childToken(send, child);
    const kid = decodeProtectedHeader(inheritedToken).kid;
    expect(await controlPlaneKids()).toContain(kid);
    const { payload } = await jwtVerify(inheritedToken, createLocalJWKSet((await jwksOf(send, child)) as never), { issuer: `http://${child}.localhost:8787/` });
    expect(payload.tenant_id).toBe(child);
    // The child's storage still holds no key: nothing was copied.
    expect(await tenantRows(child, "SELECT kid FROM signing_keys")).toEqual([]);
  });

  it("without key inheritance (or opted out) the child neither lists nor publishes the control plane's keys", async () => {
    const [kid] = await controlPlaneKids();
    const child = await createTenant();
    const noKeys = inheritingApp();
    expect(((await (await noKeys("GET", "/api/v2/keys/signing", { tenant: child })).json()) as Key[]).some((k) => k.inherited)).toBe(false);
    expect((await noKeys("GET", `/api/v2/keys/signing/${kid}`, { tenant: child })).status).toBe(404);
    expect((await jwksOf(noKeys, child)).keys.map((k) => k.kid)).not.toContain(kid);

    const optedOut = inheritingApp({ controlPlane: { signingKeys: true, resolveControlPlane: () => undefined } });
    expect(((await (await optedOut("GET", "/api/v2/keys/signing", { tenant: child })).json()) as Key[]).some((k) => k.inherited)).toBe(false);
    expect((await jwksOf(optedOut, child)).keys.map((k) => k.kid)).not.toContain(kid);
  });
});
