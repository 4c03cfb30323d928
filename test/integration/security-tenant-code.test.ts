import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { call, createTenant, token, uniqueId } from "../helpers/api";
import { bindAction, createAction, onTenant } from "../helpers/actions";
import { createApi, createClient, grantClient } from "../helpers/management";
import { authorize, pendingLogin, redirectParams, seedClient, seedUser, sessionCookie, tokenForm } from "../helpers/flows";
import { logsOf, relay } from "../helpers/outbox";

/** Issue 25 findings 2-4: tenant code (actions) against its guard, protected claims and the login it runs in. */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "correct-horse-9";

async function setup() {
  const tenant = await createTenant();
  const host = `${tenant}.localhost:8787`;
  const client = await seedClient(tenant, { callbacks: [CALLBACK] });
  const email = `${uniqueId("u")}@example.com`;
  const user = await seedUser(tenant, email, PASSWORD);
  return { tenant, host, client, user, email };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** A password login through the login page (the route that answered 500). */
async function passwordLogin({ tenant, host, client, email }: Setup): Promise<Response> {
  const pending = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK, scope: "openid offline_access" });
  return call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password: PASSWORD }).toString(),
  });
}

const codeGrant = ({ host, client }: Setup, code: string) =>
  tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);

/** The execution records of the tenant's logins, newest log first. */
async function executionLogs(tenant: string): Promise<string[]> {
  await relay(tenant);
  const logs = await logsOf(tenant, "?per_page=100");
  const ids = logs.flatMap((l) => (l.details.actions as { executions?: string[] } | undefined)?.executions ?? []);
  const out: string[] = [];
  for (const id of ids) {
    const execution = (await (await onTenant(tenant, "GET", `/actions/executions/${id}`)).json()) as { results: { logs: string }[] };
    out.push(...execution.results.map((r) => r.logs));
  }
  return out;
}

describe("tenant code cannot reach its timeout guard (issue 25 finding 2)", () => {
  const refused = [
    `const g = await import("./guard.js"); g.beginRun(8000, 1e12);`,
    `await import("./harness.js");`,
    `require("./guard.js").beginRun(8000, 1e12);`,
    `const name = "./guard.js"; await import(name);`,
    "require(`./guard.js`);",
    `const r = require; r("./guard.js");`,
    `const { require: r } = { require }; r("./guard.js");`,
    `require("node:module").createRequire("/")("./guard.js");`,
    `await import("node:module");`,
    `process.getBuiltinModule("module");`,
  ];

  it("deploy and test refuse import() and require of anything but allowed built-ins, aliases and dynamic specifiers included", async () => {
    const tenant = await createTenant();
    for (const body of refused) {
      const action = await createAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { ${body} };`);
      const deploy = await onTenant(tenant, "POST", `/actions/actions/${action.id}/deploy`);
      expect(deploy.status, body).toBe(400);
      expect(await deploy.json(), body).toMatchObject({ errorCode: "action_build_failed" });
      expect((await onTenant(tenant, "POST", `/actions/actions/${action.id}/test`, { payload: {} })).status, body).toBe(400);
    }
  });

  it("allowed built-ins still load, through require and import()", async () => {
    const tenant = await createTenant();
    const code = `const { Buffer } = require("node:buffer");
      exports.onExecutePostLogin = async (event, api) => {
        const { createHash } = await import("node:crypto");
        console.log(Buffer.from("hi").toString("hex"), createHash("sha256").update("x").digest("hex").length);
      };`;
    const action = await createAction(tenant, "post-login", code);
    expect((await onTenant(tenant, "POST", `/actions/actions/${action.id}/deploy`)).status).toBe(202);
    const res = await onTenant(tenant, "POST", `/actions/actions/${action.id}/test`, { payload: {} });
    expect(await res.json()).toMatchObject({ payload: { logs: "6869 64\n", error: null } });
  });

  it("code that looks the guard up at run time (computed names, getBuiltinModule, globalThis) cannot extend its deadline", async () => {
    const s = await setup();
    // Nothing here names require, import() or the guard, so it passes the deploy check; the runtime must hold.
    await bindAction(
      s.tenant,
      "post-login",
      `exports.onExecutePostLogin = async () => {
        const g = globalThis;
        const found = [];
        const tryReset = (m) => { if (m && typeof m.beginRun === "function") { m.beginRun(8000, 1e12); found.push("beginRun"); } };
        try { const p = g["pro" + "cess"]; const load = p["getBuiltin" + "Module"].bind(p); const req = load("node:" + "module")["create" + "Require"]("/");
          for (const name of ["./guard.js", "./harness.js", "guard.js"]) { try { tryReset(req(name)); } catch {} } } catch {}
        for (const key of Object.getOwnPropertyNames(g)) { try { tryReset(g[key]); if (typeof g[key] === "function" && /beginRun|guard/i.test(key)) found.push(key); } catch {} }
        console.log("found", found.join(","));
        while (true) {}
      };`,
    );
    const started = Date.now();
    const res = await passwordLogin(s);
    const elapsed = Date.now() - started;
    const answer = new URL(res.headers.get("location") ?? "").searchParams;
    expect(answer.get("error_description")).toBe("Action execution timed out");
    // ACTIONS_TIMEOUT_MS is 1500 in tests; a reset guard would have run for 8 s.
    expect(elapsed).toBeLessThan(6000);
    expect((await executionLogs(s.tenant)).join("")).toContain("found \n");
  });
});

describe("tenant code cannot make uninstrumented code from strings (review of issue 25 finding 2)", () => {
  it("eval and the Function constructors refuse at module load and in a run, so every loop stays under the guard", async () => {
    const s = await setup();
    await bindAction(
      s.tenant,
      "post-login",
      `const made = [];
      try { made.push(eval("(function () { for (;;) {} })")); } catch (e) { console.log("eval:" + e.name); }
      try { made.push(new Function("for (;;) {}")); } catch (e) { console.log("Function:" + e.name); }
      try { made.push((async function () {}).constructor("for (;;) {}")); } catch (e) { console.log("AsyncFunction:" + e.name); }
      try { made.push(globalThis["ev" + "al"]("(() => { for (;;) {} })")); } catch (e) { console.log("computed:" + e.name); }
      exports.onExecutePostLogin = async () => {
        console.log("made " + made.length);
        for (const spin of made) spin();
        while (true) {}
      };`,
    );
    const started = Date.now();
    const res = await passwordLogin(s);
    const elapsed = Date.now() - started;
    expect(new URL(res.headers.get("location") ?? "").searchParams.get("error_description")).toBe("Action execution timed out");
    expect(elapsed).toBeLessThan(6000);
    const logs = (await executionLogs(s.tenant)).join("");
    expect(logs).toContain("made 0");
  });
});

describe("__proto__ and other prototype names from tenant code (issue 25 findings 3 and 4)", () => {
  const POLLUTING = `exports.onExecutePostLogin = async (event, api) => {
    api.accessToken.setCustomClaim("__proto__", { azp: "x", "https://example.com/polluted": true });
    api.idToken.setCustomClaim("__proto__", { sub: "someone-else" });
    api.accessToken.setCustomClaim("constructor", "c");
    api.idToken.setCustomClaim("prototype", "p");
    api.user.setAppMetadata("__proto__", { admin: true });
    api.user.setUserMetadata("constructor", { admin: true });
    api.accessToken.setCustomClaim("https://example.com/kept", "yes");
  };`;

  it("the login page proceeds (no 500): the commands are refused with a warning in the execution log, other claims are kept", async () => {
    const s = await setup();
    await bindAction(s.tenant, "post-login", POLLUTING);
    const res = await passwordLogin(s);
    expect(res.status, await res.clone().text()).toBe(302);
    const code = redirectParams(res).query.get("code");
    expect(code, res.headers.get("location") ?? "").toBeTruthy();
    const tokens = await codeGrant(s, code ?? "");
    expect(tokens.status, await tokens.clone().text()).toBe(200);
    const body = (await tokens.json()) as { access_token: string; id_token: string; refresh_token: string };
    const access = decodeJwt(body.access_token);
    const id = decodeJwt(body.id_token);
    expect(access).toMatchObject({ azp: s.client.client_id, "https://example.com/kept": "yes" });
    expect(access).not.toHaveProperty("https://example.com/polluted");
    expect(id.sub).toBe(s.user.user_id);
    for (const claims of [access, id]) for (const name of ["constructor", "prototype"]) expect(Object.hasOwn(claims, name), name).toBe(false);
    const user = (await (await onTenant(s.tenant, "GET", `/users/${encodeURIComponent(s.user.user_id)}`)).json()) as { app_metadata: object; user_metadata: object };
    expect(JSON.stringify(user.app_metadata ?? {})).not.toContain("admin");
    expect(JSON.stringify(user.user_metadata ?? {})).not.toContain("admin");
    // The execution log keeps its first 256 characters: the refusals are written first.
    const logs = (await executionLogs(s.tenant)).join("\n");
    expect(logs).toContain('api.accessToken.setCustomClaim("__proto__") was refused');
    expect(logs).toContain('api.idToken.setCustomClaim("__proto__") was refused');
  });

  it("the test route shows every refused command (names and nested keys) and keeps the others", async () => {
    const tenant = await createTenant();
    const nested = `api.user.setAppMetadata("plan", JSON.parse('{"a": {"__proto__": {"admin": true}}}'));`;
    const action = await createAction(tenant, "post-login", POLLUTING.replace("api.accessToken.setCustomClaim(\"https://example.com/kept\"", `${nested} api.accessToken.setCustomClaim("https://example.com/kept"`));
    const res = await onTenant(tenant, "POST", `/actions/actions/${action.id}/test`, { payload: {} });
    expect(res.status).toBe(200);
    const { payload } = (await res.json()) as { payload: { logs: string; error: unknown; commands: unknown[] } };
    expect(payload.error).toBeNull();
    expect(payload.commands).toEqual([{ type: "claim", target: "access_token", name: "https://example.com/kept", value: "yes" }]);
    for (const what of [
      'api.accessToken.setCustomClaim("__proto__")',
      'api.idToken.setCustomClaim("__proto__")',
      'api.accessToken.setCustomClaim("constructor")',
      'api.idToken.setCustomClaim("prototype")',
      'api.user.setAppMetadata("__proto__")',
      'api.user.setUserMetadata("constructor")',
    ]) {
      expect(payload.logs, what).toContain(`${what} was refused: reserved name`);
    }
    expect(payload.logs).toContain('api.user.setAppMetadata("plan") was refused: reserved key "__proto__" in the value');
  });

  it("a refresh grant token keeps the server's azp (no claim through the prototype)", async () => {
    const s = await setup();
    const cookie = await sessionCookie(s.tenant, s.user.user_id, s.client.client_id);
    const authorized = await authorize({ client_id: s.client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host: s.host, cookie });
    const first = (await (await codeGrant(s, redirectParams(authorized).query.get("code") ?? "")).json()) as { refresh_token: string };
    expect(first.refresh_token).toBeTruthy();
    await bindAction(s.tenant, "post-login", POLLUTING);
    const refreshed = await tokenForm({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: s.client.client_id, client_secret: s.client.client_secret }, {}, s.host);
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    const access = decodeJwt(((await refreshed.json()) as { access_token: string }).access_token);
    expect(access.azp).toBe(s.client.client_id);
    expect(access).not.toHaveProperty("https://example.com/polluted");
    expect(access).toMatchObject({ "https://example.com/kept": "yes" });
  });

  it("a client_credentials token keeps the server's azp", async () => {
    const tenant = await createTenant();
    const asTenant = { headers: { "tenant-id": tenant } };
    const api = await createApi(["read:things"], asTenant);
    const client = await createClient({ app_type: "non_interactive", grant_types: ["client_credentials"] }, asTenant);
    await grantClient(client.client_id, api.identifier, ["read:things"], asTenant);
    await bindAction(tenant, "credentials-exchange", `exports.onExecuteCredentialsExchange = async (event, api) => {
      api.accessToken.setCustomClaim("__proto__", { azp: "x", gty: "password" });
    };`);
    const res = await token({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: api.identifier }, { host: `${tenant}.localhost:8787` });
    expect(res.status, await res.clone().text()).toBe(200);
    const claims = decodeJwt(((await res.json()) as { access_token: string }).access_token);
    expect(claims).toMatchObject({ azp: client.client_id, gty: "client-credentials" });
  });
});

describe("prototype names in API input (issue 25 finding 3)", () => {
  it("user metadata refuses constructor and prototype keys as it refuses __proto__, at any depth (400, nothing stored)", async () => {
    const s = await setup();
    const path = `/users/${encodeURIComponent(s.user.user_id)}`;
    // Raw JSON: an object literal's __proto__ would set the prototype of the test's own body.
    for (const raw of ['{"app_metadata":{"constructor":{"admin":true}}}', '{"user_metadata":{"a":{"prototype":1}}}', '{"app_metadata":{"__proto__":{"admin":true}}}']) {
      const res = await onTenant(s.tenant, "PATCH", path, raw);
      expect(res.status, raw).toBe(400);
    }
    const user = (await (await onTenant(s.tenant, "GET", path)).json()) as { app_metadata?: object; user_metadata?: object };
    expect(JSON.stringify([user.app_metadata ?? {}, user.user_metadata ?? {}])).not.toMatch(/admin|prototype/);
  });

  it("every management body refuses the three names as keys at any depth: organizations, hooks, connections, clients (400, nothing stored)", async () => {
    const s = await setup();
    const cases: [string, string, string][] = [
      ["POST", "/organizations", '{"name":"org-proto","metadata":{"__proto__":{"x":"y"}}}'],
      ["POST", "/organizations", '{"name":"org-ctor","metadata":{"constructor":"x"}}'],
      ["POST", "/hooks", '{"name":"h1","url":"https://hooks.example.com/x","triggerId":"post-user-registration","dependencies":{"prototype":"1.0.0"}}'],
      ["POST", "/connections", '{"name":"db-proto","strategy":"auth0","options":{"a":{"__proto__":{"x":1}}}}'],
      ["PATCH", `/clients/${s.client.client_id}`, '{"client_metadata":{"constructor":"x"}}'],
    ];
    for (const [method, path, raw] of cases) {
      const res = await onTenant(s.tenant, method, path, raw);
      expect(res.status, raw).toBe(400);
      expect(await res.json(), raw).toMatchObject({ statusCode: 400, errorCode: "invalid_body", message: expect.stringMatching(/reserved name/) });
    }
    const orgs = (await (await onTenant(s.tenant, "GET", "/organizations")).json()) as { name: string }[];
    expect(orgs.map((o) => o.name)).not.toContain("org-proto");
    const connections = (await (await onTenant(s.tenant, "GET", "/connections")).json()) as { name: string }[];
    expect(connections.map((c) => c.name)).not.toContain("db-proto");
  });
});
