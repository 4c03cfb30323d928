import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { createApp, type AppOptions } from "../../src/worker/app";
import { controlPlaneToken } from "./api";

/**
 * The front worker with control-plane inheritance on (INHERIT_FROM_CONTROL_PLANE=1 plus `extraEnv`), called
 * like `fetch`: `/api/v2` paths carry a control-plane token unless `token` is given, `tenant` sets the
 * `tenant-id` header, and full URLs reach a tenant's own host.
 */
export function inheritingApp(options: AppOptions = {}, extraEnv: Record<string, string> = {}) {
  const app = createApp(options);
  return async (method: string, url: string, init: { tenant?: string; body?: unknown; token?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (url.startsWith("/api/v2") && init.token !== "") headers.authorization = `Bearer ${init.token ?? (await controlPlaneToken())}`;
    if (init.tenant) headers["tenant-id"] = init.tenant;
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const full = url.startsWith("http") ? url : `http://localhost:8787${url}`;
    return app.fetch(
      new Request(full, { method, headers, redirect: "manual", ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) }),
      { ...env, INHERIT_FROM_CONTROL_PLANE: "1", ...extraEnv },
      createExecutionContext(),
    );
  };
}

/** Rows of a tenant's own tables, read straight from its object. */
export const tenantRows = (tenant: string, query: string, ...bindings: unknown[]) =>
  runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => state.storage.sql.exec(query, ...bindings).toArray() as Record<string, unknown>[]);
