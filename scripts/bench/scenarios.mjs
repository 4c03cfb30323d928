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
  // ---- EXTENSION POINT: later rows go here, for example ----------------------------------------------------
  // {
  //   id: "code_exchange",
  //   label: "authorization-code exchanges (POST /oauth/token)",
  //   unit: "exchanges/s", kind: "load", expectStatus: 200,
  //   // setup: create a tenant, a client and a user with ctx.managementToken(); pre-mint N single-use codes
  //   // (or mint one per request), then return { requests: [{ method: "POST", path: "/oauth/token",
  //   //   setupRequest: (req) => ({ ...req, body: form({ grant_type: "authorization_code", code: codes.pop(), ... }) }) }] }
  // },
  // {
  //   id: "login_page",
  //   label: "login page renders (GET /u/login?state=...)",
  //   unit: "pages/s", kind: "load", expectStatus: 200,
  //   // setup: start one /authorize transaction, then return { method: "GET", path: "/u/login?state=..." }
  // },
];

/** Ratios printed under the table: numerator and denominator are scenario ids. */
export const RATIOS = [
  { label: "tokens/s ÷ raw RS256 signs/s (1.0 = the token endpoint costs one signature)", numerator: "token", denominator: "sign_rs256" },
  { label: "tokens/s ÷ hello req/s", numerator: "token", denominator: "hello" },
  { label: "JWKS req/s ÷ hello req/s", numerator: "jwks", denominator: "hello" },
  { label: "raw ES256 ÷ raw RS256 signs/s", numerator: "sign_es256", denominator: "sign_rs256" },
];
