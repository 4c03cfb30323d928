import { env, runInDurableObject, SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dispatch, type DispatcherDeps } from "../../src/dispatcher/dispatcher";
import { ResponseCache } from "../../src/dispatcher/handlers";
import { CachedHostDirectory, type HostDirectory, RegistryHostDirectory, type RegistryReader } from "../../src/dispatcher/host-directory";
import { pathMatches } from "../../src/dispatcher/match";
import { setNamespaceForTests } from "../../src/worker/deploy/namespace";
import { setReleaseStoreForTests } from "../../src/worker/deploy/releases";
import type { HostEntry, ProxyRoute, Tenant } from "../../src/shared/types";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { FakeCloudflare } from "../helpers/fake-cloudflare";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/**
 * The dispatcher (issue 16 point 2) over the real registry (PlatformObject) and the proxy-routes API: host
 * resolution, route priority, every handler, the synthesized catch-all, the caches.
 */

const APEX = "localhost:8787";
const registry = () => env.PLATFORM.getByName("platform") as unknown as RegistryReader;

let cf: FakeCloudflare;
let upstream: { url: string; init: RequestInit | undefined }[];

beforeEach(() => {
  cf = new FakeCloudflare();
  cf.release("r1");
  setNamespaceForTests(() => cf.namespace());
  setReleaseStoreForTests(cf.store());
  upstream = [];
});
afterEach(() => {
  setNamespaceForTests(null);
  setReleaseStoreForTests(null);
});

/** A dispatcher whose CONTROL_PLANE is this worker (SELF) and whose namespace is the fake. */
function deps(overrides: Partial<DispatcherDeps> = {}): DispatcherDeps {
  return {
    directory: new RegistryHostDirectory(registry(), APEX),
    apexHost: APEX,
    bindings: { CONTROL_PLANE: SELF },
    namespace: cf.namespace(),
    cache: new ResponseCache(),
    fetch: async (input, init) => {
      upstream.push({ url: String(input), init });
      return new Response(`upstream ${String(input)}`, { status: 200, headers: { location: "http://upstream.internal/next?x=1", "cache-control": "public" } });
    },
    ...overrides,
  };
}

const get = (host: string, path = "/", init: RequestInit = {}) => new Request(`http://${host}${path}`, { ...init, headers: { host, ...(init.headers as Record<string, string>) } });

async function route(body: Record<string, unknown>): Promise<ProxyRoute> {
  const res = await mgmt("POST", "/proxy-routes", { body });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

async function readyWfp(): Promise<string> {
  const id = uniqueId("w");
  expect((await mgmt("POST", "/tenants", { body: { id, deployment_type: "wfp" } })).status).toBe(201);
  const deadline = Date.now() + 20_000;
  while (((await (await mgmt("GET", `/tenants/${id}`)).json()) as Tenant).provisioning_state === "pending") {
    if (Date.now() > deadline) throw new Error("still pending");
    await new Promise((r) => setTimeout(r, 50));
  }
  return id;
}

describe("host resolution", () => {
  it("an unknown host is 404 Unknown host; the apex goes to the control plane", async () => {
    const res = await dispatch(get("nobody.localhost:8787"), deps());
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ message: "Unknown host" });
    expect((await dispatch(get("example.org"), deps())).status).toBe(404);
    const apex = await dispatch(get(APEX, "/.well-known/openid-configuration"), deps());
    expect(apex.status).toBe(200);
    expect(((await apex.json()) as { issuer: string }).issuer).toBe("http://localhost:8787/");
  });

  it("a shared tenant's subdomain gets the synthesized catch-all to the shared worker", async () => {
    const id = await createTenant();
    const res = await dispatch(get(`${id}.${APEX}`, "/.well-known/openid-configuration"), deps());
    expect(res.status).toBe(200);
    expect(((await res.json()) as { issuer: string }).issuer).toBe(`http://${id}.${APEX}/`);
  });

  it("a wfp tenant routes to its script only once provisioning completed; a missing script is 404", async () => {
    const id = await readyWfp();
    const res = await dispatch(get(`${id}.${APEX}`, "/hello"), deps());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`copy tenant-${id}-auth at r1: /hello`);
    expect(res.headers.get("x-gatehouse-release")).toBe("default/r1");
    cf.scripts.delete(`tenant-${id}-auth`);
    const missing = await dispatch(get(`${id}.${APEX}`, "/hello"), deps());
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain(`tenant-${id}-auth`);
  });

  it("a pending tenant is an unknown host (its dispatch route is published when provisioning completes)", async () => {
    const id = uniqueId("w");
    cf.failNext(/d1\/database/, 100);
    expect((await mgmt("POST", "/tenants", { body: { id, deployment_type: "wfp" } })).status).toBe(201);
    expect((await dispatch(get(`${id}.${APEX}`), deps())).status).toBe(404);
  });

  it("SCRIPT_NAME_TEMPLATE picks the script with {tenant_id} and {host}", async () => {
    const id = await readyWfp();
    cf.scripts.set(`custom-${id}`, cf.scripts.get(`tenant-${id}-auth`) as never);
    const res = await dispatch(get(`${id}.${APEX}`, "/x"), deps({ scriptNameTemplate: "custom-{tenant_id}" }));
    expect(await res.text()).toContain(`copy custom-${id}`);
    const byHost = await dispatch(get(`${id}.${APEX}`, "/x"), deps({ scriptNameTemplate: "h-{host}" }));
    expect(byHost.status).toBe(404);
    expect(await byHost.text()).toContain(`h-${id}.${APEX}`);
  });
});

describe("two-slot upgrades move the route only after verify (issue 16 point 6)", () => {
  it("with SCRIPT_NAME_TEMPLATE set, the old slot answers while the staged one verifies, the new one right after the switch", async () => {
    const id = await readyWfp();
    cf.release("r2");
    const fresh = () => deps({ directory: new RegistryHostDirectory(registry(), APEX), scriptNameTemplate: "tenant-{tenant_id}-auth" });
    const held = cf.hold(`tenant-${id}-auth--b`);
    const started = await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", worker_version: "r2" } });
    expect(started.status).toBe(201);
    const op = (await started.json()) as { id: string };
    await held.reached;
    // The staged copy exists and is being verified; traffic still goes to the live slot on the old release.
    expect(cf.scripts.get(`tenant-${id}-auth--b`)?.metadata.tags).toContain("worker_version:r2");
    const during = await dispatch(get(`${id}.${APEX}`, "/hello"), fresh());
    expect(await during.text()).toBe(`copy tenant-${id}-auth at r1: /hello`);
    expect(((await (await mgmt("GET", `/tenants/${id}`)).json()) as Tenant).worker_version).toBe("r1");
    held.release();
    const deadline = Date.now() + 20_000;
    while (((await (await mgmt("GET", `/operations/${op.id}`)).json()) as { status: string }).status !== "succeeded") {
      if (Date.now() > deadline) throw new Error("upgrade did not finish");
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = await dispatch(get(`${id}.${APEX}`, "/hello"), fresh());
    expect(after.headers.get("x-gatehouse-release")).toBe("default/r2");
    expect(await after.text()).toBe(`copy tenant-${id}-auth--b at r2: /hello`);
    // A dispatcher that still has the old name cached reaches the promoted slot (the supervisor's alias).
    expect(await (await cf.namespace().fetchScript(`tenant-${id}-auth`, get(`${id}.${APEX}`, "/hello")))?.text()).toContain("at r2");
  });
});

describe("a wfp tenant's custom domains reach its copy (issue 16 with issue 15)", () => {
  it("the control plane mirrors the tenant's domains into its copy on create, verify and delete; the dispatcher routes the domain with a port", async () => {
    const id = await readyWfp();
    const script = () => cf.scripts.get(`tenant-${id}-auth`);
    expect(script()?.domains).toEqual([]);
    const domain = `login.${uniqueId("d")}.example.test`;
    const created = await mgmt("POST", "/custom-domains", { body: { domain, type: "auth0_managed_certs", tenant_id: id } });
    expect(created.status).toBe(201);
    const record = (await created.json()) as { custom_domain_id: string; status: string };
    expect(script()?.domains).toEqual([`${domain}:${record.status}`]);
    expect((await mgmt("POST", `/custom-domains/${record.custom_domain_id}/verify`)).status).toBe(200);
    expect(script()?.domains).toEqual([`${domain}:ready`]);
    // The dispatcher matches the name whatever its case and whatever port the development host carries.
    const res = await dispatch(get(`${domain.toUpperCase()}:8787`, "/hello"), deps());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`copy tenant-${id}-auth at r1: /hello`);
    // The domains survive a two-slot upgrade (the staged slot starts on a snapshot of the live storage).
    cf.release("r2");
    const op = (await (await mgmt("POST", `/tenants/${id}/operations`, { body: { kind: "upgrade", worker_version: "r2" } })).json()) as { id: string };
    const deadline = Date.now() + 20_000;
    while (((await (await mgmt("GET", `/operations/${op.id}`)).json()) as { status: string }).status !== "succeeded") {
      if (Date.now() > deadline) throw new Error("upgrade did not finish");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(cf.scripts.get(`tenant-${id}-auth--b`)?.domains).toEqual([`${domain}:ready`]);
    expect((await mgmt("DELETE", `/custom-domains/${record.custom_domain_id}`)).status).toBe(204);
    expect(cf.scripts.get(`tenant-${id}-auth--b`)?.domains).toEqual([]);
  });
});

describe("custom domains (the registry's custom_domains rows; issue 15 wires its own resolution into the seam)", () => {
  it("a custom domain routes to its tenant; its own routes and the tenant-wide ones apply, by priority", async () => {
    const id = await createTenant();
    const domain = `login.${id}.example`;
    const domainId = `cd_${id.replace(/-/g, "")}`;
    await runInDurableObject(env.PLATFORM.getByName("platform"), (_o, state) => {
      state.storage.sql.exec("INSERT INTO custom_domains (id, tenant_id, domain, type, created_at, updated_at) VALUES (?, ?, ?, 'self_managed_certs', 0, 0)", domainId, id, domain);
    });
    // No routes yet: the synthesized catch-all serves the tenant (shared: the shared worker) on its domain.
    const disc = await dispatch(get(domain, "/.well-known/openid-configuration"), deps());
    expect(disc.status).toBe(200);
    expect(((await disc.json()) as { issuer: string }).issuer).toBe(`https://${domain}/`);
    await route({ tenant_id: id, custom_domain_id: domainId, priority: 2, match: { path: "/hello" }, handlers: [{ type: "static", options: { status: 200, body: "domain route" } }] });
    await route({ tenant_id: id, priority: 1, match: { path: "/hello" }, handlers: [{ type: "static", options: { status: 200, body: "tenant-wide route" } }] });
    await route({ tenant_id: id, custom_domain_id: domainId, priority: 3, match: { path: "/only-domain" }, handlers: [{ type: "static", options: { status: 200, body: "only on the domain" } }] });
    expect(await (await dispatch(get(domain, "/hello"), deps())).text()).toBe("tenant-wide route");
    expect(await (await dispatch(get(domain, "/only-domain"), deps())).text()).toBe("only on the domain");
    // The subdomain sees only the tenant-wide routes.
    expect((await dispatch(get(`${id}.${APEX}`, "/only-domain"), deps())).status).toBe(404);
    // A route naming another tenant's domain is refused.
    const other = await createTenant();
    expect((await mgmt("POST", "/proxy-routes", { body: { tenant_id: other, custom_domain_id: domainId, handlers: [{ type: "static", options: { status: 200, body: "x" } }] } })).status).toBe(400);
  });
});

describe("route matching", () => {
  it("path patterns: /*, prefixes, exact paths and inner wildcards", () => {
    expect(pathMatches("/*", "/anything/at/all")).toBe(true);
    expect(pathMatches("/api/*", "/api")).toBe(true);
    expect(pathMatches("/api/*", "/api/v2/users")).toBe(true);
    expect(pathMatches("/api/*", "/apix")).toBe(false);
    expect(pathMatches("/exact", "/exact")).toBe(true);
    expect(pathMatches("/exact", "/exact/more")).toBe(false);
    expect(pathMatches("/u/*/edit", "/u/42/edit")).toBe(true);
    expect(pathMatches("/a.b", "/aXb")).toBe(false);
  });

  it("the first match by ascending priority wins, whatever the creation order; methods narrow a route", async () => {
    const id = await createTenant();
    await route({ tenant_id: id, priority: 20, match: { path: "/*" }, handlers: [{ type: "static", options: { status: 200, body: "fallback" } }] });
    await route({ tenant_id: id, priority: 10, match: { path: "/special/*" }, handlers: [{ type: "static", options: { status: 200, body: "special" } }] });
    await route({ tenant_id: id, priority: 5, match: { path: "/special/*", methods: ["POST"] }, handlers: [{ type: "static", options: { status: 201, body: "posted" } }] });
    const host = `${id}.${APEX}`;
    expect(await (await dispatch(get(host, "/special/x"), deps())).text()).toBe("special");
    expect(await (await dispatch(get(host, "/other"), deps())).text()).toBe("fallback");
    const posted = await dispatch(get(host, "/special/x", { method: "POST" }), deps());
    expect([posted.status, await posted.text()]).toEqual([201, "posted"]);
  });

  it("a host with routes but none matching is 404; explicit routes replace the synthesized one", async () => {
    const id = await createTenant();
    await route({ tenant_id: id, match: { path: "/only" }, handlers: [{ type: "static", options: { status: 200, body: "only" } }] });
    const res = await dispatch(get(`${id}.${APEX}`, "/.well-known/openid-configuration"), deps());
    expect(res.status).toBe(404);
  });
});

describe("handlers", () => {
  it("static, redirect (with and without the path), headers on request and response", async () => {
    const id = await createTenant();
    const host = `${id}.${APEX}`;
    await route({ tenant_id: id, priority: 1, match: { path: "/old/*" }, handlers: [{ type: "redirect", options: { location: "https://new.example/base", status: 308, preserve_path: true } }] });
    await route({ tenant_id: id, priority: 2, match: { path: "/go" }, handlers: [{ type: "redirect", options: { location: "https://new.example/x" } }] });
    await route({
      tenant_id: id,
      priority: 3,
      match: { path: "/h" },
      handlers: [
        { type: "headers", options: { request: { set: { "x-added": "yes" }, remove: ["x-drop"] }, response: { set: { "x-frame-options": "DENY" }, remove: ["location"] } } },
        { type: "http", options: { url: "http://upstream.internal/" } },
      ],
    });
    const moved = await dispatch(get(host, "/old/page?q=1"), deps());
    expect([moved.status, moved.headers.get("location")]).toEqual([308, "https://new.example/base/old/page?q=1"]);
    const go = await dispatch(get(host, "/go"), deps());
    expect([go.status, go.headers.get("location")]).toEqual([302, "https://new.example/x"]);
    const h = await dispatch(get(host, "/h", { headers: { "x-drop": "1" } }), deps());
    expect(h.headers.get("x-frame-options")).toBe("DENY");
    expect(h.headers.get("location")).toBeNull();
    const sent = new Headers(upstream[0]?.init?.headers);
    expect(sent.get("x-added")).toBe("yes");
    expect(sent.has("x-drop")).toBe(false);
    expect(sent.get("x-forwarded-host")).toBe(host);
  });

  it("http proxies to the upstream with the path and query; rewrite_location maps its Location back to the public host", async () => {
    const id = await createTenant();
    const host = `${id}.${APEX}`;
    await route({ tenant_id: id, handlers: [{ type: "rewrite_location", options: {} }, { type: "http", options: { url: "http://upstream.internal/prefix" } }] });
    const res = await dispatch(get(host, "/a/b?c=d", { method: "POST", body: "payload" }), deps());
    expect(upstream[0]?.url).toBe("http://upstream.internal/prefix/a/b?c=d");
    expect(upstream[0]?.init?.method).toBe("POST");
    expect(res.headers.get("location")).toBe(`http://${host}/next?x=1`);
  });

  it("cors answers allowed preflights and tags responses for allowed origins only", async () => {
    const id = await createTenant();
    const host = `${id}.${APEX}`;
    await route({ tenant_id: id, handlers: [{ type: "cors", options: { origins: ["https://app.example"], credentials: true } }, { type: "static", options: { status: 200, body: "ok" } }] });
    const pre = await dispatch(get(host, "/x", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } }), deps());
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(pre.headers.get("access-control-allow-credentials")).toBe("true");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    const other = await dispatch(get(host, "/x", { headers: { origin: "https://evil.example" } }), deps());
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const allowed = await dispatch(get(host, "/x", { headers: { origin: "https://app.example" } }), deps());
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  it("basic_auth admits only the right credentials, and the API never shows the password or its digest", async () => {
    const id = await createTenant();
    const host = `${id}.${APEX}`;
    const created = await route({ tenant_id: id, handlers: [{ type: "basic_auth", options: { username: "ops", password: "s3cret-pass", realm: "staging" } }, { type: "static", options: { status: 200, body: "in" } }] });
    expect(JSON.stringify(created)).not.toContain("s3cret-pass");
    expect(created.handlers[0]).toEqual({ type: "basic_auth", options: { username: "ops", realm: "staging" } });
    const stored = await runInDurableObject(env.PLATFORM.getByName("platform"), (_o, state) =>
      state.storage.sql.exec("SELECT handlers FROM proxy_routes WHERE id = ?", created.id).one(),
    );
    expect(String(stored.handlers)).not.toContain("s3cret-pass");
    expect(String(stored.handlers)).toMatch(/"password_sha256":"[0-9a-f]{64}"/);
    const none = await dispatch(get(host), deps());
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain('realm="staging"');
    const wrong = await dispatch(get(host, "/", { headers: { authorization: `Basic ${btoa("ops:nope-nope")}` } }), deps());
    expect(wrong.status).toBe(401);
    const right = await dispatch(get(host, "/", { headers: { authorization: `Basic ${btoa("ops:s3cret-pass")}` } }), deps());
    expect([right.status, await right.text()]).toEqual([200, "in"]);
  });

  it("service_binding forwards to the named binding; a missing binding is 502", async () => {
    const id = await createTenant();
    const host = `${id}.${APEX}`;
    await route({ tenant_id: id, priority: 1, match: { path: "/sb" }, handlers: [{ type: "service_binding", options: { binding: "OTHER" } }] });
    await route({ tenant_id: id, priority: 2, match: { path: "/gone" }, handlers: [{ type: "service_binding", options: { binding: "MISSING" } }] });
    const other = { fetch: async (r: Request) => new Response(`other saw ${new URL(r.url).pathname}`) };
    expect(await (await dispatch(get(host, "/sb"), deps({ bindings: { OTHER: other } }))).text()).toBe("other saw /sb");
    expect((await dispatch(get(host, "/gone"), deps())).status).toBe(502);
  });

  it("dispatch_namespace with an explicit binding and script name", async () => {
    const id = await createTenant();
    await route({ tenant_id: id, handlers: [{ type: "dispatch_namespace", options: { binding: "NS", script_name: "site-{tenant_id}" } }] });
    const seen: string[] = [];
    const NS = {
      get: (name: string) => ({
        fetch: async () => {
          seen.push(name);
          return new Response(`script ${name}`);
        },
      }),
    };
    expect(await (await dispatch(get(`${id}.${APEX}`), deps({ bindings: { NS } }))).text()).toBe(`script site-${id}`);
  });

  it("cache serves a GET from the isolate cache until its ttl passes", async () => {
    const id = await createTenant();
    const host = `${id}.${APEX}`;
    await route({ tenant_id: id, handlers: [{ type: "cache", options: { ttl_seconds: 30 } }, { type: "http", options: { url: "http://upstream.internal/" } }] });
    let t = 1_000_000;
    const d = deps({ now: () => t });
    expect((await dispatch(get(host, "/c"), d)).headers.get("x-proxy-cache")).toBe("MISS");
    const hit = await dispatch(get(host, "/c"), d);
    expect(hit.headers.get("x-proxy-cache")).toBe("HIT");
    expect(await hit.text()).toBe("upstream http://upstream.internal/c");
    expect(upstream).toHaveLength(1);
    t += 30_001;
    expect((await dispatch(get(host, "/c"), d)).headers.get("x-proxy-cache")).toBe("MISS");
    expect(upstream).toHaveLength(2);
    await dispatch(get(host, "/c", { method: "POST", body: "x" }), d);
    expect(upstream).toHaveLength(3);
  });
});

describe("the host cache", () => {
  function counting(entry: HostEntry | null) {
    const calls: string[] = [];
    const inner: HostDirectory = {
      lookup: async (host) => {
        calls.push(host);
        return entry;
      },
    };
    return { calls, inner };
  }
  const entry = (state: "ready" | "pending"): HostEntry => ({
    host: "a.localhost:8787",
    tenant: { id: "a", deployment_type: "wfp", provisioning_state: state, worker_script_name: "tenant-a-auth", worker_version: "r1" },
    custom_domain: null,
    routes: [],
  });

  it("keeps answers for the ttl and misses for the negative ttl", async () => {
    let t = 0;
    const hit = counting(entry("ready"));
    const cached = new CachedHostDirectory(hit.inner, 30_000, 5_000, () => t);
    await cached.lookup("a.localhost:8787");
    t = 29_999;
    await cached.lookup("a.localhost:8787");
    expect(hit.calls).toHaveLength(1);
    t = 30_000;
    await cached.lookup("a.localhost:8787");
    expect(hit.calls).toHaveLength(2);

    t = 0;
    const miss = counting(null);
    const negative = new CachedHostDirectory(miss.inner, 30_000, 5_000, () => t);
    expect(await negative.lookup("x")).toBeNull();
    t = 4_999;
    await negative.lookup("x");
    expect(miss.calls).toHaveLength(1);
    t = 5_000;
    await negative.lookup("x");
    expect(miss.calls).toHaveLength(2);
  });

  it("a tenant that is not ready yet is kept only for the negative ttl, so it routes soon after provisioning", async () => {
    let t = 0;
    const pending = counting(entry("pending"));
    const cached = new CachedHostDirectory(pending.inner, 30_000, 5_000, () => t);
    await cached.lookup("a.localhost:8787");
    t = 5_000;
    await cached.lookup("a.localhost:8787");
    expect(pending.calls).toHaveLength(2);
  });

  it("a newly created tenant is unknown until the cached miss expires", async () => {
    const id = uniqueId();
    let t = 1_000;
    const directory = new CachedHostDirectory(new RegistryHostDirectory(registry(), APEX), 30_000, 5_000, () => t);
    expect((await dispatch(get(`${id}.${APEX}`), deps({ directory }))).status).toBe(404);
    await createTenant(id);
    expect((await dispatch(get(`${id}.${APEX}`), deps({ directory }))).status).toBe(404);
    t += 5_000;
    expect((await dispatch(get(`${id}.${APEX}`, "/.well-known/openid-configuration"), deps({ directory }))).status).toBe(200);
  });
});

describe("/api/v2/proxy-routes", () => {
  it("validates every handler's options on write, with no partial write", async () => {
    const id = await createTenant();
    const bad = [
      [{ type: "static", options: { status: 99, body: "x" } }],
      [{ type: "cors", options: { origins: ["https://a.example/path"] } }],
      [{ type: "redirect", options: { location: "not a url" } }],
      [{ type: "http", options: { url: "ftp://x.example" } }],
      [{ type: "cache", options: { ttl_seconds: 0 } }],
      [{ type: "basic_auth", options: { username: "a:b", password: "longenough" } }],
      [{ type: "headers", options: { response: { set: { "x-a": "line\r\nbreak" } } } }],
      [{ type: "service_binding", options: {} }],
      [{ type: "dispatch_namespace", options: { script_name: "../x" } }],
      [{ type: "rewrite_location", options: { from: 1 } }],
      [{ type: "teleport", options: {} }],
      [{ type: "static", options: { status: 200, body: "x", extra: true } }],
      [],
    ];
    for (const handlers of bad) {
      const res = await mgmt("POST", "/proxy-routes", { body: { tenant_id: id, handlers } });
      expect(res.status, JSON.stringify(handlers)).toBe(400);
      expect(((await res.json()) as { errorCode: string }).errorCode).toBe("invalid_body");
    }
    expect((await mgmt("POST", "/proxy-routes", { body: { tenant_id: id, match: { path: "no-slash" }, handlers: [{ type: "static", options: { status: 200, body: "x" } }] } })).status).toBe(400);
    expect((await mgmt("POST", "/proxy-routes", { body: "{oops" })).status).toBe(400);
    expect((await mgmt("POST", "/proxy-routes", { body: { tenant_id: "no-such-tenant", handlers: [{ type: "static", options: { status: 200, body: "x" } }] } })).status).toBe(404);
    expect(await (await mgmt("GET", `/proxy-routes?tenant_id=${id}`)).json()).toEqual([]);
  });

  it("creates, lists by priority, reads, updates and deletes", async () => {
    const id = await createTenant();
    const a = await route({ tenant_id: id, priority: 5, handlers: [{ type: "static", options: { status: 200, body: "a" } }] });
    const b = await route({ tenant_id: id, priority: 1, match: { path: "/b/*" }, handlers: [{ type: "static", options: { status: 200, body: "b" } }] });
    expect(a).toMatchObject({ tenant_id: id, custom_domain_id: null, priority: 5, match: { path: "/*" } });
    const list = (await (await mgmt("GET", `/proxy-routes?tenant_id=${id}`)).json()) as ProxyRoute[];
    expect(list.map((r) => r.id)).toEqual([b.id, a.id]);
    const patched = await mgmt("PATCH", `/proxy-routes/${a.id}`, { body: { priority: 0 } });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id: a.id, priority: 0 });
    expect((await mgmt("PATCH", `/proxy-routes/${a.id}`, { body: {} })).status).toBe(400);
    expect((await mgmt("GET", `/proxy-routes/${a.id}`)).status).toBe(200);
    expect((await mgmt("DELETE", `/proxy-routes/${a.id}`)).status).toBe(204);
    const gone = await mgmt("GET", `/proxy-routes/${a.id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ errorCode: "inexistent_proxy_route" });
    expect((await mgmt("DELETE", `/proxy-routes/${a.id}`)).status).toBe(404);
    expect((await mgmt("PATCH", `/proxy-routes/${a.id}`, { body: { priority: 1 } })).status).toBe(404);
  });

  it("who can reach it: tenants read their own routes, only the control plane writes", async () => {
    const kit = await reachKit(["read:proxy_routes", "create:proxy_routes", "update:proxy_routes", "delete:proxy_routes"]);
    const mine = await route({ tenant_id: kit.tenant, handlers: [{ type: "static", options: { status: 200, body: "x" } }] });
    const other = await route({ tenant_id: await createTenant(), handlers: [{ type: "static", options: { status: 200, body: "x" } }] });
    const body = { tenant_id: kit.tenant, handlers: [{ type: "static", options: { status: 200, body: "x" } }] };
    await expectRefusals(kit, "GET", "/proxy-routes", "read:proxy_routes");
    await expectRefusals(kit, "GET", `/proxy-routes/${mine.id}`, "read:proxy_routes");
    await expectRefusals(kit, "POST", "/proxy-routes", "create:proxy_routes", body);
    await expectRefusals(kit, "PATCH", `/proxy-routes/${mine.id}`, "update:proxy_routes", { priority: 3 });
    await expectRefusals(kit, "DELETE", `/proxy-routes/${mine.id}`, "delete:proxy_routes");
    const as = (method: string, path: string, b?: unknown) => mgmt(method, path, { token: kit.allowed, headers: { "tenant-id": kit.tenant }, ...(b ? { body: b } : {}) });
    expect(((await (await as("GET", "/proxy-routes")).json()) as ProxyRoute[]).map((r) => r.id)).toEqual([mine.id]);
    expect((await as("GET", `/proxy-routes/${mine.id}`)).status).toBe(200);
    expect((await as("GET", `/proxy-routes/${other.id}`)).status).toBe(404);
    expect((await as("POST", "/proxy-routes", body)).status).toBe(403);
    expect((await as("PATCH", `/proxy-routes/${mine.id}`, { priority: 3 })).status).toBe(403);
    expect((await as("DELETE", `/proxy-routes/${mine.id}`)).status).toBe(403);
  });
});
