import type { Hono } from "hono";
import { z } from "zod";
import type { AppContext, AppEnv } from "../context";
import { readJson } from "../http/body";
import { type CurrentUserAccess, requireScope } from "../middleware/management-auth";

type Method = "get" | "post" | "patch" | "put" | "delete";

/**
 * One management route: its method and path, the scope it requires, and the schemas that both validate the
 * request and generate the OpenAPI document (GET /api/v2/spec). A route cannot be registered without a
 * scope, so the scope table denies by construction anything not in it.
 */
export interface ManagementRoute<B = unknown> {
  method: Method;
  /** OpenAPI-style path relative to /api/v2, e.g. `/tenants/{id}`. */
  path: string;
  scope: string;
  /** Also reachable with a user's token holding this current-user scope, on the user's own id. */
  currentUser?: CurrentUserAccess;
  summary: string;
  body?: z.ZodType<B>;
  /** Documented query parameters (validated by the handler, e.g. pagination). */
  query?: Record<string, string>;
  status: number;
  handler: (c: AppContext, input: { body: B; params: Record<string, string> }) => Promise<Response> | Response;
}

/** Typed identity helper so that `body` and `handler` agree. */
export const defineRoute = <B>(route: ManagementRoute<B>): ManagementRoute => route as unknown as ManagementRoute;

const toHonoPath = (path: string) => path.replace(/\{([a-z_]+)\}/g, ":$1");

/** Registers routes on a router, each behind its scope check and body validation. */
export function mountRoutes(router: Hono<AppEnv>, routes: readonly ManagementRoute[]): void {
  for (const route of routes) {
    router.on(route.method.toUpperCase(), toHonoPath(route.path), requireScope(route.scope, route.currentUser), async (c) => {
      const body = route.body ? await readJson(c, route.body) : undefined;
      if (body !== undefined) c.set("requestBody", body);
      return route.handler(c, { body, params: c.req.param() as Record<string, string> });
    });
  }
}

/** The OpenAPI 3.1 document for a set of routes, stating the exact scope of each. */
export function openApiDocument(title: string, serverPath: string, routes: readonly ManagementRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters = [
      ...[...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } })),
      ...Object.entries(route.query ?? {}).map(([name, description]) => ({ name, in: "query", description, schema: { type: "string" } })),
    ];
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method] = {
      summary: route.summary,
      security: [{ bearerAuth: [route.scope] }, ...(route.currentUser ? [{ bearerAuth: [route.currentUser.scope] }] : [])],
      "x-scope": route.scope,
      ...(route.currentUser ? { "x-current-user-scope": route.currentUser.scope } : {}),
      parameters,
      ...(route.body
        ? { requestBody: { required: true, content: { "application/json": { schema: z.toJSONSchema(route.body, { io: "input" }) } } } }
        : {}),
      responses: { [String(route.status)]: { description: "Success" }, "400": { description: "Bad request" }, "401": { description: "Missing or malformed bearer token" }, "403": { description: "Forbidden" } },
    };
  }
  return {
    openapi: "3.1.0",
    info: { title, version: "2" },
    servers: [{ url: serverPath }],
    components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } } },
    paths,
  };
}
