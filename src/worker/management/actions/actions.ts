import { z } from "zod";
import { instrumentAction } from "../../../shared/actions/instrument";
import { openSecrets, sealSecrets } from "../../../shared/actions/dispatch";
import { runSandboxed, sandboxLimitsFrom } from "../../../shared/actions/sandbox";
import { ACTION_RUNTIME, ACTION_TRIGGERS, canonicalTrigger, triggerSpec } from "../../../shared/actions/triggers";
import { randomId } from "../../../shared/crypto/random";
import { toBase64Url } from "../../../shared/crypto/encoding";
import { problem, unwrap } from "../../../shared/errors";
import {
  type ActionSecretInput,
  createActionBody,
  deployVersionBody,
  testActionBody,
  updateActionBody,
  updateBindingsBody,
} from "../../../shared/schemas/actions";
import type { Json } from "../../../shared/types";
import type { ActionPatch, ActionTriggerRef } from "../../../shared/schemas/actions";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { readJson } from "../../http/body";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

const PAGE_QUERY = z.looseObject({
  page: z.string().regex(/^\d+$/, "page must be a non-negative integer").optional().describe("0-based page"),
  per_page: z.string().regex(/^\d+$/, "per_page must be a positive integer").optional().describe("1-100, default 20"),
});

const LIST_QUERY = PAGE_QUERY.extend({
  triggerId: z.string().optional().describe("only actions supporting this trigger"),
  actionName: z.string().optional().describe("only the action of this name"),
  deployed: z.enum(["true", "false"]).optional().describe("true|false"),
  installed: z.enum(["true", "false"]).optional().describe("true|false (no installed integrations exist)"),
});

/** The reference platform's paged envelope: `{ total, page, per_page, <field> }`. */
function paged<T>(c: AppContext, field: string, items: T[]) {
  const page = Number(c.req.query("page") ?? 0);
  const perPage = Number(c.req.query("per_page") ?? 20);
  if (perPage < 1 || perPage > 100) throw problem("invalid_query_string", { detail: "per_page must be between 1 and 100" });
  return { total: items.length, page, per_page: perPage, [field]: items.slice(page * perPage, page * perPage + perPage) };
}

/** Trigger references as stored: canonical id and version; a trigger the system cannot dispatch is 400. */
function triggersOf(list: { id: string; version?: string | undefined }[]): ActionTriggerRef[] {
  return list.map((t) => {
    const spec = triggerSpec(t.id);
    if (!spec) throw problem("invalid_trigger", { trigger: t.id });
    return { id: spec.id, version: t.version ?? spec.version };
  });
}

/** SPEC: no dependencies beyond the provided API (a package list is 400, not silently ignored). */
function noDependencies(dependencies: { name: string }[] | undefined): [] {
  if (dependencies?.length) throw problem("action_dependencies_unsupported", { names: dependencies.map((d) => d.name).join(", ") });
  return [];
}

/** The request body as audited: secret names kept, values never. */
const scrubbed = (body: { secrets?: ActionSecretInput[] | undefined }) =>
  body.secrets ? { ...body, secrets: body.secrets.map((s) => ({ name: s.name, ...(s.value !== undefined ? { value: "[REDACTED]" } : {}) })) } : body;

/** Builds the next version of an action's draft and deploys it. */
async function deployDraft(c: AppContext, actionId: string) {
  const stub = targetTenant(c);
  const draft = await stub.actions().draft(actionId);
  if (!draft) throw problem("inexistent_action");
  const compiled = instrumentAction(draft.code);
  if (!compiled.ok) throw problem("action_build_failed", { detail: compiled.line ? `${compiled.message} (line ${compiled.line})` : compiled.message });
  return unwrap(await stub.actions(auditContext(c)).deploy(actionId, { id: randomId("efb_", 24), compiled: compiled.code, draft_updated_at: draft.updated_at }));
}

export const actionRoutes = [
  defineRoute({
    method: "get",
    path: "/actions/actions",
    scope: "read:actions",
    summary: "List actions, newest first ({total, page, per_page, actions}), by triggerId, actionName, deployed",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { query }) {
      const trigger = query.triggerId === undefined ? undefined : (canonicalTrigger(query.triggerId) ?? query.triggerId);
      const list = query.installed === "true"
        ? []
        : await targetTenant(c).actions().list({
            ...(trigger !== undefined ? { trigger_id: trigger } : {}),
            ...(query.actionName !== undefined ? { action_name: query.actionName } : {}),
            ...(query.deployed !== undefined ? { deployed: query.deployed === "true" } : {}),
          });
      return c.json(paged(c, "actions", list));
    },
  }),
  defineRoute({
    method: "post",
    path: "/actions/actions",
    scope: "create:actions",
    summary: "Create an action (one supported trigger; no dependencies; secrets sealed, never returned); deploy: true deploys it",
    body: createActionBody,
    invalidatesConfig: true,
    status: 201,
    async handler(c, { body }) {
      const id = crypto.randomUUID();
      const supported = triggersOf(body.supported_triggers);
      const secrets = body.secrets ?? [];
      const missing = secrets.find((s) => s.value === undefined);
      if (missing) throw problem("action_secret_value_required", { name: missing.name });
      c.set("requestBody", scrubbed(body));
      const sealed = await sealSecrets(c.env.ENCRYPTION_KEY, id, Object.fromEntries(secrets.map((s) => [s.name, s.value as string])));
      const action = unwrap(
        await targetTenant(c).actions(auditContext(c)).create({
          id,
          name: body.name,
          supported_triggers: supported,
          code: body.code ?? "",
          runtime: body.runtime ?? ACTION_RUNTIME,
          dependencies: noDependencies(body.dependencies),
          secret_names: secrets.map((s) => s.name),
          secrets_enc: sealed,
        }),
      );
      if (body.deploy) await deployDraft(c, id);
      return c.json(body.deploy ? await targetTenant(c).actions().get(id) : action, 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/actions/actions/{id}",
    scope: "read:actions",
    summary: "Get an action (its draft and deployed version)",
    status: 200,
    async handler(c, { params }) {
      const action = await targetTenant(c).actions().get(params.id);
      if (!action) throw problem("inexistent_action");
      return c.json(action);
    },
  }),
  defineRoute({
    method: "patch",
    path: "/actions/actions/{id}",
    scope: "update:actions",
    summary: "Update an action's draft (secrets: the listed names are kept, a value replaces, others are removed)",
    body: updateActionBody,
    invalidatesConfig: true,
    status: 200,
    async handler(c, { params, body }) {
      const stub = targetTenant(c);
      const patch: ActionPatch = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.code !== undefined ? { code: body.code } : {}),
        ...(body.runtime !== undefined ? { runtime: body.runtime } : {}),
        ...(body.supported_triggers !== undefined ? { supported_triggers: triggersOf(body.supported_triggers) } : {}),
        ...(body.dependencies !== undefined ? { dependencies: noDependencies(body.dependencies) } : {}),
      };
      if (body.secrets !== undefined) {
        const draft = await stub.actions().draft(params.id);
        if (!draft) throw problem("inexistent_action");
        const current = await openSecrets(c.env.ENCRYPTION_KEY, params.id, draft.secrets_enc);
        const next: Record<string, string> = {};
        for (const secret of body.secrets) {
          const value = secret.value ?? current[secret.name];
          if (value === undefined) throw problem("action_secret_value_required", { name: secret.name });
          next[secret.name] = value;
        }
        const changed = JSON.stringify(next) !== JSON.stringify(Object.fromEntries(body.secrets.map((s) => [s.name, current[s.name]])));
        patch.secret_names = body.secrets.map((s) => s.name);
        patch.secrets_enc = changed || body.secrets.length !== Object.keys(current).length ? await sealSecrets(c.env.ENCRYPTION_KEY, params.id, next) : draft.secrets_enc;
      }
      c.set("requestBody", scrubbed(body));
      return c.json(unwrap(await stub.actions(auditContext(c)).update(params.id, patch)));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/actions/actions/{id}",
    scope: "delete:actions",
    summary: "Delete an action; a bound action only with force=true (its bindings go too)",
    query: z.looseObject({ force: z.enum(["true", "false"]).optional().describe("true|false") }),
    invalidatesConfig: true,
    status: 204,
    async handler(c, { params, query }) {
      unwrap(await targetTenant(c).actions(auditContext(c)).delete(params.id, query.force === "true"));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "post",
    path: "/actions/actions/{id}/deploy",
    scope: "create:actions",
    summary: "Deploy the draft as a new version (its code is parsed and instrumented; a syntax error is 400)",
    invalidatesConfig: true,
    status: 202,
    async handler(c, { params }) {
      return c.json(await deployDraft(c, params.id), 202);
    },
  }),
  defineRoute({
    method: "post",
    path: "/actions/actions/{id}/test",
    scope: "create:actions",
    summary: "Run the draft once in the sandbox with payload as its event; answers {payload: {logs, error, commands, duration_ms}}",
    body: testActionBody,
    status: 200,
    async handler(c, { params, body }) {
      const stub = targetTenant(c);
      const [action, draft] = await Promise.all([stub.actions().get(params.id), stub.actions().draft(params.id)]);
      if (!action || !draft) throw problem("inexistent_action");
      const compiled = instrumentAction(draft.code);
      if (!compiled.ok) throw problem("action_build_failed", { detail: compiled.message });
      const spec = triggerSpec(action.supported_triggers[0]?.id ?? "");
      if (!spec) throw problem("invalid_trigger", { trigger: action.supported_triggers[0]?.id ?? "" });
      const digest = toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(compiled.code)))).slice(0, 32);
      const secrets = await openSecrets(c.env.ENCRYPTION_KEY, params.id, draft.secrets_enc);
      const run = await runSandboxed(
        c.env.LOADER,
        { tenantId: c.var.tenant.id, versionId: `draft-${digest}`, loadCode: async () => compiled.code },
        { handler: spec.handler, api: spec.id, event: { ...(body.payload as Record<string, Json>), secrets } },
        sandboxLimitsFrom(c.env as unknown as Record<string, unknown>),
      );
      return c.json({
        payload: {
          logs: run.logs,
          error: run.ok ? null : { id: run.error?.name ?? "ActionError", msg: run.error?.message ?? "The action failed" },
          commands: run.commands,
          duration_ms: run.duration_ms,
        },
      });
    },
  }),
  defineRoute({
    method: "get",
    path: "/actions/actions/{action_id}/versions",
    scope: "read:actions",
    summary: "List an action's versions, newest first ({total, page, per_page, versions})",
    query: PAGE_QUERY,
    status: 200,
    async handler(c, { params }) {
      const versions = await targetTenant(c).actions().versions(params.action_id);
      if (!versions) throw problem("inexistent_action");
      return c.json(paged(c, "versions", versions));
    },
  }),
  defineRoute({
    method: "get",
    path: "/actions/actions/{action_id}/versions/{id}",
    scope: "read:actions",
    summary: "Get one version of an action",
    status: 200,
    async handler(c, { params }) {
      const version = await targetTenant(c).actions().version(params.action_id, params.id);
      if (!version) throw problem((await targetTenant(c).actions().get(params.action_id)) ? "inexistent_action_version" : "inexistent_action");
      return c.json(version);
    },
  }),
  defineRoute({
    method: "post",
    path: "/actions/actions/{action_id}/versions/{id}/deploy",
    scope: "create:actions",
    summary: "Deploy an earlier version (roll back); update_draft: true makes it the draft too",
    invalidatesConfig: true,
    status: 202,
    async handler(c, { params }) {
      const text = await c.req.raw.clone().text();
      const body = text.trim() ? await readJson(c, deployVersionBody) : undefined;
      const version = unwrap(await targetTenant(c).actions(auditContext(c)).deployVersion(params.action_id, params.id, body?.update_draft === true));
      return c.json(version, 202);
    },
  }),
  defineRoute({
    method: "get",
    path: "/actions/triggers",
    scope: "read:actions",
    summary: "The triggers actions can be bound to here",
    status: 200,
    handler(c) {
      const triggers = ACTION_TRIGGERS.map((t) => ({
        id: t.id,
        version: t.version,
        status: "CURRENT",
        runtimes: [ACTION_RUNTIME],
        default_runtime: ACTION_RUNTIME,
        compatible_triggers: [],
        binding_policy: "trigger-bound",
      }));
      return c.json({ triggers });
    },
  }),
  defineRoute({
    method: "get",
    path: "/actions/triggers/{trigger_id}/bindings",
    scope: "read:actions",
    summary: "A trigger's bindings in execution order ({total, page, per_page, bindings})",
    query: PAGE_QUERY,
    status: 200,
    async handler(c, { params }) {
      const trigger = canonicalTrigger(params.trigger_id);
      if (!trigger) throw problem("invalid_trigger", { trigger: params.trigger_id });
      return c.json(paged(c, "bindings", await targetTenant(c).actions().bindings(trigger)));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/actions/triggers/{trigger_id}/bindings",
    scope: "update:actions",
    summary: "Replace a trigger's bindings with an ordered list of deployed actions (by action_id, action_name or binding_id)",
    body: updateBindingsBody,
    invalidatesConfig: true,
    status: 200,
    async handler(c, { params, body }) {
      const trigger = canonicalTrigger(params.trigger_id);
      if (!trigger) throw problem("invalid_trigger", { trigger: params.trigger_id });
      const inputs = body.bindings.map((b) => ({ id: crypto.randomUUID(), ref: b.ref, ...(b.display_name ? { display_name: b.display_name } : {}) }));
      const bindings = unwrap(await targetTenant(c).actions(auditContext(c)).replaceBindings(trigger, inputs));
      return c.json({ bindings });
    },
  }),
  defineRoute({
    method: "get",
    path: "/actions/executions/{id}",
    scope: "read:actions",
    summary: "One execution of a trigger: each action's result, duration and console output (256 characters kept)",
    status: 200,
    async handler(c, { params }) {
      const execution = await targetTenant(c).actions().execution(params.id);
      if (!execution) throw problem("inexistent_action_execution");
      return c.json(execution);
    },
  }),
];
