import { randomId } from "../../../shared/crypto/random";
import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { parseListQuery } from "../../../shared/pagination/list-query";
import { createHookBody, updateHookBody } from "../../../shared/schemas/hooks";
import type { HookRecord } from "../../../shared/schemas/hooks";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { refuseEgress } from "../egress";
import { inheritedHooks, refuseInherited } from "../inherited";
import { targetTenant } from "../tenant-scoped";

const HOOKS_QUERY = z.looseObject({
  triggerId: z.string().optional().describe("only hooks of this trigger"),
  enabled: z.string().optional().describe("true|false"),
  page: z.string().optional().describe("0-based page"),
  per_page: z.string().optional().describe("1-100, default 50"),
  include_totals: z.string().optional().describe("true|false"),
});

/** The reference platform's hook shape (`triggerId`), plus `trigger_id` and `url` of the webhook kind. */
const present = (hook: HookRecord) => ({ ...hook, triggerId: hook.trigger_id });

export const hookRoutes = [
  defineRoute({
    method: "post",
    path: "/hooks",
    scope: "create:hooks",
    summary: "Create a webhook hook for a trigger (a trigger the system cannot dispatch is 400)",
    body: createHookBody,
    invalidatesConfig: true,
    status: 201,
    async handler(c, { body }) {
      refuseEgress(c, "url", [body.url]);
      const id = randomId("hk_");
      const triggerId = (body.trigger_id ?? body.triggerId) as string;
      const hook = unwrap(
        await targetTenant(c).hooks().create(
          {
            id,
            name: body.name ?? `${triggerId}-${id.slice(-8)}`,
            trigger_id: triggerId,
            url: body.url ?? "",
            enabled: body.enabled ?? true,
            ...(body.template_id ? { template_id: body.template_id } : {}),
          },
          auditContext(c),
        ),
      );
      return c.json(present(hook), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/hooks",
    scope: "read:hooks",
    summary: "List hooks, newest first, optionally by triggerId and enabled (offset paging; include_totals envelope {start, limit, total, hooks})",
    query: HOOKS_QUERY,
    status: 200,
    async handler(c) {
      const q = parseListQuery(c.req.query(), { checkpoint: false });
      if (q.mode !== "offset") throw problem("checkpoint_unsupported");
      const enabled = c.req.query("enabled");
      if (enabled !== undefined && enabled !== "true" && enabled !== "false") throw problem("invalid_query_string", { detail: "enabled must be true or false" });
      const trigger = c.req.query("triggerId") ?? c.req.query("trigger_id");
      const filter = {
        ...(trigger !== undefined ? { trigger_id: trigger } : {}),
        ...(enabled !== undefined ? { enabled: enabled === "true" } : {}),
      };
      // The tenant's own hooks, newest first, then the control plane's it inherits (read-only here).
      const hooks = [...(await targetTenant(c).hooks().list(filter)), ...(await inheritedHooks(c, filter))];
      const start = q.page * q.perPage;
      const page = hooks.slice(start, start + q.perPage).map(present);
      return c.json(q.includeTotals ? { start, limit: q.perPage, length: page.length, total: hooks.length, hooks: page } : page);
    },
  }),
  defineRoute({
    method: "get",
    path: "/hooks/{id}",
    scope: "read:hooks",
    summary: "Get one hook",
    status: 200,
    async handler(c, { params }) {
      const hook = (await targetTenant(c).hooks().get(params.id)) ?? (await inheritedHooks(c)).find((h) => h.id === params.id);
      if (!hook) throw problem("inexistent_hook");
      return c.json(present(hook));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/hooks/{id}",
    scope: "update:hooks",
    summary: "Update a hook's name, url, enabled flag or trigger",
    body: updateHookBody,
    invalidatesConfig: true,
    status: 200,
    async handler(c, { params, body }) {
      const { triggerId, trigger_id, script: _script, dependencies: _dependencies, ...rest } = body;
      const trigger = trigger_id ?? triggerId;
      const patch = { ...rest, ...(trigger !== undefined ? { trigger_id: trigger } : {}) };
      refuseInherited(await inheritedHooks(c), params.id);
      refuseEgress(c, "url", [body.url]);
      const hook = unwrap(await targetTenant(c).hooks().update(params.id, patch, auditContext(c)));
      return c.json(present(hook));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/hooks/{id}",
    scope: "delete:hooks",
    summary: "Delete a hook",
    invalidatesConfig: true,
    status: 204,
    async handler(c, { params }) {
      refuseInherited(await inheritedHooks(c), params.id);
      unwrap(await targetTenant(c).hooks().delete(params.id, auditContext(c)));
      return c.body(null, 204);
    },
  }),
];
