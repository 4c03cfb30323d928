/**
 * The rows of `npm run bench`. EXTENSION POINT: add a scenario object to SCENARIOS (and, if it should be read
 * against another row, a ratio to RATIOS); nothing else in the runner needs to change.
 *
 * Two kinds of scenario:
 * - `kind: "load"`: `setup(ctx)` returns the request to hammer with autocannon (bounded connections and
 *   duration), as `{ method, path, headers?, body? }`; for requests that must differ each time (single-use
 *   codes, fresh logins) return `{ requests: [...] }` with autocannon's `setupRequest(req, context)` hooks
 *   instead. The runner first sends one request with fetch and refuses to measure if it is not `expectStatus`.
 * - `kind: "probe"`: `run(ctx)` returns a number per second measured some other way (e.g. inside the worker).
 *
 * `ctx` (see scripts/bench.mjs): `baseUrl` (http://localhost:PORT), `host` (Host header value, the apex),
 * `clientId` / `clientSecret` (control-plane client), `fetch(path, init)`, `managementToken()`,
 * `signRate(alg, n)`.
 */

const form = (fields) => new URLSearchParams(fields).toString();

/** @type {Array<object>} */
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
    id: "jwks",
    label: "JWKS (GET /.well-known/jwks.json)",
    unit: "req/s",
    kind: "load",
    expectStatus: 200,
    setup: () => ({ method: "GET", path: "/.well-known/jwks.json" }),
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
  // ---- EXTENSION POINT: later rows go here ---------------------------------------------------------------
];

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

/** Mints single-use codes through /authorize with the session (SSO), a few requests at a time. */
async function mintCodes(ctx, { clientId, session }, count) {
  const codes = [];
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: "code", scope: "openid profile" });
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
async function rotationLoad(ctx, { users, families }) {
  const token = await ctx.managementToken();
  const created = await ctx.fetch("/api/v2/clients", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `bench refresh ${users}x${families}`, app_type: "regular_web", grant_types: ["authorization_code", "refresh_token"] }),
  });
  if (created.status !== 201) throw new Error(`create client: HTTP ${created.status} ${await created.text()}`);
  const { client_id: clientId, client_secret: clientSecret } = await created.json();
  const pool = [];
  for (let offset = 0; offset < users; offset += 250) {
    const seeded = await ctx.fetch(`/__bench/refresh-seed?${new URLSearchParams({ client_id: clientId, users: String(Math.min(250, users - offset)), families: String(families), offset: String(offset) })}`, { method: "POST" });
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
export const RATIOS = [
  { label: "tokens/s ÷ raw RS256 signs/s (1.0 = the token endpoint costs one signature)", numerator: "token", denominator: "sign_rs256" },
  { label: "tokens/s ÷ hello req/s", numerator: "token", denominator: "hello" },
  { label: "JWKS req/s ÷ hello req/s", numerator: "jwks", denominator: "hello" },
  { label: "raw ES256 ÷ raw RS256 signs/s", numerator: "sign_es256", denominator: "sign_rs256" },
  { label: "ES256 tokens/s ÷ raw ES256 signs/s", numerator: "token_es256", denominator: "sign_es256" },
  { label: "EdDSA tokens/s ÷ raw EdDSA signs/s", numerator: "token_eddsa", denominator: "sign_eddsa" },
  { label: "ES256 tokens/s ÷ hello req/s (target ≥ 0.5)", numerator: "token_es256", denominator: "hello" },
  { label: "ES256 tokens/s ÷ RS256 tokens/s", numerator: "token_es256", denominator: "token" },
  { label: "EdDSA tokens/s ÷ RS256 tokens/s", numerator: "token_eddsa", denominator: "token" },
  { label: "code exchanges/s ÷ raw RS256 signs/s (each exchange signs an access and an ID token: 0.5 is the ceiling)", numerator: "code_exchange", denominator: "sign_rs256" },
  { label: "login page renders/s ÷ hello req/s", numerator: "login_page", denominator: "hello" },
  { label: "TOTP verifications/s (in the worker) ÷ login page renders/s", numerator: "totp_verify", denominator: "login_page" },
  { label: "WebAuthn assertion verifications/s (in the worker) ÷ login page renders/s", numerator: "webauthn_verify", denominator: "login_page" },
  { label: "relay events/s at 100,000 ÷ at 1,000 backlog (1.0 = flat in backlog size)", numerator: "relay_100k", denominator: "relay_1k" },
  { label: "in-object commit cost with its outbox event ÷ bare commit", numerator: "commit_bare", denominator: "commit_outbox" },
  { label: "management write cost with outbox ÷ without (writes/s off ÷ on; target < 1.25)", numerator: "mgmt_write_direct", denominator: "mgmt_write" },
  { label: "refresh rotations/s (1,000 users) ÷ client_credentials tokens/s (target ≥ 0.8)", numerator: "refresh_spread", denominator: "token" },
  { label: "refresh rotations/s (one hot user) ÷ client_credentials tokens/s", numerator: "refresh_hot", denominator: "token" },
];
