/**
 * Bench rows of issue 32: a password login through an import-mode custom database (the first, which runs
 * the `login` script against a legacy store on loopback and moves the user; the second, local) against a
 * plain local login. Each row is a probe: LOGINS sequential logins through the real login page, the POST
 * timed alone (the page and its CSRF cookie are fetched first, untimed). The legacy store is the test
 * receiver's (test/receiver/legacy-store.mjs, bcrypt cost 8 in Node); the worker needs ALLOW_LOOPBACK_EGRESS.
 */
import { startReceiver } from "../webhook-receiver.mjs";

const LOGINS = 20;
const CALLBACK = "http://localhost/callback";
const PASSWORD = "bench-legacy-pass-1";
const form = (fields) => new URLSearchParams(fields).toString();

const LOGIN_SCRIPT = `function login(email, password, callback) {
  fetch(configuration.BASE + "/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) })
    .then(async (res) => {
      if (res.status === 401) return callback(new WrongUsernameOrPasswordError(email));
      if (!res.ok) return callback(new Error("legacy store answered " + res.status));
      const u = await res.json();
      callback(null, { user_id: u.user_id, email: u.email, name: u.name });
    })
    .catch(callback);
}`;
const GET_USER_SCRIPT = `function getByEmail(email, callback) { callback(null); }`;

let setup;

/** A client, a local user, a legacy store with LOGINS users and an import-mode connection over it (once). */
async function benchSetup(ctx) {
  if (setup) return setup;
  const token = await ctx.managementToken();
  const json = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = await ctx.fetch("/api/v2/clients", { method: "POST", headers: json, body: JSON.stringify({ name: "bench custom db app", app_type: "regular_web", callbacks: [CALLBACK] }) });
  if (created.status !== 201) throw new Error(`create client: HTTP ${created.status} ${await created.text()}`);
  const { client_id: clientId } = await created.json();
  const receiver = await startReceiver();
  const store = `bench-${Date.now().toString(36)}`;
  const base = `${receiver.url}/legacy/${store}`;
  const tag = Date.now().toString(36);
  const legacyEmails = Array.from({ length: LOGINS }, (_, i) => `legacy-${tag}-${i}@example.com`);
  const seeded = await fetch(`${base}/seed`, { method: "POST", body: JSON.stringify({ users: legacyEmails.map((email) => ({ email, password: PASSWORD })) }) });
  if (!seeded.ok) throw new Error(`seed the legacy store: HTTP ${seeded.status}`);
  const connection = `bench-legacy-${tag}`;
  const options = { enabledDatabaseCustomization: true, import_mode: true, customScripts: { login: LOGIN_SCRIPT, get_user: GET_USER_SCRIPT }, configuration: { BASE: base } };
  const made = await ctx.fetch("/api/v2/connections", { method: "POST", headers: json, body: JSON.stringify({ name: connection, strategy: "auth0", enabled_clients: [clientId], options }) });
  if (made.status !== 201) throw new Error(`create connection: HTTP ${made.status} ${await made.text()}`);
  const localEmail = `local-${tag}@example.com`;
  const signup = await ctx.fetch("/dbconnections/signup", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email: localEmail, password: PASSWORD, connection: "Username-Password-Authentication" }),
  });
  if (signup.status !== 200) throw new Error(`signup: HTTP ${signup.status} ${await signup.text()}`);
  setup = { clientId, connection, legacyEmails, localEmail, receiver };
  return setup;
}

/** One login through the page; answers the POST's duration in ms (the redirect with a code required). */
async function timedLogin(ctx, clientId, connection, email) {
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: "code", scope: "openid", connection });
  const start = await ctx.fetch(`/authorize?${query}`, { redirect: "manual" });
  const page = await ctx.fetch(start.headers.get("location"), { redirect: "manual" });
  const cookie = page.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith("gh_csrf=")) ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  const t0 = performance.now();
  const res = await ctx.fetch(start.headers.get("location"), {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: form({ _csrf: csrf, email, password: PASSWORD }),
  });
  const ms = performance.now() - t0;
  if (res.status !== 302 || !new URL(res.headers.get("location") ?? "", "http://x").searchParams.get("code")) {
    throw new Error(`login of ${email}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
  }
  return ms;
}

/** LOGINS logins, one after the other; the row's rate is 1000 ÷ the mean POST time. */
async function loginRow(ctx, which) {
  const s = await benchSetup(ctx);
  let total = 0;
  for (let i = 0; i < LOGINS; i++) {
    const email = which === "local" ? s.localEmail : s.legacyEmails[i];
    total += await timedLogin(ctx, s.clientId, which === "local" ? "Username-Password-Authentication" : s.connection, email);
  }
  if (which === "migrated") await s.receiver.close();
  const ms = total / LOGINS;
  return { perSecond: Math.round((1000 / ms) * 10) / 10, ms: Math.round(ms * 10) / 10 };
}

/** Run in this order: the migrated row logs in again the users the migrating row moved. */
export const CUSTOM_DB_SCENARIOS = [
  { id: "login_local", label: `password logins through the page, local user (${LOGINS} sequential; POST /u2/login timed)`, unit: "logins/s", kind: "probe", run: (ctx) => loginRow(ctx, "local") },
  { id: "login_import_first", label: "first logins through an import-mode custom database (login script over HTTP, user moved)", unit: "logins/s", kind: "probe", run: (ctx) => loginRow(ctx, "migrating") },
  { id: "login_import_after", label: "later logins of those users (local now, legacy store not called)", unit: "logins/s", kind: "probe", run: (ctx) => loginRow(ctx, "migrated") },
];

export const CUSTOM_DB_RATIOS = [
  { label: "first (migrating) import-mode login ÷ local login, mean ms (issue 32)", numerator: "login_import_first", denominator: "login_local", fields: ["ms", "ms"] },
  { label: "later import-mode login ÷ local login, mean ms (1.0 = a moved user logs in as a local one)", numerator: "login_import_after", denominator: "login_local", fields: ["ms", "ms"] },
];
