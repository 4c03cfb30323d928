import { z } from "zod";
import type { Tenant } from "../../../shared/types";
import { offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import { createTenantBody, updateTenantBody } from "../../../shared/schemas/platform/tenants";
import { platform } from "../../tenant/stubs";
import { assertCanManage, createTenantAs, deleteTenantAs, loadTenant, updateTenantAs, visibleTenants } from "../../tenant/tenant-admin";
import { defineRoute } from "../define";
import { LIST_QUERY, listResponse } from "../list-response";

const TENANTS_QUERY = LIST_QUERY.extend({
  name_filter: z.string().max(200).optional().describe("only tenants whose id, name or display name contains this text (case-insensitive)"),
});

/** The same test as the registry's `name_filter`, for the tenants a non-control-plane caller sees. */
const matchesName = (t: Tenant, text: string) =>
  [t.id, t.name, t.friendly_name ?? ""].some((v) => String(v ?? "").toLowerCase().includes(text.toLowerCase()));

export const tenantRoutes = [
  defineRoute({
    method: "post",
    path: "/tenants",
    scope: "create:tenants",
    summary: "Create a tenant (control-plane tokens only); runs the idempotent tenant seed",
    body: createTenantBody,
    status: 201,
    async handler(c, { body }) {
      return c.json(await createTenantAs(c, body), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/tenants",
    scope: "read:tenants",
    summary: "List tenants (all tenants on the control plane; the caller's own tenant elsewhere), optionally by name_filter",
    query: TENANTS_QUERY,
    status: 200,
    async handler(c, { query }) {
      // A control-plane client token lists every tenant; any other caller what it may reach (SPEC §5.4,
      // issue 15 point 3: its own tenant, or its organization's).
      const nameFilter = query.name_filter || undefined;
      const all = await visibleTenants(c);
      const visible = all && nameFilter ? all.filter((t) => matchesName(t, nameFilter)) : all;
      if (visible) {
        const q = parseListQuery(c.req.query(), { checkpoint: true });
        return c.json(q.mode === "offset" ? offsetPage("tenants", visible.slice(q.page * q.perPage, (q.page + 1) * q.perPage), q, visible.length) : { tenants: visible });
      }
      const registry = platform(c.env);
      return listResponse(c, "tenants", (window) => registry.tenants().list(window, nameFilter), (t) => t.id, (t) => t);
    },
  }),
  defineRoute({
    method: "get",
    path: "/tenants/{id}",
    scope: "read:tenants",
    summary: "Get one tenant",
    status: 200,
    async handler(c, { params }) {
      await assertCanManage(c, params.id);
      return c.json(await loadTenant(c, params.id));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/tenants/{id}",
    scope: "update:tenants",
    summary: "Update a tenant's settings",
    body: updateTenantBody,
    status: 200,
    async handler(c, { params, body }) {
      return c.json(await updateTenantAs(c, params.id, body));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/tenants/{id}",
    scope: "delete:tenants",
    summary: "Delete a tenant and all of its data (control-plane tokens only)",
    status: 204,
    async handler(c, { params }) {
      // A journaled operation (issue 15 point 4): 204 once every step ran; 202 with the operation when a step
      // failed and the stale-operation sweep will finish it.
      const { done, operation } = await deleteTenantAs(c, params.id);
      return done ? c.body(null, 204) : c.json(operation, 202);
    },
  }),
];
