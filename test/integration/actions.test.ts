import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/api";
import { type ActionBody, bindAction, createAction, onTenant } from "../helpers/actions";
import { logsOf, relay } from "../helpers/outbox";
import { expectReachability } from "../helpers/reach";

const CODE = `exports.onExecutePostLogin = async (event, api) => { api.idToken.setCustomClaim("https://example.com/plan", "gold"); };`;

describe("actions management (issue 13 point 1)", () => {
  it("creates an action in the reference shape, reads, lists, updates the draft and deletes it", async () => {
    const tenantId = await createTenant();
    const action = await createAction(tenantId, "post-login", CODE);
    expect(action).toMatchObject({ code: CODE, runtime: "node22", dependencies: [], secrets: [], all_changes_deployed: false, status: "built" });
    expect(action.supported_triggers).toEqual([{ id: "post-login", version: "v3" }]);
    expect(action).not.toHaveProperty("deployed_version");
    expect(await (await onTenant(tenantId, "GET", `/actions/actions/${action.id}`)).json()).toEqual(action);

    const list = (await (await onTenant(tenantId, "GET", "/actions/actions?triggerId=post-login")).json()) as { total: number; actions: ActionBody[] };
    expect(list).toMatchObject({ total: 1, page: 0, per_page: 20 });
    expect(list.actions.map((a) => a.id)).toEqual([action.id]);
    expect(((await (await onTenant(tenantId, "GET", "/actions/actions?triggerId=credentials-exchange")).json()) as { total: number }).total).toBe(0);

    const patched = await onTenant(tenantId, "PATCH", `/actions/actions/${action.id}`, { code: "exports.onExecutePostLogin = async () => {};" });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id: action.id, code: "exports.onExecutePostLogin = async () => {};" });
    expect((await onTenant(tenantId, "DELETE", `/actions/actions/${action.id}`)).status).toBe(204);
    expect((await onTenant(tenantId, "GET", `/actions/actions/${action.id}`)).status).toBe(404);
    expect((await onTenant(tenantId, "DELETE", `/actions/actions/${action.id}`)).status).toBe(404);
  });

  it("deploys versions, lists them newest first, rolls back, and marks the draft changed until the next deploy", async () => {
    const tenantId = await createTenant();
    const action = await createAction(tenantId, "post-login", CODE);
    const first = await onTenant(tenantId, "POST", `/actions/actions/${action.id}/deploy`);
    expect(first.status).toBe(202);
    const v1 = (await first.json()) as { id: string; number: number; deployed: boolean; code: string; action: { id: string } };
    expect(v1).toMatchObject({ number: 1, deployed: true, code: CODE, status: "built", action: { id: action.id } });
    await onTenant(tenantId, "PATCH", `/actions/actions/${action.id}`, { code: "exports.onExecutePostLogin = async () => {};" });
    expect(await (await onTenant(tenantId, "GET", `/actions/actions/${action.id}`)).json()).toMatchObject({ all_changes_deployed: false, deployed_version: { id: v1.id } });
    const v2 = (await (await onTenant(tenantId, "POST", `/actions/actions/${action.id}/deploy`)).json()) as { id: string; number: number };
    expect(v2.number).toBe(2);
    const versions = (await (await onTenant(tenantId, "GET", `/actions/actions/${action.id}/versions`)).json()) as { total: number; versions: { id: string; deployed: boolean }[] };
    expect(versions.total).toBe(2);
    expect(versions.versions.map((v) => [v.id, v.deployed])).toEqual([[v2.id, true], [v1.id, false]]);
    const back = await onTenant(tenantId, "POST", `/actions/actions/${action.id}/versions/${v1.id}/deploy`, { update_draft: true });
    expect(back.status).toBe(202);
    expect(await (await onTenant(tenantId, "GET", `/actions/actions/${action.id}`)).json()).toMatchObject({ code: CODE, all_changes_deployed: true, deployed_version: { id: v1.id, number: 1 } });
    expect(await (await onTenant(tenantId, "GET", `/actions/actions/${action.id}/versions/${v2.id}`)).json()).toMatchObject({ id: v2.id, deployed: false });
    expect((await onTenant(tenantId, "GET", `/actions/actions/${action.id}/versions/nope`)).status).toBe(404);
  });

  it("keeps secret values sealed: names and times only in responses, logs and storage", async () => {
    const tenantId = await createTenant();
    const action = await createAction(tenantId, "post-login", CODE, { secrets: [{ name: "API_TOKEN", value: "s3cr3t-value-1" }, { name: "OTHER", value: "plain-looking-2" }] });
    expect(action.secrets.map((s) => s.name)).toEqual(["API_TOKEN", "OTHER"]);
    expect(JSON.stringify(action)).not.toContain("s3cr3t-value-1");
    const patched = await onTenant(tenantId, "PATCH", `/actions/actions/${action.id}`, { secrets: [{ name: "OTHER" }, { name: "NEW_ONE", value: "plain-looking-3" }] });
    expect(((await patched.json()) as ActionBody).secrets.map((s) => s.name)).toEqual(["OTHER", "NEW_ONE"]);
    expect((await onTenant(tenantId, "PATCH", `/actions/actions/${action.id}`, { secrets: [{ name: "UNKNOWN" }] })).status).toBe(400);
    await onTenant(tenantId, "POST", `/actions/actions/${action.id}/deploy`);
    await relay(tenantId);
    const everything = JSON.stringify(await logsOf(tenantId, "?per_page=100"));
    const stored = await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => JSON.stringify(state.storage.sql.exec("SELECT * FROM actions, action_versions").toArray()));
    for (const value of ["s3cr3t-value-1", "plain-looking-2", "plain-looking-3"]) {
      expect(everything).not.toContain(value);
      expect(stored).not.toContain(value);
    }
    expect(everything).toContain("NEW_ONE");
  });

  it("binds deployed actions in order, by action_id, action_name or binding_id, and refuses what cannot run", async () => {
    const tenantId = await createTenant();
    const a = await bindAction(tenantId, "post-login", CODE);
    const b = await createAction(tenantId, "post-login", CODE);
    expect((await onTenant(tenantId, "PATCH", "/actions/triggers/post-login/bindings", { bindings: [{ ref: { type: "action_id", value: b.id } }] })).status).toBe(400);
    await onTenant(tenantId, "POST", `/actions/actions/${b.id}/deploy`);
    const current = (await (await onTenant(tenantId, "GET", "/actions/triggers/post-login/bindings")).json()) as { bindings: { id: string; action: { id: string } }[] };
    const res = await onTenant(tenantId, "PATCH", "/actions/triggers/post-login/bindings", {
      bindings: [{ ref: { type: "action_name", value: b.name }, display_name: "second first" }, { ref: { type: "binding_id", value: current.bindings[0]?.id } }],
    });
    expect(res.status).toBe(200);
    const listed = (await (await onTenant(tenantId, "GET", "/actions/triggers/post-login/bindings")).json()) as { total: number; bindings: { id: string; display_name: string; trigger_id: string; action: { id: string } }[] };
    expect(listed.total).toBe(2);
    expect(listed.bindings.map((x) => [x.action.id, x.display_name, x.trigger_id])).toEqual([[b.id, "second first", "post-login"], [a.id, a.name, "post-login"]]);
    expect(listed.bindings[1]?.id).toBe(current.bindings[0]?.id);

    const ce = await createAction(tenantId, "credentials-exchange", "exports.onExecuteCredentialsExchange = async () => {};");
    await onTenant(tenantId, "POST", `/actions/actions/${ce.id}/deploy`);
    expect((await onTenant(tenantId, "PATCH", "/actions/triggers/post-login/bindings", { bindings: [{ ref: { type: "action_id", value: ce.id } }] })).status).toBe(400);
    expect((await onTenant(tenantId, "PATCH", "/actions/triggers/post-login/bindings", { bindings: [{ ref: { type: "action_id", value: "missing" } }] })).status).toBe(400);
    // A bound action is deleted only with force, and its bindings go with it.
    expect((await onTenant(tenantId, "DELETE", `/actions/actions/${a.id}`)).status).toBe(400);
    expect((await onTenant(tenantId, "DELETE", `/actions/actions/${a.id}?force=true`)).status).toBe(204);
    const after = (await (await onTenant(tenantId, "GET", "/actions/triggers/post-login/bindings")).json()) as { bindings: { action: { id: string } }[] };
    expect(after.bindings.map((x) => x.action.id)).toEqual([b.id]);
  });

  it("binding to or creating for a trigger the system cannot dispatch is 400 (a typo, post-user-update)", async () => {
    const tenantId = await createTenant();
    for (const trigger of ["post-user-update", "post-logn", "send-phone-message"]) {
      const created = await onTenant(tenantId, "POST", "/actions/actions", { name: `x-${trigger}`, supported_triggers: [{ id: trigger, version: "v1" }], code: "" });
      expect(created.status, trigger).toBe(400);
      expect(await created.json()).toMatchObject({ statusCode: 400, errorCode: "invalid_trigger" });
      expect((await onTenant(tenantId, "PATCH", `/actions/triggers/${trigger}/bindings`, { bindings: [] })).status, trigger).toBe(400);
      expect((await onTenant(tenantId, "GET", `/actions/triggers/${trigger}/bindings`)).status, trigger).toBe(400);
    }
    // SPEC §6.1's name for the login trigger is accepted as the reference platform's post-login.
    const alias = await onTenant(tenantId, "POST", "/actions/actions", { name: "alias", supported_triggers: [{ id: "post-user-login" }], code: "" });
    expect(await alias.json()).toMatchObject({ supported_triggers: [{ id: "post-login", version: "v3" }] });
    const triggers = (await (await onTenant(tenantId, "GET", "/actions/triggers")).json()) as { triggers: { id: string }[] };
    expect(triggers.triggers.map((t) => t.id)).toEqual(["post-login", "credentials-exchange", "pre-user-registration", "post-user-registration", "post-user-deletion"]);
  });

  it("refuses dependencies, modules, a syntax error at deploy, unknown fields, wrong types and duplicates with a 4xx", async () => {
    const tenantId = await createTenant();
    const base = { name: "valid", supported_triggers: [{ id: "post-login" }] };
    const bad: unknown[] = [
      { ...base, dependencies: [{ name: "lodash", version: "4.17.21" }] },
      { ...base, modules: [{ module_id: "m" }] },
      { ...base, unknown_field: 1 },
      { ...base, code: 42 },
      { ...base, supported_triggers: [] },
      { ...base, supported_triggers: [{ id: "post-login" }, { id: "credentials-exchange" }] },
      { ...base, secrets: [{ name: "A" }] },
      { ...base, secrets: [{ name: "bad name", value: "x" }] },
      { ...base, name: "" },
      { supported_triggers: [{ id: "post-login" }] },
    ];
    for (const body of bad) expect((await onTenant(tenantId, "POST", "/actions/actions", body)).status, JSON.stringify(body)).toBe(400);
    expect((await onTenant(tenantId, "POST", "/actions/actions", "{not json")).status).toBe(400);
    const broken = await createAction(tenantId, "post-login", "exports.onExecutePostLogin = async (event, api) => { if ( };");
    const deploy = await onTenant(tenantId, "POST", `/actions/actions/${broken.id}/deploy`);
    expect(deploy.status).toBe(400);
    expect(await deploy.json()).toMatchObject({ errorCode: "action_build_failed" });
    const dup = await onTenant(tenantId, "POST", "/actions/actions", { ...base, name: broken.name });
    expect(dup.status).toBe(409);
    expect((await onTenant(tenantId, "GET", "/actions/executions/exec_unknown")).status).toBe(404);
  });

  const body = () => ({ name: "reach", supported_triggers: [{ id: "post-login" }], code: CODE });
  const withAction = async (tenantId: string) => `/actions/actions/${(await createAction(tenantId, "post-login", CODE)).id}`;

  it("who can manage actions: none 401, missing scope 403, another tenant 403, the right scope succeeds (list, create, triggers)", async () => {
    await expectReachability("POST", () => "/actions/actions", "create:actions", 201, body);
    await expectReachability("GET", () => "/actions/actions", "read:actions", 200);
    await expectReachability("GET", () => "/actions/triggers", "read:actions", 200);
  });

  it("who can reach one action: read, update, delete", async () => {
    await expectReachability("GET", withAction, "read:actions", 200);
    await expectReachability("PATCH", withAction, "update:actions", 200, () => ({ code: CODE }));
    await expectReachability("DELETE", withAction, "delete:actions", 204);
  });

  it("who can deploy, test and list versions", async () => {
    await expectReachability("POST", async (t) => `${await withAction(t)}/deploy`, "create:actions", 202);
    await expectReachability("POST", async (t) => `${await withAction(t)}/test`, "create:actions", 200, () => ({ payload: {} }));
    await expectReachability("GET", async (t) => `${await withAction(t)}/versions`, "read:actions", 200);
  });

  it("who can read and change bindings", async () => {
    await expectReachability("PATCH", () => "/actions/triggers/post-login/bindings", "update:actions", 200, () => ({ bindings: [] }));
    await expectReachability("GET", () => "/actions/triggers/post-login/bindings", "read:actions", 200);
  });
});

describe("POST /actions/actions/{id}/test", () => {
  it("runs the draft in the sandbox with the payload as event, and reports its commands, logs and errors", async () => {
    const tenantId = await createTenant();
    const code = `exports.onExecutePostLogin = async (event, api) => { console.log("hello", event.user.email); api.accessToken.setCustomClaim("https://x/y", event.secrets.K); };`;
    const action = await createAction(tenantId, "post-login", code, { secrets: [{ name: "K", value: "from-secret" }] });
    const res = await onTenant(tenantId, "POST", `/actions/actions/${action.id}/test`, { payload: { user: { email: "a@example.com" } } });
    expect(res.status).toBe(200);
    const { payload } = (await res.json()) as { payload: { logs: string; error: unknown; commands: unknown[] } };
    expect(payload.logs).toBe("hello a@example.com\n");
    expect(payload.error).toBeNull();
    expect(payload.commands).toEqual([{ type: "claim", target: "access_token", name: "https://x/y", value: "from-secret" }]);
    await onTenant(tenantId, "PATCH", `/actions/actions/${action.id}`, { code: "exports.onExecutePostLogin = async () => { throw new Error('boom'); };" });
    const failed = (await (await onTenant(tenantId, "POST", `/actions/actions/${action.id}/test`, { payload: {} })).json()) as { payload: { error: { msg: string } } };
    expect(failed.payload.error.msg).toBe("boom");
  });
});
