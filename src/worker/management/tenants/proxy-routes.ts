import { z } from "zod";
import { sha256 } from "../../../shared/crypto/compare";
import { problem, unwrap } from "../../../shared/errors";
import { createProxyRouteBody, type ProxyHandler, updateProxyRouteBody } from "../../../shared/schemas/platform/proxy-routes";
import type { ProxyRoute } from "../../../shared/types";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { platform } from "../../tenant/stubs";
import { defineRoute } from "../define";

/**
 * /api/v2/proxy-routes (SPEC §2.3; issue 16 point 2): the dispatcher's routing table. Writes are for the
 * control plane only (a route can send a host's traffic anywhere); a tenant's token reads its own routes.
 * Every handler's options are validated on write; a basic_auth password is stored as its SHA-256 only.
 */

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** Replaces write-only secrets by what is stored. */
async function storable(handlers: ProxyHandler[]): Promise<ProxyHandler[]> {
  return Promise.all(
    handlers.map(async (h) => {
      if (h.type !== "basic_auth" || h.options.password === undefined) return h;
      const { password, ...rest } = h.options;
      return { type: "basic_auth", options: { ...rest, password_sha256: hex(await sha256(password)) } } as ProxyHandler;
    }),
  );
}

/** The API view: a basic_auth handler shows its username and realm, never its password digest. */
function present(route: ProxyRoute): ProxyRoute {
  return {
    ...route,
    handlers: route.handlers.map((h) => {
      if (h.type !== "basic_auth") return h;
      const { password_sha256: _digest, password: _password, ...rest } = h.options;
      return { type: "basic_auth", options: rest } as ProxyHandler;
    }),
  };
}

function assertCanRead(c: AppContext, route: ProxyRoute | null): ProxyRoute {
  if (!route || (route.tenant_id !== c.var.auth.tenantId && !c.var.auth.isControlPlane)) throw problem("inexistent_proxy_route");
  return route;
}

function assertControlPlane(c: AppContext): void {
  if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
}

const listQuery = z.looseObject({ tenant_id: z.string().min(1).max(63).optional().describe("only this tenant's routes") });

export const proxyRouteRoutes = [
  defineRoute({
    method: "get",
    path: "/proxy-routes",
    scope: "read:proxy_routes",
    summary: "Proxy routes in ascending priority (the control plane sees every tenant's; a tenant its own)",
    query: listQuery,
    status: 200,
    async handler(c, { query }) {
      const tenantId = c.var.auth.isControlPlane ? (query.tenant_id ?? null) : c.var.auth.tenantId;
      if (!c.var.auth.isControlPlane && query.tenant_id && query.tenant_id !== c.var.auth.tenantId) throw problem("cross_tenant_forbidden");
      return c.json((await platform(c.env).proxyRoutes().list(tenantId)).map(present));
    },
  }),
  defineRoute({
    method: "get",
    path: "/proxy-routes/{id}",
    scope: "read:proxy_routes",
    summary: "One proxy route",
    status: 200,
    async handler(c, { params }) {
      return c.json(present(assertCanRead(c, await platform(c.env).proxyRoutes().get(params.id))));
    },
  }),
  defineRoute({
    method: "post",
    path: "/proxy-routes",
    scope: "create:proxy_routes",
    summary: "Create a proxy route (control plane only); handler options are validated per type",
    body: createProxyRouteBody,
    status: 201,
    async handler(c, { body }) {
      assertControlPlane(c);
      const route = unwrap(
        await platform(c.env)
          .proxyRoutes(auditContext(c), c.var.auth.tenantId)
          .create({ ...body, handlers: await storable(body.handlers as ProxyHandler[]) }),
      );
      return c.json(present(route), 201);
    },
  }),
  defineRoute({
    method: "patch",
    path: "/proxy-routes/{id}",
    scope: "update:proxy_routes",
    summary: "Update a proxy route's priority, match or handlers (control plane only)",
    body: updateProxyRouteBody,
    status: 200,
    async handler(c, { params, body }) {
      assertControlPlane(c);
      const patch = { ...body, ...(body.handlers ? { handlers: await storable(body.handlers as ProxyHandler[]) } : {}) };
      return c.json(present(unwrap(await platform(c.env).proxyRoutes(auditContext(c), c.var.auth.tenantId).update(params.id, patch))));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/proxy-routes/{id}",
    scope: "delete:proxy_routes",
    summary: "Delete a proxy route (control plane only)",
    status: 204,
    async handler(c, { params }) {
      assertControlPlane(c);
      unwrap(await platform(c.env).proxyRoutes(auditContext(c), c.var.auth.tenantId).delete(params.id));
      return c.body(null, 204);
    },
  }),
];
