import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { actionLoginSetup, exchangeCode, passwordLoginOf, redirectError } from "../helpers/action-logins";
import { bindAction, onTenant } from "../helpers/actions";
import { logsOf, relay } from "../helpers/outbox";

const setup = actionLoginSetup;
const login = passwordLoginOf;
const exchange = exchangeCode;

describe("post-login actions (SPEC §6.1 inline, §6.2 claim rules)", () => {
  it("sets allowed custom claims on the ID and access tokens; computed or reserved claims are dropped with a warning in the tenant's logs", async () => {
    const { tenant, client, user, email } = await setup();
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        api.idToken.setCustomClaim("https://example.com/plan", "gold");
        api.idToken.setCustomClaim("favourite_colour", event.user.email.length);
        api.accessToken.setCustomClaim("https://example.com/roles", ["admin"]);
        api.idToken.setCustomClaim("sub", "someone-else");
        api.accessToken.setCustomClaim("tenant_id", "other-tenant");
        api.accessToken.setCustomClaim("azp", "evil-client");
        api.accessToken.setCustomClaim("scope", "read:everything");
        api.idToken.setCustomClaim("https://auth0.com/claim", 1);
      };`,
    );
    const res = await login(tenant, client, email);
    expect(res.status).toBe(302);
    const { access, id } = await exchange(tenant, client, res);
    expect(id).toMatchObject({ "https://example.com/plan": "gold", favourite_colour: email.length, sub: user.user_id });
    expect(id).not.toHaveProperty("https://auth0.com/claim");
    expect(access).toMatchObject({ "https://example.com/roles": ["admin"], tenant_id: tenant, azp: client.client_id, sub: user.user_id });
    expect(access.scope).not.toContain("read:everything");
    await relay(tenant);
    const warnings = await logsOf(tenant, "?q=type:w&per_page=100");
    expect(warnings.map((w) => (w.details.target as { after: { claim: string } }).after.claim).sort()).toEqual(["azp", "https://auth0.com/claim", "scope", "sub", "tenant_id"]);
    expect(warnings[0]).toMatchObject({ user_id: user.user_id, client_id: client.client_id });
    expect(warnings.find((w) => w.description?.includes('"sub"'))?.description).toContain("cannot be set by an action");
  });

  it("api.access.deny ends the login with access_denied and the reason, and nothing is issued", async () => {
    const { tenant, client, user, email } = await setup();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.access.deny("Weekdays only"); };`);
    const res = await login(tenant, client, email);
    expect(res.status).toBe(302);
    expect(redirectError(res)).toEqual({ error: "access_denied", description: "Weekdays only", code: null });
    await relay(tenant);
    const [failure] = await logsOf(tenant, `?q=${encodeURIComponent(`type:f AND user_id:"${user.user_id}"`)}`);
    expect(failure?.description).toContain("Weekdays only");
    const executions = (failure?.details.actions as { executions: string[] } | undefined)?.executions ?? [];
    expect(executions).toHaveLength(1);
    const execution = await (await onTenant(tenant, "GET", `/actions/executions/${executions[0]}`)).json();
    expect(execution).toMatchObject({ trigger_id: "post-login", status: "final", results: [{ logs: "" }] });
  });

  it("an action whose fetch is refused by the egress gateway (issue 32) fails and the login answers access_denied with its message", async () => {
    const { tenant, client, email } = await setup();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async () => { await fetch("http://192.168.1.1/"); };`);
    const res = await login(tenant, client, email);
    const answer = redirectError(res);
    expect(answer.error).toBe("access_denied");
    expect(answer.description).toMatch(/^Refused by the egress policy: 192\.168\.1\.1 is a private, link-local, metadata or reserved address/);
  });

  it("an endless loop is stopped by the timeout: the login answers an error, and this and other tenants keep being served", async () => {
    const { tenant, client, email } = await setup();
    const other = await setup();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async () => { let i = 0; while (true) { try { i++; } catch (e) {} } };`);
    const started = Date.now();
    const looping = login(tenant, client, email);
    const elsewhere = login(other.tenant, other.client, other.email);
    const res = await looping;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(redirectError(res)).toMatchObject({ error: "access_denied", description: "Action execution timed out" });
    expect((await elsewhere).status).toBe(302);
    expect(redirectError(await elsewhere).code).toBeTruthy();
    // The object and the worker still answer for the tenant whose action looped.
    expect((await call("/.well-known/openid-configuration", { host: `${tenant}.localhost:8787` })).status).toBe(200);
    // The same loop inside a catch-all recursion is stopped too.
    await onTenant(tenant, "PATCH", "/actions/triggers/post-login/bindings", { bindings: [] });
    await bindAction(tenant, "post-login", `function f() { try { for (;;) {} } catch (e) { return f(); } } exports.onExecutePostLogin = async () => f();`);
    expect(redirectError(await login(tenant, client, email))).toMatchObject({ error: "access_denied", description: "Action execution timed out" });
  });

  it("records each execution with its console output cut to 256 characters plus a marker", async () => {
    const { tenant, client, user, email } = await setup();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async () => { console.log("x".repeat(300)); };`);
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event) => { console.log("short", event.user.email); };`);
    const res = await login(tenant, client, email);
    expect(res.status).toBe(302);
    await relay(tenant);
    const [success] = await logsOf(tenant, `?q=${encodeURIComponent(`type:s AND user_id:"${user.user_id}"`)}`);
    const id = (success?.details.actions as { executions: string[] } | undefined)?.executions[0];
    const execution = (await (await onTenant(tenant, "GET", `/actions/executions/${id}`)).json()) as {
      status: string;
      results: { logs: string; logs_truncated: boolean; action_name: string; duration_ms: number; version_number: number }[];
    };
    expect(execution.status).toBe("final");
    expect(execution.results).toHaveLength(2);
    expect(execution.results[0]?.logs).toBe(`${"x".repeat(256)}…[truncated]`);
    expect(execution.results[0]?.logs_truncated).toBe(true);
    expect(execution.results[1]).toMatchObject({ logs: `short ${email}\n`, logs_truncated: false, version_number: 1 });
  });

  it("api.user.setAppMetadata and setUserMetadata are written with the login", async () => {
    const { tenant, client, user, email } = await setup();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.user.setAppMetadata("plan", "gold"); api.user.setUserMetadata("theme", "dark"); };`);
    const res0 = await login(tenant, client, email);
    expect(redirectError(res0).code).toBeTruthy();
    const res = await onTenant(tenant, "GET", `/users/${encodeURIComponent(user.user_id)}`);
    expect(await res.json()).toMatchObject({ app_metadata: { plan: "gold" }, user_metadata: { theme: "dark" } });
  });
});
