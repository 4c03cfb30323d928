import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManagementClient } from "auth0";
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JSONWebKeySet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, localFetch, nodeBinary, ROOT, type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { startSupervisor, type Supervisor } from "../../scripts/namespace/supervisor.mjs";
import { MANAGEMENT_AUDIENCE, sdkOptions } from "./helpers/auth0";
import { type CallbackServer, startCallbackServer } from "./helpers/browser";
import { loginOnDomain } from "./helpers/domain-login";

/**
 * The per-tenant topology end to end (issue 16): the dispatcher (wrangler.dispatcher.toml) in front of the
 * control plane (wrangler.toml), both under one `wrangler dev`, and the local dispatch namespace (the
 * supervisor) running each tenant's copy as its own workerd from a release store holding two releases.
 */

type Json = Record<string, unknown>;

let store: string;
let nsState: string;
let supervisor: Supervisor;
let server: RunningServer;
let cpToken: string;
let callbacks: CallbackServer;

const host = (tenant: string) => `http://${tenant}.localhost:${server.port}`;

async function api(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.baseUrl}/api/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${cpToken}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
}

async function until<T>(what: string, fn: () => Promise<T | null>, timeoutMs = 150_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${server.log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const ready = (id: string) =>
  until(`tenant ${id}`, async () => {
    const t = (await (await api("GET", `/tenants/${id}`)).json()) as Json;
    return t.provisioning_state === "pending" ? null : t;
  });

/**
 * A management token of the copy itself, through the control plane (POST /tenants/{id}/management-token): the
 * control plane runs client_credentials against the copy with the client secret it keeps; the operator never
 * sees that secret.
 */
async function copyManagementToken(id: string): Promise<string> {
  const res = await api("POST", `/tenants/${id}/management-token`);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { access_token: string; issuer: string; api_base_url: string };
  expect(body).toMatchObject({ issuer: `${host(id)}/`, api_base_url: `${host(id)}/api/v2` });
  expect(Object.keys(body)).not.toContain("client_secret");
  return body.access_token;
}

const operation = async (id: string): Promise<Json> => (await (await api("GET", `/operations/${id}`)).json()) as Json;
const finished = (id: string) =>
  until(`operation ${id}`, async () => {
    const o = await operation(id);
    return o.status === "succeeded" || o.status === "failed" ? o : null;
  });
const release = async (tenant: string) => (await localFetch(`${host(tenant)}/.well-known/openid-configuration`)).headers.get("x-gatehouse-release");

beforeAll(async () => {
  store = await mkdtemp(join(tmpdir(), "gatehouse-releases-"));
  nsState = await mkdtemp(join(tmpdir(), "gatehouse-namespace-"));
  for (const version of ["e2e-r1", "e2e-r2"]) {
    execFileSync(nodeBinary(), [join(ROOT, "scripts", "release.mjs"), "--version", version], { cwd: ROOT, env: childEnv({ RELEASE_STORE: store }), stdio: "ignore" });
  }
  supervisor = await startSupervisor({ stateDir: nsState, releaseStore: store });
  server = await startServer({
    configs: ["wrangler.dispatcher.toml", "wrangler.toml"],
    vars: { NAMESPACE_API_URL: supervisor.url, DEPLOY_STEP_RETRY_DELAY_MS: "1000", HOST_CACHE_NEGATIVE_TTL_MS: "0" },
  });
  const res = await fetch(`${server.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: server.clientId, client_secret: server.clientSecret, audience: "urn:gatehouse:management" }),
  });
  cpToken = ((await res.json()) as { access_token: string }).access_token;
  callbacks = await startCallbackServer();
}, 240_000);

afterAll(async () => {
  await callbacks?.close().catch(() => undefined);
  await server?.stop();
  await supervisor?.close();
  await rm(store, { recursive: true, force: true });
  await rm(nsState, { recursive: true, force: true });
});

describe("dispatcher + per-tenant copies on two releases", () => {
  const a = `a-${crypto.randomUUID().slice(0, 6)}`;
  const b = `b-${crypto.randomUUID().slice(0, 6)}`;
  const email = "ada@example.com";
  const password = `Pw-${crypto.randomUUID()}`;
  let app: { client_id: string; client_secret: string };
  let userId: string;
  let refreshToken: string;

  it("creates two wfp tenants on different releases; each becomes ready and answers on its subdomain from its release", async () => {
    const createA = await api("POST", "/tenants", { id: a, deployment_type: "wfp", worker_version: "e2e-r1" });
    expect(createA.status).toBe(201);
    expect(await createA.json()).toMatchObject({ id: a, provisioning_state: "pending", worker_version: "e2e-r1" });
    expect((await api("POST", "/tenants", { id: b, deployment_type: "wfp" })).status).toBe(201);
    // Before provisioning completes the subdomain does not route.
    expect((await localFetch(`${host(a)}/.well-known/openid-configuration`)).status).toBe(404);
    expect(await ready(a)).toMatchObject({ provisioning_state: "ready", worker_version: "e2e-r1", worker_script_name: `tenant-${a}-auth` });
    expect(await ready(b)).toMatchObject({ provisioning_state: "ready", worker_version: "e2e-r2" });

    const discA = await localFetch(`${host(a)}/.well-known/openid-configuration`);
    expect(discA.status).toBe(200);
    expect(discA.headers.get("x-gatehouse-release")).toBe("default/e2e-r1");
    expect(((await discA.json()) as Json).issuer).toBe(`${host(a)}/`);
    const discB = await localFetch(`${host(b)}/.well-known/openid-configuration`);
    expect(discB.headers.get("x-gatehouse-release")).toBe("default/e2e-r2");
    // The control plane itself is not a copy.
    expect((await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).headers.get("x-gatehouse-release")).toBeNull();
    expect((await localFetch(`http://nobody.localhost:${server.port}/`)).status).toBe(404);
  }, 300_000);

  it("logs a user in through the tenant's subdomain (its copy issues the tokens with its own keys)", async () => {
    const token = await copyManagementToken(a);
    const mg = (method: string, path: string, body?: unknown) =>
      localFetch(`${host(a)}/api/v2${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
    const client = await mg("POST", "/clients", { name: "App", app_type: "regular_web", callbacks: ["http://app.example/cb"], web_origins: ["http://app.example"], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "client_secret_post" });
    expect(client.status).toBe(201);
    app = (await client.json()) as { client_id: string; client_secret: string };
    const user = await mg("POST", "/users", { connection: "Username-Password-Authentication", email, password });
    expect(user.status).toBe(201);
    userId = String(((await user.json()) as Json).user_id);

    const co = await localFetch(`${host(a)}/co/authenticate`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://app.example" },
      body: JSON.stringify({ client_id: app.client_id, username: email, password, credential_type: "password" }),
    });
    expect(co.status, await co.clone().text()).toBe(200);
    const { login_ticket } = (await co.json()) as { login_ticket: string };
    const authorize = new URL(`${host(a)}/authorize`);
    for (const [k, v] of Object.entries({ client_id: app.client_id, response_type: "code", redirect_uri: "http://app.example/cb", scope: "openid offline_access", login_ticket, state: "s1" })) authorize.searchParams.set(k, v);
    const redirect = await localFetch(authorize.toString());
    expect(redirect.status).toBe(302);
    const code = new URL(redirect.headers.get("location") as string).searchParams.get("code");
    expect(code).toBeTruthy();
    const tokens = await localFetch(`${host(a)}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "authorization_code", code, redirect_uri: "http://app.example/cb", client_id: app.client_id, client_secret: app.client_secret }),
    });
    expect(tokens.status).toBe(200);
    const body = (await tokens.json()) as { id_token: string; refresh_token: string };
    refreshToken = body.refresh_token;
    const jwks = createRemoteJWKSet(new URL(`${host(a)}/.well-known/jwks.json`), { [customFetch]: localFetch as typeof fetch });
    const { payload } = await jwtVerify(body.id_token, jwks, { issuer: `${host(a)}/`, audience: app.client_id });
    expect(payload.sub).toBe(userId);
    // The other tenant's copy knows neither the client nor the user.
    const other = await localFetch(`${host(b)}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: app.client_id, client_secret: app.client_secret }),
    });
    expect(other.status).toBeGreaterThanOrEqual(400);
  }, 120_000);

  it("upgrades one tenant on a second slot: the old release answers until the staged copy verified, then the route switches; users, clients and sessions survive", async () => {
    const staged = `tenant-${a}-auth--b`;
    // Hold the staged copy's verification until the test has looked at what is being served meanwhile.
    let reachedVerify!: () => void;
    const atVerify = new Promise<void>((r) => {
      reachedVerify = r;
    });
    let releaseVerify!: () => void;
    const gate = new Promise<void>((r) => {
      releaseVerify = r;
    });
    const removeHold = supervisor.intercept(async (script, path) => {
      if (script === staged && path.startsWith("/__gatehouse/deploy/health")) {
        reachedVerify();
        await gate;
      }
      return undefined;
    });
    try {
      const start = await api("POST", `/tenants/${a}/operations`, { kind: "upgrade", worker_version: "e2e-r2" });
      expect(start.status).toBe(201);
      const op = (await start.json()) as Json;
      expect(op).toMatchObject({ kind: "upgrade", from_version: "e2e-r1", to_version: "e2e-r2" });
      await atVerify;
      // The staged copy runs the new release beside the live one, which still serves every request.
      expect(supervisor.scripts.get(staged)?.metadata.tags).toContain("worker_version:e2e-r2");
      expect(await release(a)).toBe("default/e2e-r1");
      expect(await (await api("GET", `/tenants/${a}`)).json()).toMatchObject({ worker_version: "e2e-r1", worker_script_name: `tenant-${a}-auth` });
      const during = ((await operation(String(op.id))).events as Json[]).map((e) => `${e.step}:${e.status}`);
      expect(during).toContain("apply-migrations:succeeded");
      expect(during).toContain("verify:started");
      expect(during.some((e) => e.startsWith("switch:"))).toBe(false);
      releaseVerify();
      const done = await finished(String(op.id));
      expect(done.status, String(done.error)).toBe("succeeded");
      const steps = (done.events as Json[]).filter((e) => e.status === "succeeded").map((e) => e.step);
      expect(steps).toEqual(["stage-script", "stage-secrets", "apply-migrations", "verify", "switch"]);
    } finally {
      releaseVerify?.();
      removeHold();
    }
    expect(await (await api("GET", `/tenants/${a}`)).json()).toMatchObject({ worker_version: "e2e-r2", worker_script_name: staged, provisioning_state: "ready" });
    const journal = (await (await api("GET", `/tenants/${a}/operations`)).json()) as { operations: Json[]; total: number };
    expect(journal.operations.map((o) => `${o.kind}:${o.status}`)).toEqual(["upgrade:succeeded", "provision:succeeded"]);
    expect(await release(a)).toBe("default/e2e-r2");
    // One process per live storage: the old slot's process is gone, its name now reaches the promoted slot.
    expect(supervisor.scripts.has(`tenant-${a}-auth`)).toBe(false);
    expect(supervisor.aliases.get(`tenant-${a}-auth`)).toBe(staged);

    // The session survived: its refresh token still works on the new release, and the user and client are there.
    const refreshed = await localFetch(`${host(a)}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: app.client_id, client_secret: app.client_secret }),
    });
    expect(refreshed.status).toBe(200);
    const token = await copyManagementToken(a);
    const users = await localFetch(`${host(a)}/api/v2/users/${encodeURIComponent(userId)}`, { headers: { authorization: `Bearer ${token}` } });
    expect(users.status).toBe(200);
    expect(((await users.json()) as Json).email).toBe(email);
    const client = await localFetch(`${host(a)}/api/v2/clients/${app.client_id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(client.status).toBe(200);
  }, 300_000);

  it("logs in through the dispatcher on the upgraded tenant's custom domain (auth0 SDK, Chromium, openid-client, jose)", async () => {
    const domain = `login.${crypto.randomUUID().slice(0, 8)}.example.test`;
    // The control plane claims the domain for the wfp tenant with the auth0 SDK and verifies it.
    const admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const created = await admin.customDomains.create({ domain, type: "auth0_managed_certs", tenant_id: a } as Parameters<typeof admin.customDomains.create>[0]);
    expect(created).toMatchObject({ domain, type: "auth0_managed_certs" });
    expect(await admin.customDomains.verify(created.custom_domain_id)).toMatchObject({ status: "ready" });

    // The tenant's copy gets a web app whose callback is this test's loopback server.
    const token = await copyManagementToken(a);
    const redirectUri = `${callbacks.origin}/callback`;
    const appRes = await localFetch(`${host(a)}/api/v2/clients`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Domain App", app_type: "regular_web", callbacks: [redirectUri], grant_types: ["authorization_code", "client_credentials"], token_endpoint_auth_method: "client_secret_post" }),
    });
    expect(appRes.status).toBe(201);
    const web = (await appRes.json()) as { client_id: string; client_secret: string };

    // openid-client discovers the domain (reached through the dispatcher) as its own provider; Chromium resolves
    // the domain to this machine (a host-resolver MAP rule) and logs the user in there.
    const { origin, issuer, viaDomain, config, loginUrl, requested, tokens, jwks, nonce } = await loginOnDomain({
      domain,
      port: server.port,
      clientId: web.client_id,
      clientSecret: web.client_secret,
      callbacks,
      redirectUri,
      email,
      password,
    });
    expect(config.serverMetadata()).toMatchObject({ issuer, authorization_endpoint: `${origin}/authorize` });
    expect(loginUrl).toMatchObject({ host: `${domain}:${server.port}`, pathname: "/u2/login" });
    for (const r of requested) expect([domain, "127.0.0.1"]).toContain(new URL(r).hostname);

    const { payload } = await jwtVerify(tokens.id_token as string, createLocalJWKSet(jwks), { issuer, audience: web.client_id });
    expect(payload).toMatchObject({ iss: issuer, sub: userId, email, nonce });

    // Behind a TLS-terminating edge (no port on the host) the same domain is https://<domain>/, in discovery and tokens.
    const edge = { "x-forwarded-host": domain };
    const discovery = (await (await viaDomain(`${origin}/.well-known/openid-configuration`, { headers: edge })).json()) as { issuer: string };
    expect(discovery.issuer).toBe(`https://${domain}/`);
    const grant = await localFetch(`${host(a)}/api/v2/client-grants`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ client_id: web.client_id, audience: MANAGEMENT_AUDIENCE, scope: ["read:users"] }),
    });
    expect(grant.status).toBe(201);
    const m2m = await viaDomain(`${origin}/oauth/token`, {
      method: "POST",
      headers: { ...edge, "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: web.client_id, client_secret: web.client_secret, audience: MANAGEMENT_AUDIENCE }),
    });
    expect(m2m.status, await m2m.clone().text()).toBe(200);
    const edgeJwks = (await (await viaDomain(`${origin}/.well-known/jwks.json`, { headers: edge })).json()) as JSONWebKeySet;
    const verified = await jwtVerify(((await m2m.json()) as { access_token: string }).access_token, createLocalJWKSet(edgeJwks), { issuer: `https://${domain}/`, audience: MANAGEMENT_AUDIENCE });
    expect(verified.payload.iss).toBe(`https://${domain}/`);
    // The dispatcher answered from the tenant's copy (its release), not from the control plane.
    expect((await viaDomain(`${origin}/.well-known/openid-configuration`)).headers.get("x-gatehouse-release")).toBe("default/e2e-r2");
  }, 300_000);

  it("a staged copy that fails verification is torn down; the tenant keeps serving on its old pin and slot", async () => {
    const staged = `tenant-${b}-auth--b`;
    const removeFault = supervisor.intercept(async (script, path) =>
      script === staged && path.startsWith("/__gatehouse/deploy/health") ? { status: 503, body: { error: "verification failed on purpose" } } : undefined,
    );
    try {
      const start = await api("POST", `/tenants/${b}/operations`, { kind: "upgrade", worker_version: "e2e-r1" });
      expect(start.status).toBe(201);
      const done = await finished(String(((await start.json()) as Json).id));
      expect(done.status).toBe("failed");
      expect(String(done.error)).toContain("503");
      const timeline = (done.events as Json[]).map((e) => `${e.step}:${e.status}`);
      expect(timeline).toContain("verify:failed");
      expect(timeline.some((e) => e.startsWith("switch:"))).toBe(false);
      expect(timeline.slice(-2)).toEqual(["teardown:started", "teardown:succeeded"]);
    } finally {
      removeFault();
    }
    expect(await (await api("GET", `/tenants/${b}`)).json()).toMatchObject({ worker_version: "e2e-r2", worker_script_name: `tenant-${b}-auth`, provisioning_state: "ready" });
    expect(await release(b)).toBe("default/e2e-r2");
    expect(supervisor.scripts.has(staged)).toBe(false);
  }, 300_000);
});
