/**
 * The rows of `npm run bench`. EXTENSION POINT: add a scenario object to SCENARIOS (and, if it should be read
 * against another row, a ratio to RATIOS); nothing else in the runner needs to change.
 *
 * Two kinds of scenario:
 * - `kind: "load"`: `setup(ctx)` returns the request to hammer with autocannon (bounded connections and
 *   duration), as `{ method, path, headers?, body? }`; for requests that must differ each time (single-use
 *   codes, fresh logins) return `{ requests: [...] }` with autocannon's `setupRequest(req, context)` hooks
 *   instead. The runner first sends one request with fetch and refuses to measure if it is not `expectStatus`.
 * - `kind: "probe"`: `run(ctx)` returns a number per second measured some other way (e.g. inside the worker),
 *   or `{ perSecond, ...facts }` whose facts (e.g. `ms`) are kept on the row for ratios.
 *
 * A load scenario whose unit is several requests (a whole flow) says so with `requestsPerUnit`: its rate is
 * the request rate divided by it; one whose steps answer redirects (/authorize) says `redirectsAnswer: true`
 * so that its 3xx answers are not counted as failures.
 *
 * `ctx` (see scripts/bench.mjs): `baseUrl` (http://localhost:PORT), `host` (Host header value, the apex),
 * `clientId` / `clientSecret` (control-plane client), `fetch(path, init)`, `managementToken()`,
 * `signRate(alg, n)`.
 */

import { MODERN_OAUTH_RATIOS, modernOAuthScenarios } from "./modern-oauth.mjs";
import { CUSTOM_DB_RATIOS, CUSTOM_DB_SCENARIOS } from "./custom-db.mjs";
import { CONSOLE_RATIOS, consoleScenarios } from "./console.mjs";

const form = (fields) => new URLSearchParams(fields).toString();

/** @type {Array<object>} */
/** A rotation floor's request, after every one of its 1,000 user objects exists and is warm, as the seeded rotation rows' are. */
async function warmRotationFloor(ctx, path, client = { clientId: ctx.clientId, clientSecret: ctx.clientSecret }) {
  const request = {
    method: "POST",
    path,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form({ grant_type: "refresh_token", refresh_token: "floor.".padEnd(80, "x"), client_id: client.clientId, client_secret: client.clientSecret }),
  };
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(Array.from({ length: 50 }, () => ctx.fetch(request.path, { method: "POST", headers: request.headers, body: request.body }).then((r) => r.text())));
  }
  return request;
}

/**
 * The tenant whose users the guarded rotation floor reads (src/worker/bench.ts, `STANDING_FLOOR_TENANT`): created
 * over the API with an `email` connection, then 1,000 users seeded in the object (`email|bench0` ...).
 */
async function standingFloorTenant(ctx) {
  const id = "bench-floor-standing";
  const json = { authorization: `Bearer ${await ctx.managementToken()}`, "content-type": "application/json" };
  const created = await ctx.fetch("/api/v2/tenants", { method: "POST", headers: json, body: JSON.stringify({ id, name: id }) });
  if (created.status === 409) return;
  if (created.status !== 201) throw new Error(`create tenant: HTTP ${created.status} ${await created.text()}`);
  const connection = await ctx.fetch("/api/v2/connections", { method: "POST", headers: { ...json, "tenant-id": id }, body: JSON.stringify({ name: "email", strategy: "email" }) });
  if (connection.status !== 201) throw new Error(`create connection: HTTP ${connection.status} ${await connection.text()}`);
  const seeded = await ctx.fetch(`/__bench/users-seed?${new URLSearchParams({ tenant: id, from: "0", count: "1000" })}`, { method: "POST" });
  if (!seeded.ok) throw new Error(`/__bench/users-seed: HTTP ${seeded.status} ${await seeded.text()}`);
}

export const SCENARIOS = [
  {
    id: "hello",
    label: "hello route (GET /__bench/hello)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: () => ({ method: "GET", path: "/__bench/hello" }),
  },
  {
    id: "token",
    label: "client_credentials tokens (POST /oauth/token)",
    unit: "tokens/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => ({
      method: "POST",
      path: "/oauth/token",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form({
        grant_type: "client_credentials",
        client_id: ctx.clientId,
        client_secret: ctx.clientSecret,
        audience: "urn:gatehouse:management",
      }),
    }),
  },
  {
    id: "token_floor",
    label: "floor of a token response: form body read, one ES256 signature, JSON (POST /__bench/token-floor)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => ({
      method: "POST",
      path: "/__bench/token-floor",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form({ grant_type: "client_credentials", client_id: ctx.clientId, client_secret: ctx.clientSecret, audience: "urn:bench:floor" }),
    }),
  },
  {
    id: "token_floor_replay",
    label: "the token floor plus one DPoP replay check: one tenant-object RPC recording a jti in a transaction (POST /__bench/token-floor?replay=1)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => ({
      method: "POST",
      path: "/__bench/token-floor?replay=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form({ grant_type: "client_credentials", client_id: ctx.clientId, client_secret: ctx.clientSecret, audience: "urn:bench:floor" }),
    }),
  },
  {
    id: "jwks",
    label: "JWKS (GET /.well-known/jwks.json)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: () => ({ method: "GET", path: "/.well-known/jwks.json" }),
  },
  {
    id: "jwks_floor",
    label: "floor of a JWKS answer: the JWKS's bytes as JSON with its caching header, no tenant (/__bench/jwks-floor)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const bytes = (await (await ctx.fetch("/.well-known/jwks.json")).text()).length;
      return { method: "GET", path: `/__bench/jwks-floor?bytes=${bytes}` };
    },
  },
  {
    id: "sign_rs256",
    label: "raw in-worker RS256 signs (/__bench/sign)",
    unit: "signs/s",
    kind: "probe",
    run: (ctx) => ctx.signRate("RS256", 600),
  },
  {
    id: "sign_es256",
    label: "raw in-worker ES256 signs (/__bench/sign)",
    unit: "signs/s",
    kind: "probe",
    run: (ctx) => ctx.signRate("ES256", 5000),
  },
  {
    id: "code_exchange",
    label: "authorization-code exchanges (POST /oauth/token)",
    unit: "exchanges/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const app = await loginApp(ctx);
      const codes = await mintCodes(ctx, app, CODES_TO_MINT);
      return {
        requests: [
          {
            method: "POST",
            path: "/oauth/token",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            // Each request redeems its own single-use code; a drained pool would show up as failures.
            setupRequest: (req) => ({
              ...req,
              body: form({ grant_type: "authorization_code", code: codes.pop() ?? "drained", redirect_uri: CALLBACK, client_id: app.clientId, client_secret: app.clientSecret }),
            }),
          },
        ],
      };
    },
  },
  {
    id: "login_page",
    label: "login page renders (GET /u2/login?state=...)",
    unit: "pages/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const app = await loginApp(ctx);
      const res = await ctx.fetch(`/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: CALLBACK, response_type: "code", scope: "openid" })}`, { redirect: "manual" });
      const location = res.headers.get("location") ?? "";
      if (!location.startsWith("/u2/login?state=")) throw new Error(`/authorize answered ${res.status} ${location}`);
      return { method: "GET", path: location };
    },
  },
  {
    // Issue 29 point 1: what a login page costs at the least when it reads its login session from the tenant
    // object (the tenant resolved, one RPC, a fixed document the size of the plain login page). The login page
    // row itself shows the session /authorize just wrote from the isolate's cache (login-session-cache.ts).
    id: "login_page_floor",
    label: "floor of a login page: tenant resolved, one tenant-object RPC reading the login session, fixed HTML of the page's size (/__bench/page-floor)",
    unit: "pages/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const app = await loginApp(ctx);
      const res = await ctx.fetch(`/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: CALLBACK, response_type: "code", scope: "openid" })}`, { redirect: "manual" });
      const location = res.headers.get("location") ?? "";
      const state = new URL(location, "http://x").searchParams.get("state") ?? "";
      const bytes = new TextEncoder().encode(await (await ctx.fetch(location)).text()).length;
      return { method: "GET", path: `/__bench/page-floor?${new URLSearchParams({ state, bytes: String(bytes) })}` };
    },
  },
  {
    // Issue 29 point 5: the same page with a theme and a Liquid page template on the control plane (both
    // stay set: rows after this one render themed pages).
    id: "login_page_themed",
    label: "login page renders with a custom theme and page template (GET /u2/login?state=...)",
    unit: "pages/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const app = await loginApp(ctx);
      await brand(ctx);
      const res = await ctx.fetch(`/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: CALLBACK, response_type: "code", scope: "openid" })}`, { redirect: "manual" });
      const location = res.headers.get("location") ?? "";
      if (!location.startsWith("/u2/login?state=")) throw new Error(`/authorize answered ${res.status} ${location}`);
      const page = await (await ctx.fetch(location)).text();
      if (!page.includes('id="bench-header"') || !page.includes("--gh-widget-radius:20px")) throw new Error("the login page is not themed");
      return { method: "GET", path: location };
    },
  },
  {
    id: "relay_1k",
    label: "outbox relay to the logs table, backlog 1,000 (/__bench/relay)",
    unit: "events/s",
    kind: "probe",
    run: (ctx) => relayRate(ctx, 1000),
  },
  {
    id: "relay_100k",
    label: "outbox relay to the logs table, backlog 100,000 (/__bench/relay)",
    unit: "events/s",
    kind: "probe",
    run: (ctx) => relayRate(ctx, 100_000),
  },
  {
    id: "commit_bare",
    label: "in-object PATCH /branding commits without an event (/__bench/commit)",
    unit: "commits/s",
    kind: "probe",
    run: async (ctx) => (await commitCost(ctx)).bare,
  },
  {
    id: "commit_outbox",
    label: "in-object PATCH /branding commits with their outbox event (/__bench/commit)",
    unit: "commits/s",
    kind: "probe",
    run: async (ctx) => (await commitCost(ctx)).outbox,
  },
  {
    id: "mgmt_write",
    label: "management writes, outbox on (PATCH /api/v2/branding)",
    unit: "writes/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => brandingWrites(ctx, true),
  },
  {
    id: "mgmt_write_direct",
    label: "management writes, outbox off: logs written at commit (PATCH /api/v2/branding)",
    unit: "writes/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => brandingWrites(ctx, false),
  },
  {
    id: "refresh_spread",
    label: "refresh rotations, 1,000 users (POST /oauth/token refresh_token)",
    unit: "rotations/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => rotationLoad(ctx, { users: 1000, families: 1 }),
  },
  {
    id: "refresh_spread_api",
    label: "refresh rotations for an API, no openid (access token only), 1,000 users",
    unit: "rotations/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => rotationLoad(ctx, { users: 1000, families: 1, api: true }),
  },
  {
    id: "rotation_floor",
    label: "floor of a rotation: body read, two hashes, one user-object upsert (of 1,000), one RS256 signature (/__bench/rotation-floor)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => warmRotationFloor(ctx, "/__bench/rotation-floor"),
  },
  {
    id: "rotation_floor_reuse",
    label: "floor of a rotation with reuse detection: the rotation floor, its user-object write being read the presented row, insert the successor, mark it rotated (/__bench/rotation-floor?reuse=1)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => warmRotationFloor(ctx, "/__bench/rotation-floor?reuse=1"),
  },
  {
    id: "rotation_floor_guarded",
    label: "floor of a rotation with its kept guarantees: the floor with reuse detection, and in parallel the one tenant read a refresh grant keeps (the user's standing, of 1,000 users) (/__bench/rotation-floor?reuse=1&standing=1)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: async (ctx) => {
      await standingFloorTenant(ctx);
      return warmRotationFloor(ctx, "/__bench/rotation-floor?reuse=1&standing=1");
    },
  },
  {
    id: "rotation_floor_endpoint",
    label: "floor of a rotation with its kept guarantees through the token endpoint's front: the auth surface's middleware and the request's checks and client authentication (tokenRequest), then the guarded floor (/__bench/rotation-floor-endpoint)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: async (ctx) => {
      await standingFloorTenant(ctx);
      return warmRotationFloor(ctx, "/__bench/rotation-floor-endpoint", await refreshClient(ctx, "bench rotation floor (endpoint)"));
    },
  },
  {
    id: "rotation_floor_no_write",
    label: "the rotation floor without its user-object RPC and write (/__bench/rotation-floor?write=0)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => ({
      method: "POST",
      path: "/__bench/rotation-floor?write=0",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form({ grant_type: "refresh_token", refresh_token: "floor.".padEnd(80, "x"), client_id: ctx.clientId, client_secret: ctx.clientSecret }),
    }),
  },
  {
    id: "refresh_hot",
    label: "refresh rotations, one hot user (a family per connection)",
    unit: "rotations/s",
    kind: "load",
    expectStatus: 200,
    setup: (ctx) => rotationLoad(ctx, { users: 1, families: 64 }),
  },
  {
    id: "sign_eddsa",
    label: "raw in-worker EdDSA signs (/__bench/sign)",
    unit: "signs/s",
    kind: "probe",
    run: (ctx) => ctx.signRate("EdDSA", 5000),
  },
  algTokenScenario("ES256"),
  algTokenScenario("EdDSA"),
  {
    id: "org_code_exchange",
    label: "authorization-code exchanges in an organization (POST /oauth/token, org_id in both tokens)",
    unit: "exchanges/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const app = await loginApp(ctx);
      const org = await benchOrganization(ctx, app);
      const codes = await mintCodes(ctx, app, CODES_TO_MINT, { organization: org.id });
      return {
        requests: [
          {
            method: "POST",
            path: "/oauth/token",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            setupRequest: (req) => ({
              ...req,
              body: form({ grant_type: "authorization_code", code: codes.pop() ?? "drained", redirect_uri: CALLBACK, client_id: app.clientId, client_secret: app.clientSecret }),
            }),
          },
        ],
      };
    },
  },
  // Users (issue 9): creation without bcrypt, point read, searches and full checkpoint walks at 100,000.
  {
    id: "users_create",
    label: "users created through the API, passwordless (POST /api/v2/users)",
    unit: "users/s",
    kind: "load",
    expectStatus: 201,
    setup: (ctx) => userCreations(ctx),
  },
  {
    id: "users_seed",
    label: "in-object user inserts with identity + trigram index, 100,000 in one tenant (/__bench/users-seed)",
    unit: "users/s",
    kind: "probe",
    run: async (ctx) => (await usersTenant(ctx, 100_000)).seedRate,
  },
  {
    id: "users_get",
    label: "point read at 100,000 users (GET /api/v2/users/{id})",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: async (ctx) => usersRequest(await usersTenant(ctx, 100_000), `/api/v2/users/${encodeURIComponent("email|bench50000")}`),
  },
  {
    id: "users_q_substring",
    label: "substring search at 100,000 users (GET /api/v2/users?q=er-5123)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: async (ctx) => usersRequest(await usersTenant(ctx, 100_000), "/api/v2/users?q=er-5123&search_engine=v3"),
  },
  {
    id: "users_q_email",
    label: "exact-email search at 100,000 users (GET /api/v2/users?q=email:...)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: async (ctx) => usersRequest(await usersTenant(ctx, 100_000), `/api/v2/users?q=${encodeURIComponent("email:bench-user-77777@example.com")}&search_engine=v3`),
  },
  {
    id: "import_rows",
    label: "bulk import, 20,000 rows in 4 jobs of 5,000 (POST /api/v2/jobs/users-imports until every job completed)",
    unit: "rows/s",
    kind: "probe",
    run: (ctx) => importRate(ctx, 4, 5_000),
  },
  {
    id: "users_walk_10k",
    label: "full checkpoint walk, 10,000 users, take=100 (GET /api/v2/users?take=100&from=...)",
    unit: "users/s",
    kind: "probe",
    run: (ctx) => usersWalk(ctx, 10_000),
  },
  {
    id: "users_walk_100k",
    label: "full checkpoint walk, 100,000 users, take=100 (GET /api/v2/users?take=100&from=...)",
    unit: "users/s",
    kind: "probe",
    run: (ctx) => usersWalk(ctx, 100_000),
  },
  {
    id: "sso_login",
    label: "SSO logins, no action (GET /authorize with a session: a code per request)",
    unit: "logins/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const app = await loginApp(ctx);
      return ssoLogin(app);
    },
  },
  {
    // Last: it binds a post-login action on the control plane, which every later login would run.
    id: "sso_login_action",
    label: "SSO logins with one bound post-login action (Worker Loader sandbox; sets a custom claim)",
    unit: "logins/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const app = await loginApp(ctx);
      await bindBenchAction(ctx);
      return ssoLogin(app);
    },
  },
  // ---- EXTENSION POINT: later rows go here ---------------------------------------------------------------
];

const usersTenants = new Map();

/**
 * A tenant with an `email` (passwordless) connection and `size` users seeded in bulk by the bench-only route,
 * created once per size and reused by every users row; `seedRate` is the in-object insert rate.
 */
async function usersTenant(ctx, size) {
  if (usersTenants.has(size)) return usersTenants.get(size);
  const token = await ctx.managementToken();
  const id = `bench-users-${size}-${Date.now().toString(36)}`;
  const json = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = await ctx.fetch("/api/v2/tenants", { method: "POST", headers: json, body: JSON.stringify({ id, name: id }) });
  if (created.status !== 201) throw new Error(`create tenant: HTTP ${created.status} ${await created.text()}`);
  const connection = await ctx.fetch("/api/v2/connections", { method: "POST", headers: { ...json, "tenant-id": id }, body: JSON.stringify({ name: "email", strategy: "email" }) });
  if (connection.status !== 201) throw new Error(`create connection: HTTP ${connection.status} ${await connection.text()}`);
  let ms = 0;
  for (let from = 0; from < size; from += 10_000) {
    const res = await ctx.fetch(`/__bench/users-seed?${new URLSearchParams({ tenant: id, from: String(from), count: String(Math.min(10_000, size - from)) })}`, { method: "POST" });
    if (!res.ok) throw new Error(`/__bench/users-seed: HTTP ${res.status} ${await res.text()}`);
    ms += (await res.json()).ms;
  }
  const tenant = { id, token, size, seedRate: Math.round((size * 1000) / Math.max(ms, 1)) };
  usersTenants.set(size, tenant);
  return tenant;
}

const usersRequest = (tenant, path) => ({ method: "GET", path, headers: { authorization: `Bearer ${tenant.token}`, "tenant-id": tenant.id } });

/** POST /api/v2/users on a fresh tenant's passwordless connection, each request with its own email. */
async function userCreations(ctx) {
  const tenant = await usersTenant(ctx, 1);
  let n = 0;
  return {
    requests: [
      {
        method: "POST",
        path: "/api/v2/users",
        headers: { authorization: `Bearer ${tenant.token}`, "tenant-id": tenant.id, "content-type": "application/json" },
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ connection: "email", email: `load-${n++}-${Date.now()}@example.com` }) }),
      },
    ],
  };
}

/**
 * Bulk import throughput (issue 14 point 5): a fresh tenant, `jobs` files of `rows` users (every 10th with a
 * bcrypt hash, as imports carry), all posted at once; the rate is rows over the time from the first post to
 * the last job's completion (staging, the alarm's chunks and their commits), polled every 100 ms.
 */
async function importRate(ctx, jobs, rows) {
  const token = await ctx.managementToken();
  const id = `bench-import-${Date.now().toString(36)}`;
  const json = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = await ctx.fetch("/api/v2/tenants", { method: "POST", headers: json, body: JSON.stringify({ id, name: id }) });
  if (created.status !== 201) throw new Error(`create tenant: HTTP ${created.status} ${await created.text()}`);
  const auth = { authorization: `Bearer ${token}`, "tenant-id": id };
  const connections = await (await ctx.fetch("/api/v2/connections", { headers: auth })).json();
  const connection = connections.find((c) => c.name === "Username-Password-Authentication").id;
  const hash = (await import("bcryptjs")).default.hashSync("bench-import", 4);
  const files = Array.from({ length: jobs }, (_, j) =>
    JSON.stringify(Array.from({ length: rows }, (_, i) => ({ email: `imp-${j}-${i}@example.com`, given_name: `Imp ${i}`, ...(i % 10 === 0 ? { password_hash: hash } : {}) }))),
  );
  const started = performance.now();
  const ids = await Promise.all(
    files.map(async (text) => {
      const form = new FormData();
      form.append("users", new Blob([text], { type: "application/json" }), "users.json");
      form.append("connection_id", connection);
      const res = await ctx.fetch("/api/v2/jobs/users-imports", { method: "POST", headers: auth, body: form });
      if (res.status !== 201) throw new Error(`import: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()).id;
    }),
  );
  for (;;) {
    const states = await Promise.all(ids.map(async (job) => (await (await ctx.fetch(`/api/v2/jobs/${job}`, { headers: auth })).json())));
    const failed = states.find((s) => s.status === "failed" || (s.status === "completed" && s.summary.inserted !== rows));
    if (failed) throw new Error(`import job ${failed.id}: ${failed.status} ${JSON.stringify(failed.summary)} ${failed.status_details ?? ""}`);
    if (states.every((s) => s.status === "completed")) break;
    if (performance.now() - started > 600_000) throw new Error("import did not complete in 10 minutes");
    await new Promise((r) => setTimeout(r, 100));
  }
  const ms = performance.now() - started;
  return { perSecond: Math.round((jobs * rows * 1000) / ms), ms: Math.round(ms) };
}

/** Walks every user of a seeded tenant with take=100, one page after another; answers users/s and the time. */
async function usersWalk(ctx, size) {
  const tenant = await usersTenant(ctx, size);
  const headers = { authorization: `Bearer ${tenant.token}`, "tenant-id": tenant.id };
  const started = Date.now();
  let seen = 0;
  let from = "";
  for (;;) {
    const res = await ctx.fetch(`/api/v2/users?take=100${from ? `&from=${from}` : ""}`, { headers });
    if (!res.ok) throw new Error(`walk: HTTP ${res.status} ${await res.text()}`);
    const body = await res.json();
    seen += body.users.length;
    if (!body.next) break;
    from = body.next;
  }
  const ms = Date.now() - started;
  if (seen !== size) throw new Error(`walk saw ${seen} users, expected ${size}`);
  return { perSecond: Math.round((seen * 1000) / Math.max(ms, 1)), ms };
}

/**
 * Issue 11: the bench app allows organizations, and an organization whose database connection assigns
 * membership on login, so the bench user (logged in by SSO) joins it on the first code minted in it.
 */
async function benchOrganization(ctx, app) {
  const token = await ctx.managementToken();
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const patched = await ctx.fetch(`/api/v2/clients/${app.clientId}`, { method: "PATCH", headers, body: JSON.stringify({ organization_usage: "allow" }) });
  if (patched.status !== 200) throw new Error(`allow organizations: HTTP ${patched.status} ${await patched.text()}`);
  const connections = await (await ctx.fetch("/api/v2/connections?name=Username-Password-Authentication", { headers })).json();
  const body = { name: `bench-${Date.now().toString(36)}`, enabled_connections: [{ connection_id: connections[0].id, assign_membership_on_login: true }] };
  const created = await ctx.fetch("/api/v2/organizations", { method: "POST", headers, body: JSON.stringify(body) });
  if (created.status !== 201) throw new Error(`create organization: HTTP ${created.status} ${await created.text()}`);
  return created.json();
}

/**
 * GET /authorize with the app's session: the post-login actions run, then a code is issued. `form_post` so the
 * answer is a 200 page carrying the code (autocannon counts a 302 as a failure).
 */
function ssoLogin({ clientId, session }) {
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: "code", response_mode: "form_post", scope: "openid profile" });
  return { method: "GET", path: `/authorize?${query}`, headers: { cookie: session } };
}

/** Creates, deploys and binds one post-login action on the control plane (issue 13 bench row). */
async function bindBenchAction(ctx) {
  const token = await ctx.managementToken();
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const code = 'exports.onExecutePostLogin = async (event, api) => { api.idToken.setCustomClaim("https://bench.example/plan", "gold"); };';
  const created = await ctx.fetch("/api/v2/actions/actions", {
    method: "POST",
    headers,
    body: JSON.stringify({ name: `bench-${Date.now()}`, supported_triggers: [{ id: "post-login", version: "v3" }], code, deploy: true }),
  });
  if (created.status !== 201) throw new Error(`create action: HTTP ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  const bound = await ctx.fetch("/api/v2/actions/triggers/post-login/bindings", { method: "PATCH", headers, body: JSON.stringify({ bindings: [{ ref: { type: "action_id", value: id } }] }) });
  if (bound.status !== 200) throw new Error(`bind action: HTTP ${bound.status} ${await bound.text()}`);
}

/**
 * client_credentials tokens for an API whose `signing_alg` is `alg` (issue 14): the API and the control-plane
 * client's grant are created through the management API, which also adds a key of that algorithm.
 */
function algTokenScenario(alg) {
  return {
    id: `token_${alg.toLowerCase()}`,
    label: `client_credentials tokens, ${alg} API (POST /oauth/token)`,
    unit: "tokens/s",
    kind: "load",
    expectStatus: 200,
    async setup(ctx) {
      const token = await ctx.managementToken();
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const identifier = `urn:bench:${alg.toLowerCase()}:${Date.now()}`;
      const api = await ctx.fetch("/api/v2/resource-servers", { method: "POST", headers, body: JSON.stringify({ identifier, signing_alg: alg, scopes: [{ value: "read:bench", description: "bench" }] }) });
      if (api.status !== 201) throw new Error(`create ${alg} API: ${api.status} ${await api.text()}`);
      const grant = await ctx.fetch("/api/v2/client-grants", { method: "POST", headers, body: JSON.stringify({ client_id: ctx.clientId, audience: identifier, scope: ["read:bench"] }) });
      if (grant.status !== 201) throw new Error(`grant ${alg} API: ${grant.status} ${await grant.text()}`);
      return {
        method: "POST",
        path: "/oauth/token",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form({ grant_type: "client_credentials", client_id: ctx.clientId, client_secret: ctx.clientSecret, audience: identifier }),
      };
    },
  };
}

const CALLBACK = "http://localhost/callback";
/** Enough single-use codes for the warm-up and the measured run at well above the expected rate. */
const CODES_TO_MINT = 12_000;
let app;

/**
 * A regular web app and a user on the control plane, logged in once through the real login page; the
 * returned session cookie lets /authorize mint codes by SSO without the page.
 */
async function loginApp(ctx) {
  if (app) return app;
  const token = await ctx.managementToken();
  const created = await ctx.fetch("/api/v2/clients", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench web app", app_type: "regular_web", callbacks: [CALLBACK] }),
  });
  if (created.status !== 201) throw new Error(`create client: HTTP ${created.status} ${await created.text()}`);
  const { client_id: clientId, client_secret: clientSecret } = await created.json();
  const email = `bench-${Date.now()}@example.com`;
  const password = "bench-password-123";
  const signup = await ctx.fetch("/dbconnections/signup", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email, password, connection: "Username-Password-Authentication" }),
  });
  if (signup.status !== 200) throw new Error(`signup: HTTP ${signup.status} ${await signup.text()}`);
  const start = await ctx.fetch(`/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: "code", scope: "openid" })}`, { redirect: "manual" });
  const page = await ctx.fetch(start.headers.get("location"), { redirect: "manual" });
  const csrfCookie = page.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith("gh_csrf="));
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  const login = await ctx.fetch(start.headers.get("location"), {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie ?? "" },
    body: form({ _csrf: csrf ?? "", email, password }),
  });
  const session = login.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith("gh_session="));
  if (login.status !== 302 || !session) throw new Error(`login through the page: HTTP ${login.status} ${await login.text()}`);
  app = { clientId, clientSecret, session };
  return app;
}

const BENCH_THEME = {
  borders: { button_border_radius: 4, button_border_weight: 1, buttons_style: "rounded", input_border_radius: 3, input_border_weight: 1, inputs_style: "rounded", show_widget_shadow: false, widget_border_weight: 2, widget_corner_radius: 20 },
  colors: Object.fromEntries(
    ["body_text", "error", "header", "icons", "input_background", "input_border", "input_filled_text", "input_labels_placeholders", "links_focused_components", "primary_button", "primary_button_label", "secondary_button_border", "secondary_button_label", "success", "widget_background", "widget_border"].map((k, i) => [k, `#${(0x102030 + i * 0x0a0a0a).toString(16)}`]),
  ),
  fonts: {
    body_text: { bold: false, size: 87.5 }, buttons_text: { bold: true, size: 100 }, font_url: "", input_labels: { bold: true, size: 100 }, links: { bold: true, size: 87.5 },
    links_style: "underlined", reference_text_size: 16, subtitle: { bold: false, size: 87.5 }, title: { bold: true, size: 150 },
  },
  page_background: { background_color: "#e8f0fe", background_image_url: "", page_layout: "center" },
  widget: { header_text_alignment: "center", logo_height: 52, logo_position: "center", logo_url: "https://cdn.example.com/logo.png", social_buttons_layout: "bottom" },
};
const BENCH_TEMPLATE = `<!DOCTYPE html>{% assign resolved_dir = dir | default: "auto" %}<html lang="{{ locale }}" dir="{{ resolved_dir }}"><head>{%- auth0:head -%}</head>
<body class="_widget-auto-layout"><header id="bench-header">{{ application.name }} · {{ prompt.name }}</header>{%- auth0:widget -%}<footer>{{ tenant.friendly_name }}</footer></body></html>`;

/** Sets the control plane's theme (unless it has one) and universal-login page template. */
async function brand(ctx) {
  const headers = { authorization: `Bearer ${await ctx.managementToken()}`, "content-type": "application/json" };
  const theme = await ctx.fetch("/api/v2/branding/themes", { method: "POST", headers, body: JSON.stringify(BENCH_THEME) });
  if (theme.status !== 200 && theme.status !== 409) throw new Error(`create theme: HTTP ${theme.status} ${await theme.text()}`);
  const template = await ctx.fetch("/api/v2/branding/templates/universal-login", { method: "PUT", headers, body: JSON.stringify({ template: BENCH_TEMPLATE }) });
  if (template.status !== 201 && template.status !== 200) throw new Error(`set template: HTTP ${template.status} ${await template.text()}`);
}

/** Mints single-use codes through /authorize with the session (SSO), a few requests at a time. */
async function mintCodes(ctx, { clientId, session }, count, extra = {}) {
  const codes = [];
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: "code", scope: "openid profile", ...extra });
  const worker = async () => {
    while (codes.length < count) {
      const res = await ctx.fetch(`/authorize?${query}`, { redirect: "manual", headers: { cookie: session } });
      const code = new URL(res.headers.get("location") ?? "", "http://x").searchParams.get("code");
      if (!code) throw new Error(`/authorize did not issue a code: HTTP ${res.status}`);
      codes.push(code);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return codes;
}

/** Median of 3 relay runs (each on a fresh tenant object) after one warm-up, for 1,000; one run for larger backlogs. */
async function relayRate(ctx, backlog) {
  const once = async () => {
    const res = await ctx.fetch(`/__bench/relay?backlog=${backlog}`);
    if (!res.ok) throw new Error(`/__bench/relay: HTTP ${res.status} ${await res.text()}`);
    const json = await res.json();
    if (!json.per_second) throw new Error(`/__bench/relay: unexpected ${JSON.stringify(json)}`);
    return json.per_second;
  };
  if (backlog > 10_000) return once();
  await once();
  const runs = [await once(), await once(), await once()].sort((a, b) => a - b);
  return runs[1];
}

/** PATCH /branding on a fresh child tenant whose object has the outbox on or off (SPEC §6.3 `enabled`). */
async function brandingWrites(ctx, outbox) {
  const token = await ctx.managementToken();
  const id = `bench-${outbox ? "on" : "off"}-${Date.now().toString(36)}`;
  const created = await ctx.fetch("/api/v2/tenants", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ id, name: id }),
  });
  if (created.status !== 201) throw new Error(`create tenant: HTTP ${created.status} ${await created.text()}`);
  const toggled = await ctx.fetch(`/__bench/outbox?tenant=${id}&enabled=${outbox}`);
  if (!toggled.ok) throw new Error(`/__bench/outbox: HTTP ${toggled.status}`);
  return {
    method: "PATCH",
    path: "/api/v2/branding",
    headers: { authorization: `Bearer ${token}`, "tenant-id": id, "content-type": "application/json" },
    body: JSON.stringify({ colors: { primary: "#123456" } }),
  };
}

let commit;
/** One measurement feeds both commit rows, so their ratio compares like with like. */
async function commitCost(ctx) {
  if (commit) return commit;
  const res = await ctx.fetch("/__bench/commit?n=5000");
  if (!res.ok) throw new Error(`/__bench/commit: HTTP ${res.status} ${await res.text()}`);
  const { n, bare_ms, outbox_ms } = await res.json();
  commit = { bare: Math.round((n * 1000) / Math.max(bare_ms, 1)), outbox: Math.round((n * 1000) / Math.max(outbox_ms, 1)) };
  return commit;
}

/**
 * A rotation load: refresh-token families minted by the bench-only seeding route (no bcrypt), then each
 * request presents the newest token of the family it takes and keeps the successor from the response. A
 * family is held by one request at a time (taken from the pool, returned with its successor), so rotations
 * never look like reuse; the first request (the runner's check) takes one as well.
 */
/** A regular web application of the bench tenant that may use the refresh grant: its id and secret. */
async function refreshClient(ctx, name) {
  const created = await ctx.fetch("/api/v2/clients", {
    method: "POST",
    headers: { authorization: `Bearer ${await ctx.managementToken()}`, "content-type": "application/json" },
    body: JSON.stringify({ name, app_type: "regular_web", grant_types: ["authorization_code", "refresh_token"] }),
  });
  if (created.status !== 201) throw new Error(`create client: HTTP ${created.status} ${await created.text()}`);
  const { client_id: clientId, client_secret: clientSecret } = await created.json();
  return { clientId, clientSecret };
}

async function rotationLoad(ctx, { users, families, api = false }) {
  const token = await ctx.managementToken();
  const seedScope = {};
  if (api) {
    // An API that allows offline access (RS256, the default): each rotation signs one access token, as
    // client_credentials does, so the ratio shows what the rotation itself costs.
    const identifier = `urn:bench:refresh:${Date.now()}`;
    const created = await ctx.fetch("/api/v2/resource-servers", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ identifier, allow_offline_access: true, scopes: [{ value: "read:bench", description: "bench" }] }),
    });
    if (created.status !== 201) throw new Error(`create API: HTTP ${created.status} ${await created.text()}`);
    Object.assign(seedScope, { audience: identifier, scope: "offline_access read:bench" });
  }
  const { clientId, clientSecret } = await refreshClient(ctx, `bench refresh ${users}x${families}`);
  const pool = [];
  for (let offset = 0; offset < users; offset += 250) {
    const seeded = await ctx.fetch(`/__bench/refresh-seed?${new URLSearchParams({ client_id: clientId, users: String(Math.min(250, users - offset)), families: String(families), offset: String(offset), ...seedScope })}`, { method: "POST" });
    if (seeded.status !== 200) throw new Error(`refresh seed: HTTP ${seeded.status} ${await seeded.text()}`);
    pool.push(...(await seeded.json()).tokens);
  }
  const body = (refreshToken) => form({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret });
  return {
    requests: [
      {
        method: "POST",
        path: "/oauth/token",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: body(pool[0]),
        setupRequest: (req, context) => {
          context.family = pool.shift() ?? "drained";
          return { ...req, body: body(context.family) };
        },
        onResponse: (status, responseBody, context) => {
          const next = status === 200 ? JSON.parse(responseBody).refresh_token : undefined;
          pool.push(next ?? context.family);
        },
      },
    ],
  };
}

/** Median of three in-worker runs of an MFA probe after one warm-up (issue 12: TOTP and WebAuthn verifiers). */
async function mfaProbe(ctx, path) {
  const once = async () => {
    const res = await ctx.fetch(path);
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    const json = await res.json();
    if (!json.per_second) throw new Error(`${path}: unexpected ${JSON.stringify(json)}`);
    return json.per_second;
  };
  await once();
  const runs = [await once(), await once(), await once()].sort((a, b) => a - b);
  return runs[1];
}

SCENARIOS.push(
  {
    id: "totp_verify",
    label: "TOTP code verifications in the worker (3 steps, constant time; /__bench/totp)",
    unit: "checks/s",
    kind: "probe",
    run: (ctx) => mfaProbe(ctx, "/__bench/totp?n=3000"),
  },
  {
    id: "webauthn_verify",
    label: "WebAuthn ES256 assertion verifications in the worker (@simplewebauthn/server; /__bench/webauthn)",
    unit: "verifications/s",
    kind: "probe",
    run: (ctx) => mfaProbe(ctx, "/__bench/webauthn?n=400"),
  },
);

/** Ratios printed under the table: numerator and denominator are scenario ids. */
/**
 * Ratios printed under the table: numerator and denominator are scenario ids; `fields` names the row fields
 * compared (default per-second rates; `p50` / `meanMs` latencies of load rows, `ms` of a probe's facts).
 */
export const RATIOS = [
  ...MODERN_OAUTH_RATIOS,
  { label: "SSO logins with one post-login action/s ÷ code exchanges/s (issue 13)", numerator: "sso_login_action", denominator: "code_exchange" },
  { label: "SSO logins with one post-login action/s ÷ SSO logins without/s", numerator: "sso_login_action", denominator: "sso_login" },
  { label: "tokens/s ÷ raw RS256 signs/s (1.0 = the token endpoint costs one signature)", numerator: "token", denominator: "sign_rs256" },
  { label: "tokens/s ÷ hello req/s", numerator: "token", denominator: "hello" },
  { label: "JWKS req/s ÷ hello req/s", numerator: "jwks", denominator: "hello" },
  { label: "JWKS ÷ hello by workerd CPU per request (hello µs ÷ JWKS µs: steadier than throughput on a shared machine)", numerator: "hello", denominator: "jwks", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "JWKS floor (its bytes, no tenant) ÷ hello by CPU per request: the most a JWKS of this size could reach", numerator: "hello", denominator: "jwks_floor", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "JWKS ÷ JWKS floor by CPU per request (1.0 = serving the tenant's JWKS costs nothing beyond its bytes)", numerator: "jwks_floor", denominator: "jwks", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "raw ES256 ÷ raw RS256 signs/s", numerator: "sign_es256", denominator: "sign_rs256" },
  { label: "ES256 tokens/s ÷ raw ES256 signs/s", numerator: "token_es256", denominator: "sign_es256" },
  { label: "EdDSA tokens/s ÷ raw EdDSA signs/s", numerator: "token_eddsa", denominator: "sign_eddsa" },
  { label: "ES256 tokens/s ÷ hello req/s (target ≥ 0.5)", numerator: "token_es256", denominator: "hello" },
  { label: "token floor (body read + one ES256 signature + JSON) ÷ hello req/s: the most the ES256 target could reach", numerator: "token_floor", denominator: "hello" },
  { label: "ES256 tokens/s ÷ token floor (1.0 = the endpoint costs nothing beyond reading, signing, answering)", numerator: "token_es256", denominator: "token_floor" },
  { label: "token floor with one DPoP replay check ÷ token floor: the most a DPoP-bound token can reach against a plain one while each proof's jti is recorded durably (issue 33)", numerator: "token_floor_replay", denominator: "token_floor" },
  { label: "ES256 tokens/s ÷ RS256 tokens/s", numerator: "token_es256", denominator: "token" },
  { label: "EdDSA tokens/s ÷ RS256 tokens/s", numerator: "token_eddsa", denominator: "token" },
  { label: "code exchanges/s ÷ raw RS256 signs/s (each exchange signs an access and an ID token: 0.5 is the ceiling)", numerator: "code_exchange", denominator: "sign_rs256" },
  { label: "login page renders/s ÷ hello req/s (target ≥ 0.4)", numerator: "login_page", denominator: "hello" },
  { label: "themed login page renders/s ÷ plain login page renders/s (issue 29: target ≥ 0.8)", numerator: "login_page_themed", denominator: "login_page" },
  { label: "login page floor (tenant, one login-session RPC, fixed HTML) ÷ hello req/s: the most a page reading its session from the object could reach", numerator: "login_page_floor", denominator: "hello" },
  { label: "login page renders/s ÷ login page floor", numerator: "login_page", denominator: "login_page_floor" },
  { label: "code exchanges in an organization/s ÷ plain code exchanges/s (1.0 = organizations cost nothing at the token endpoint)", numerator: "org_code_exchange", denominator: "code_exchange" },
  { label: "TOTP verifications/s (in the worker) ÷ login page renders/s", numerator: "totp_verify", denominator: "login_page" },
  { label: "WebAuthn assertion verifications/s (in the worker) ÷ login page renders/s", numerator: "webauthn_verify", denominator: "login_page" },
  { label: "relay events/s at 100,000 ÷ at 1,000 backlog (1.0 = flat in backlog size)", numerator: "relay_100k", denominator: "relay_1k" },
  { label: "in-object commit cost with its outbox event ÷ bare commit", numerator: "commit_bare", denominator: "commit_outbox" },
  { label: "management write cost with outbox ÷ without (writes/s off ÷ on; target < 1.25)", numerator: "mgmt_write_direct", denominator: "mgmt_write" },
  { label: "refresh rotations/s (1,000 users) ÷ client_credentials tokens/s (target ≥ 0.8)", numerator: "refresh_spread", denominator: "token" },
  { label: "rotation floor (one user-object write, one RS256 signature) ÷ client_credentials tokens/s: the most a one-signature rotation could reach", numerator: "rotation_floor", denominator: "token" },
  { label: "refresh rotations/s for an API ÷ rotation floor (1.0 = a rotation costs nothing beyond its floor)", numerator: "refresh_spread_api", denominator: "rotation_floor" },
  { label: "refresh rotations for an API ÷ rotation floor by CPU per request (floor µs ÷ rotation µs)", numerator: "rotation_floor", denominator: "refresh_spread_api", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "rotation floor with reuse detection ÷ rotation floor by CPU per request: the most a rotation that tells a replayed token could reach", numerator: "rotation_floor", denominator: "rotation_floor_reuse", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "refresh rotations for an API ÷ rotation floor with reuse detection by CPU per request (1.0 = a rotation costs nothing beyond that floor)", numerator: "rotation_floor_reuse", denominator: "refresh_spread_api", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "rotation floor with its kept guarantees (reuse detection, the user's standing read) ÷ rotation floor by CPU per request: the most a rotation that keeps both could reach", numerator: "rotation_floor", denominator: "rotation_floor_guarded", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "refresh rotations for an API ÷ rotation floor with its kept guarantees by CPU per request (1.0 = a rotation costs nothing beyond what its guarantees need)", numerator: "rotation_floor_guarded", denominator: "refresh_spread_api", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "rotation floor with its kept guarantees ÷ the same through the token endpoint's front by CPU per request: what the front every grant goes through costs a rotation", numerator: "rotation_floor_guarded", denominator: "rotation_floor_endpoint", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "refresh rotations for an API ÷ rotation floor through the token endpoint by CPU per request (1.0 = the refresh grant costs nothing beyond its floor, its guarantees and the endpoint's front)", numerator: "rotation_floor_endpoint", denominator: "refresh_spread_api", fields: ["cpuUsPerRequest", "cpuUsPerRequest"] },
  { label: "rotation floor ÷ the same without its user-object write (what one durable per-user write costs a rotation)", numerator: "rotation_floor", denominator: "rotation_floor_no_write" },
  { label: "refresh rotations/s for an API without openid (one signature, as client_credentials) ÷ client_credentials tokens/s", numerator: "refresh_spread_api", denominator: "token" },
  { label: "refresh rotations/s with openid ÷ code exchanges/s (both sign an access and an ID token)", numerator: "refresh_spread", denominator: "code_exchange" },
  { label: "refresh rotations/s (one hot user) ÷ client_credentials tokens/s", numerator: "refresh_hot", denominator: "token" },
  { label: "users created/s through the API ÷ point reads/s (GET /users/{id})", numerator: "users_create", denominator: "users_get" },
  { label: "substring search p50 ÷ point read p50 at 100,000 users (target ≤ 3)", numerator: "users_q_substring", denominator: "users_get", fields: ["p50", "p50"] },
  { label: "exact-email search p50 ÷ point read p50 at 100,000 users (target ≤ 3)", numerator: "users_q_email", denominator: "users_get", fields: ["p50", "p50"] },
  { label: "substring search mean ÷ point read mean at 100,000 users", numerator: "users_q_substring", denominator: "users_get", fields: ["meanMs", "meanMs"] },
  { label: "exact-email search mean ÷ point read mean at 100,000 users", numerator: "users_q_email", denominator: "users_get", fields: ["meanMs", "meanMs"] },
  { label: "imported rows/s (jobs, alarm chunks) ÷ in-object bulk inserts/s (users_seed)", numerator: "import_rows", denominator: "users_seed" },
  { label: "walk users/s at 100,000 ÷ at 10,000 (1.0 = linear in the user count)", numerator: "users_walk_100k", denominator: "users_walk_10k" },
  { label: "full walk of 100,000 users, ms ÷ point read p50 ms", numerator: "users_walk_100k", denominator: "users_get", fields: ["ms", "p50"] },
];

// Issue 33 rows (DPoP, PAR), defined beside their helpers in ./modern-oauth.mjs.
SCENARIOS.push(...modernOAuthScenarios({ loginApp, callback: CALLBACK }));
// Issue 32: custom database logins, before the row that binds a post-login action (every later login runs it).
SCENARIOS.splice(SCENARIOS.findIndex((s) => s.id === "sso_login_action"), 0, ...CUSTOM_DB_SCENARIOS);
RATIOS.push(...CUSTOM_DB_RATIOS);
// Issue 30: the console's users page against the API's, on the users rows' tenant of 100,000 (seeded once).
SCENARIOS.splice(SCENARIOS.findIndex((s) => s.id === "users_q_email") + 1, 0, ...consoleScenarios({ usersTenant }));
RATIOS.push(...CONSOLE_RATIOS);
