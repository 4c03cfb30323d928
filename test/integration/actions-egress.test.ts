import { describe, expect, it } from "vitest";
import { uniqueId } from "../helpers/api";
import { bindAction, onTenant } from "../helpers/actions";
import type { TestClient } from "../helpers/flows";
import { actionLoginSetup, exchangeCode, passwordLoginOf } from "../helpers/action-logins";
import { attemptedRows, deliveries, logsOf, receiverUrl, relay, tenantSql } from "../helpers/outbox";

/**
 * Issue 32 point 1: tenant code reaches the network only through the egress gateway (the sandbox's
 * `globalOutbound`), which applies the egress policy, the tenant's allowlist, a timeout, a size cap and a
 * per-execution request count, and records each call in the execution. The tests allow loopback
 * (ALLOW_LOOPBACK_EGRESS=1) so the local receiver is reachable; ACTIONS_TIMEOUT_MS=1500 bounds a request to
 * 1250 ms.
 */
const NS = "https://gatehouse.test";
const setup = actionLoginSetup;
const login = passwordLoginOf;
const idToken = async (tenant: string, client: TestClient, res: Response) => (await exchangeCode(tenant, client, res)).id;

interface ExecutionView {
  results: { logs: string; egress?: { method: string; host: string; status: number | null; duration_ms: number; bytes: number; error?: string }[] }[];
}

/** The execution of the user's last login. */
async function lastExecution(tenant: string, userId: string): Promise<ExecutionView> {
  await relay(tenant);
  const [success] = await logsOf(tenant, `?q=${encodeURIComponent(`type:s AND user_id:"${userId}"`)}`);
  const id = (success?.details.actions as { executions: string[] } | undefined)?.executions[0];
  expect(id).toBeTruthy();
  return (await (await onTenant(tenant, "GET", `/actions/executions/${id}`)).json()) as ExecutionView;
}

/** An action that fetches `url` and puts the answer (or the error) into an ID token claim. */
const probe = (url: string, init = "{}") => `
exports.onExecutePostLogin = async (event, api) => {
  try {
    const res = await fetch(${JSON.stringify(url)}, ${init});
    api.idToken.setCustomClaim("${NS}/status", res.status);
    api.idToken.setCustomClaim("${NS}/body", (await res.text()).slice(0, 200));
  } catch (e) {
    api.idToken.setCustomClaim("${NS}/error", e.message);
  }
};`;

describe("tenant code's outbound requests go through the egress gateway (issue 32 point 1)", () => {
  it("an action calls a local HTTP API with a secret and puts its answer into a namespaced claim; the call is recorded", async () => {
    const { tenant, client, user, email } = await setup();
    const name = uniqueId("enrich");
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        const res = await fetch("${receiverUrl()}/data/${name}?plan=gold", { headers: { authorization: "Bearer " + event.secrets.API_KEY } });
        const data = await res.json();
        api.idToken.setCustomClaim("${NS}/plan", data.query.plan);
      };`,
      { secrets: [{ name: "API_KEY", value: "k-123" }] },
    );
    const res = await login(tenant, client, email);
    expect(res.status).toBe(302);
    expect((await idToken(tenant, client, res))[`${NS}/plan`]).toBe("gold");
    const [seen] = (await deliveries(name)) as unknown as { headers: { authorization: string | null } }[];
    expect(seen?.headers.authorization).toBe("Bearer k-123");
    const execution = await lastExecution(tenant, user.user_id);
    const host = new URL(receiverUrl()).host;
    expect(execution.results[0]?.egress).toEqual([{ method: "GET", host, status: 200, duration_ms: expect.any(Number), bytes: expect.any(Number) }]);
    expect(execution.results[0]?.egress?.[0]?.bytes).toBeGreaterThan(10);
    expect(execution.results[0]?.logs).toMatch(new RegExp(`^egress GET ${host} 200 \\d+ms \\d+B\\n`));
  });

  it("private, metadata and this service's own addresses are refused, with the reason in the execution's log", async () => {
    const { tenant, client, user, email } = await setup();
    const cases: [string, RegExp][] = [
      ["http://10.0.0.1/internal", /10\.0\.0\.1 is a private, link-local, metadata or reserved address/],
      ["http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a private, link-local, metadata or reserved address/],
      ["http://metadata.google.internal/computeMetadata/v1/", /cloud metadata service/],
      ["http://localhost:8787/api/v2/users", /this service's own host/],
    ];
    for (const [url, reason] of cases) {
      await onTenant(tenant, "PATCH", "/actions/triggers/post-login/bindings", { bindings: [] });
      await bindAction(tenant, "post-login", probe(url));
      const res = await login(tenant, client, email);
      expect(res.status, url).toBe(302);
      const claims = await idToken(tenant, client, res);
      expect(claims[`${NS}/error`], url).toMatch(reason);
      expect(claims[`${NS}/status`]).toBeUndefined();
      const execution = await lastExecution(tenant, user.user_id);
      expect(execution.results[0]?.logs).toMatch(new RegExp(`^egress GET ${new URL(url).host} refused: Refused by the egress policy`));
      expect(execution.results[0]?.egress?.[0]).toMatchObject({ status: null, error: expect.stringMatching(reason) });
    }
  });

  it("a response over the size cap is cut and refused, and nothing of it reaches the code", async () => {
    const { tenant, client, email } = await setup();
    await bindAction(tenant, "post-login", probe(`${receiverUrl()}/data/${uniqueId("big")}?size=1100000`));
    const claims = await idToken(tenant, client, await login(tenant, client, email));
    expect(claims[`${NS}/error`]).toBe("Refused by the egress policy: the response is larger than 1048576 bytes");
    expect(claims[`${NS}/body`]).toBeUndefined();
  });

  it("a slow server is cut at the request timeout with a clear message, and the login goes on", async () => {
    const { tenant, client, user, email } = await setup();
    await bindAction(tenant, "post-login", probe(`${receiverUrl()}/data/${uniqueId("slow")}?delay=4000`));
    const started = Date.now();
    const res = await login(tenant, client, email);
    expect(Date.now() - started).toBeLessThan(4000);
    const claims = await idToken(tenant, client, res);
    expect(claims[`${NS}/error`]).toBe("Refused by the egress policy: no complete answer within 1250 ms");
    const execution = await lastExecution(tenant, user.user_id);
    expect(execution.results[0]?.logs).toMatch(/refused: Refused by the egress policy: no complete answer within 1250 ms/);
  });

  it("more requests than one execution may make are refused from the 21st on", async () => {
    const { tenant, client, user, email } = await setup();
    const name = uniqueId("many");
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        let ok = 0, error = null;
        for (let i = 0; i < 25; i++) {
          try { await fetch("${receiverUrl()}/data/${name}?i=" + i); ok++; } catch (e) { error = e.message; }
        }
        api.idToken.setCustomClaim("${NS}/ok", ok);
        api.idToken.setCustomClaim("${NS}/error", error);
      };`,
    );
    const claims = await idToken(tenant, client, await login(tenant, client, email));
    expect(claims[`${NS}/ok`]).toBe(20);
    expect(claims[`${NS}/error`]).toBe("Refused by the egress policy: at most 20 outbound requests per execution");
    expect(await deliveries(name)).toHaveLength(20);
    const execution = await lastExecution(tenant, user.user_id);
    expect(execution.results[0]?.egress).toHaveLength(25);
  });

  it("with an allowlist, hosts outside it are refused; redirects are checked hop by hop", async () => {
    const { tenant, client, email } = await setup();
    const patched = await onTenant(tenant, "PATCH", "/tenants/settings", { egress_allowlist: ["api.example.com", "*.partner.example"] });
    expect(patched.status, await patched.clone().text()).toBe(200);
    await bindAction(tenant, "post-login", probe(`${receiverUrl()}/data/${uniqueId("outside")}`));
    const claims = await idToken(tenant, client, await login(tenant, client, email));
    expect(claims[`${NS}/error`]).toBe("Refused by the egress policy: 127.0.0.1 is not in the tenant's allowlist");
    // Without the allowlist, a redirect to a metadata address is refused at the hop.
    expect((await onTenant(tenant, "PATCH", "/tenants/settings", { egress_allowlist: null })).status).toBe(200);
    await onTenant(tenant, "PATCH", "/actions/triggers/post-login/bindings", { bindings: [] });
    await bindAction(tenant, "post-login", probe(`${receiverUrl()}/data/${uniqueId("hop")}?to=${encodeURIComponent("http://169.254.169.254/")}`));
    const hop = await idToken(tenant, client, await login(tenant, client, email));
    expect(hop[`${NS}/error`]).toMatch(/169\.254\.169\.254 is a private, link-local, metadata or reserved address/);
  });

  it("actions run by the tenant object's relay (post-user-deletion) reach the network through the same gateway", async () => {
    const { tenant } = await setup();
    const name = uniqueId("crm");
    await bindAction(
      tenant,
      "post-user-deletion",
      `exports.onExecutePostUserDeletion = async (event) => {
        await fetch("${receiverUrl()}/data/${name}", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ gone: event.user.email }) });
        await fetch("http://10.1.2.3/").catch((e) => console.log(e.message));
      };`,
    );
    const email = `${uniqueId("gone")}@example.com`;
    const created = await onTenant(tenant, "POST", "/users", { connection: "Username-Password-Authentication", email, password: "Deleted-pass-123" });
    const { user_id } = (await created.json()) as { user_id: string };
    expect((await onTenant(tenant, "DELETE", `/users/${encodeURIComponent(user_id)}`)).status).toBe(204);
    const [event] = await attemptedRows(tenant, "hook.post-user-deletion");
    expect(event?.processed_at, event?.error ?? "").toEqual(expect.any(Number));
    expect(JSON.parse(((await deliveries(name)) as unknown as { raw: string }[])[0]?.raw ?? "{}")).toEqual({ gone: email });
    const [row] = await tenantSql<{ results: string }>(tenant, "SELECT results FROM action_executions WHERE trigger_id = 'post-user-deletion'");
    const [result] = JSON.parse(row?.results ?? "[]") as ExecutionView["results"];
    expect(result?.egress?.map((c) => [c.method, c.status, c.error ?? null])).toEqual([
      ["POST", 200, null],
      ["GET", null, "Refused by the egress policy: 10.1.2.3 is a private, link-local, metadata or reserved address, which this service does not send requests to"],
    ]);
  });

  it("tenant code that replaces Request or Headers methods sees nothing of what the sandbox's fetch sends", async () => {
    const { tenant, client, email } = await setup();
    await bindAction(
      tenant,
      "post-login",
      `const seen = [];
      const set = Headers.prototype.set;
      Headers.prototype.set = function (name, value) { seen.push(String(name) + "=" + String(value)); return set.call(this, name, value); };
      const R = Request;
      globalThis.Request = function (...args) { seen.push("Request"); return new R(...args); };
      exports.onExecutePostLogin = async (event, api) => {
        const res = await fetch("${receiverUrl()}/data/${uniqueId("spy")}");
        api.idToken.setCustomClaim("${NS}/status", res.status);
        api.idToken.setCustomClaim("${NS}/seen", seen.join(","));
        api.idToken.setCustomClaim("${NS}/headers", [...res.headers.keys()].filter((k) => k.startsWith("x-gatehouse")).join(","));
      };`,
    );
    const claims = await idToken(tenant, client, await login(tenant, client, email));
    expect(claims[`${NS}/status`]).toBe(200);
    expect(claims[`${NS}/seen`]).toBe("");
    expect(claims[`${NS}/headers`]).toBe("");
  });

  it("an allowlist entry that is not a host name is refused with 400", async () => {
    const { tenant } = await setup();
    const res = await onTenant(tenant, "PATCH", "/tenants/settings", { egress_allowlist: ["https://api.example.com/path"] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/egress_allowlist entries are host names/);
  });
});
