import type { Hono } from "hono";
import { z } from "zod";
import type { AppContext, AppEnv } from "../context";
import { problem } from "../../shared/errors";
import { readJson } from "../http/body";
import { invalidateTenantConfig } from "../tenant/config-cache";
import { type CurrentUserAccess, requireScope } from "../middleware/management-auth";
import { operatorAuthority } from "./operator-authority";

type Method = "get" | "post" | "patch" | "put" | "delete";

/** The `{name}` parameters of an OpenAPI-style path, typed: `/clients/{id}` gives `{ id: string }`. */
export type PathParams<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? { [K in N]: string } & PathParams<Rest>
  : Record<never, string>;

/** Query parameters as the handler sees them. */
export type QueryValues = Record<string, string | undefined>;

/**
 * One management route: its method and path, the scope it requires, and the schemas that both validate the
 * request and generate the OpenAPI document (GET /api/v2/spec). A route cannot be registered without a
 * scope, so the scope table denies by construction anything not in it.
 */
export interface ManagementRoute<B = unknown, P extends string = string, Q = QueryValues> {
  method: Method;
  /** OpenAPI-style path relative to /api/v2, e.g. `/tenants/{id}`; its parameters reach the handler typed. */
  path: P;
  scope: string;
  /** Also reachable with a user's token holding this current-user scope, on the user's own id. */
  currentUser?: CurrentUserAccess;
  /**
   * Narrower scopes that also admit a client's token (the reference platform's `update:users_app_metadata`
   * on PATCH /users/{id}); the handler then limits what such a caller may change.
   */
  alsoScopes?: readonly string[];
  summary: string;
  body?: z.ZodType<B>;
  /**
   * Query parameters: validated before the handler (a failure is `invalid_query_string`) and documented
   * from each field's `.describe()`. Loose objects: unknown parameters are ignored, as before.
   */
  query?: z.ZodType<Q>;
  /** The success body, for the OpenAPI document only (responses are built by the handler). */
  response?: z.ZodType;
  status: number;
  /**
   * The route writes tenant configuration: after it succeeds this isolate's snapshot is dropped at once (the
   * next /oauth/token sees the change); other isolates revalidate by the version the object bumped.
   */
  invalidatesConfig?: boolean;
  handler: (c: AppContext, input: { body: B; params: PathParams<P>; query: Q }) => Promise<Response> | Response;
}

/** Typed identity helper so that `path`, `body`, `query` and `handler` agree. */
export const defineRoute = <B, P extends string, Q = QueryValues>(
  route: ManagementRoute<B, P, Q>,
): ManagementRoute => route as unknown as ManagementRoute;

/** Validates the query against the route's schema. */
function readQuery(c: AppContext, route: ManagementRoute): QueryValues {
  const raw = c.req.query();
  if (!route.query) return raw;
  const result = route.query.safeParse(raw);
  if (!result.success) throw problem("invalid_query_string", { detail: result.error.issues[0]?.message ?? "Invalid query" });
  return result.data as QueryValues;
}

/** The documented fields of a route's query schema (a zod object's shape). */
const queryShape = (route: ManagementRoute): Record<string, z.ZodType> =>
  (route.query as { shape?: Record<string, z.ZodType> } | undefined)?.shape ?? {};

const toHonoPath = (path: string) => path.replace(/\{([A-Za-z_]+)\}/g, ":$1");

/** Registers routes on a router, each behind its scope check, the operator rule and body validation. */
export function mountRoutes(router: Hono<AppEnv>, routes: readonly ManagementRoute[]): void {
  for (const route of routes) {
    router.on(route.method.toUpperCase(), toHonoPath(route.path), requireScope(route.scope, route.currentUser, route.alsoScopes), operatorAuthority, async (c) => {
      const query = readQuery(c, route);
      const body = route.body ? await readJson(c, route.body) : undefined;
      if (body !== undefined) c.set("requestBody", body);
      const response = await route.handler(c, { body, params: c.req.param() as PathParams<string>, query });
      if (route.invalidatesConfig) invalidateTenantConfig(c.var.tenant.id);
      return response;
    });
  }
}

/** The OpenAPI 3.1 document for a set of routes, stating the exact scope of each. */
export function openApiDocument(title: string, serverPath: string, routes: readonly ManagementRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters = [
      ...[...route.path.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } })),
      ...Object.entries(queryShape(route)).map(([name, field]) => ({
        name,
        in: "query",
        description: field.description,
        schema: { type: "string" },
      })),
    ];
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method] = {
      summary: route.summary,
      security: [
        { bearerAuth: [route.scope] },
        ...(route.alsoScopes ?? []).map((scope) => ({ bearerAuth: [scope] })),
        ...(route.currentUser ? [{ bearerAuth: [route.currentUser.scope] }] : []),
      ],
      "x-scope": route.scope,
      ...(route.alsoScopes?.length ? { "x-also-scopes": route.alsoScopes } : {}),
      ...(route.currentUser ? { "x-current-user-scope": route.currentUser.scope } : {}),
      parameters,
      ...(route.body
        ? { requestBody: { required: true, content: { "application/json": { schema: z.toJSONSchema(route.body, { io: "input" }) } } } }
        : {}),
      responses: {
        [String(route.status)]: {
          description: "Success",
          ...(route.response ? { content: { "application/json": { schema: z.toJSONSchema(route.response, { io: "output" }) } } } : {}),
        }, "400": { description: "Bad request" }, "401": { description: "Missing or malformed bearer token" }, "403": { description: "Forbidden" } },
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
