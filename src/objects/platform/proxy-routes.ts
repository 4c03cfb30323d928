import { randomId } from "../../shared/crypto/random";
import { fail, ok, type Result } from "../../shared/errors";
import type { ProxyHandler } from "../../shared/schemas/platform/proxy-routes";
import type { HostEntry, ProxyRoute } from "../../shared/types";
import { iso, json, type Sql } from "../sql";
import { PlatformRpc } from "./rpc";
import { getTenant } from "./tenants";

/** proxy_routes (SPEC §2.3): read by the dispatcher through HostDirectory, written through /api/v2/proxy-routes. */

type RouteRow = { id: string; tenant_id: string; custom_domain_id: string | null; priority: number; match: string; handlers: string; created_at: number; updated_at: number };

function toRoute(row: RouteRow): ProxyRoute {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    custom_domain_id: row.custom_domain_id,
    priority: row.priority,
    match: json(row.match, {}),
    handlers: json<ProxyHandler[]>(row.handlers, []),
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
}

export function getProxyRoute(sql: Sql, id: string): ProxyRoute | null {
  const row = sql.first<RouteRow>`SELECT * FROM proxy_routes WHERE id = ${id}`;
  return row ? toRoute(row) : null;
}

export interface ProxyRouteInput {
  tenant_id: string;
  custom_domain_id?: string | null;
  priority?: number;
  match?: ProxyRoute["match"];
  handlers: ProxyHandler[];
}

export function createProxyRoute(sql: Sql, input: ProxyRouteInput, now: number): Result<ProxyRoute> {
  if (!getTenant(sql, input.tenant_id)) return fail("tenant_not_found");
  if (input.custom_domain_id) {
    const domain = sql.first<{ tenant_id: string }>`SELECT tenant_id FROM custom_domains WHERE id = ${input.custom_domain_id}`;
    if (!domain || domain.tenant_id !== input.tenant_id) {
      return fail("invalid_proxy_handler", { detail: "custom_domain_id is not a custom domain of this tenant" });
    }
  }
  const id = randomId("prt_");
  sql.run`INSERT INTO proxy_routes (id, tenant_id, custom_domain_id, priority, match, handlers, created_at, updated_at)
    VALUES (${id}, ${input.tenant_id}, ${input.custom_domain_id ?? null}, ${input.priority ?? 0},
      ${JSON.stringify(input.match ?? { path: "/*" })}, ${JSON.stringify(input.handlers)}, ${now}, ${now})`;
  return ok(getProxyRoute(sql, id) as ProxyRoute);
}

export function updateProxyRoute(
  sql: Sql,
  id: string,
  patch: Partial<Pick<ProxyRoute, "priority" | "match" | "handlers">>,
  now: number,
): Result<ProxyRoute> {
  const current = getProxyRoute(sql, id);
  if (!current) return fail("inexistent_proxy_route");
  const next = { ...current, ...patch };
  sql.run`UPDATE proxy_routes SET priority = ${next.priority}, match = ${JSON.stringify(next.match)},
      handlers = ${JSON.stringify(next.handlers)}, updated_at = ${now} WHERE id = ${id}`;
  return ok(getProxyRoute(sql, id) as ProxyRoute);
}

export function listProxyRoutes(sql: Sql, tenantId: string | null): ProxyRoute[] {
  const rows = tenantId
    ? sql.all<RouteRow>`SELECT * FROM proxy_routes WHERE tenant_id = ${tenantId} ORDER BY priority, created_at, id`
    : sql.all<RouteRow>`SELECT * FROM proxy_routes ORDER BY tenant_id, priority, created_at, id LIMIT 1000`;
  return rows.map(toRoute);
}

/**
 * What the dispatcher needs for a host already mapped to a tenant (and, for a custom domain, that domain):
 * the tenant's routing facts and its routes for this host, in ascending priority: the domain's own routes
 * and the tenant-wide ones (no custom_domain_id). Null when the tenant does not exist.
 */
export function hostEntry(sql: Sql, host: string, tenantId: string, customDomain: { id: string; domain: string } | null): HostEntry | null {
  const tenant = getTenant(sql, tenantId);
  if (!tenant) return null;
  const rows = customDomain
    ? sql.all<RouteRow>`SELECT * FROM proxy_routes WHERE tenant_id = ${tenantId}
        AND (custom_domain_id IS NULL OR custom_domain_id = ${customDomain.id}) ORDER BY priority, created_at, id`
    : sql.all<RouteRow>`SELECT * FROM proxy_routes WHERE tenant_id = ${tenantId} AND custom_domain_id IS NULL
        ORDER BY priority, created_at, id`;
  return {
    host,
    tenant: {
      id: tenant.id,
      deployment_type: tenant.deployment_type,
      provisioning_state: tenant.provisioning_state,
      worker_script_name: tenant.worker_script_name,
      worker_version: tenant.worker_version,
    },
    custom_domain: customDomain,
    routes: rows.map(toRoute),
  };
}

/** The proxy-routes facade (`stub.proxyRoutes(audit, logTenantId)`): writes record `proxy_route.*` audit events. */
export class ProxyRoutes extends PlatformRpc {
  get(id: string): ProxyRoute | null {
    return this.read((sql) => getProxyRoute(sql, id));
  }

  list(tenantId: string | null): ProxyRoute[] {
    return this.read((sql) => listProxyRoutes(sql, tenantId));
  }

  create(input: ProxyRouteInput): Result<ProxyRoute> {
    return this.auditedWrite((tx) => createProxyRoute(tx.sql, input, tx.now), { entity: "proxy_route", action: "created", id: (r) => r.id, after: (r) => r });
  }

  update(id: string, patch: Partial<Pick<ProxyRoute, "priority" | "match" | "handlers">>): Result<ProxyRoute> {
    const before = this.read((sql) => getProxyRoute(sql, id));
    return this.auditedWrite((tx) => updateProxyRoute(tx.sql, id, patch, tx.now), { entity: "proxy_route", action: "updated", id, before, after: (r) => r });
  }

  delete(id: string): Result<true> {
    const before = this.read((sql) => getProxyRoute(sql, id));
    return this.auditedWrite(
      (tx) => (tx.sql.run`DELETE FROM proxy_routes WHERE id = ${id}` > 0 ? ok(true as const) : fail("inexistent_proxy_route")),
      { entity: "proxy_route", action: "deleted", id, before },
    );
  }
}
