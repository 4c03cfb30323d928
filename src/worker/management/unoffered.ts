import type { Hono } from "hono";
import { type ErrorCode, problem } from "../../shared/errors";
import type { AppEnv } from "../context";
import type { ManagementRoute } from "./define";

/**
 * Resource types of the reference platform's management API that Gatehouse does not offer (issue 9 point
 * 8). They answer 403 `feature_not_enabled` instead of 404, so tools that walk every resource type (the
 * reference platform's deploy CLI skips a 403) carry on instead of aborting. Paths are OpenAPI-style;
 * `/*` covers everything below. A later issue that implements one removes its row; until then a real
 * route always wins over a row (see `realRouteWins`), and a test checks that no row covers a real route.
 *
 * Not listed on purpose: routes other work in progress serves (actions, log streams, guardian, users and
 * their sub-resources).
 */
export const UNOFFERED_ROUTES: readonly { feature: string; paths: readonly string[] }[] = [
  { feature: "rules", paths: ["/rules", "/rules/*"] },
  { feature: "rules-configs", paths: ["/rules-configs", "/rules-configs/*"] },
  // The hooks family serves webhooks (SPEC §6.1); the legacy hooks' secrets have no counterpart.
  { feature: "hook secrets", paths: ["/hooks/{id}/secrets"] },
  // Issue 29 point 3 serves /prompts, custom text and partials; the ACUL rendering settings stay unoffered.
  { feature: "prompts rendering", paths: ["/prompts/rendering", "/prompts/{prompt}/screen/{screen}/rendering"] },
  { feature: "anomaly", paths: ["/anomaly/blocks/ips/*"] },
  // "settings" is a reserved tenant id, so /tenants/{id} never serves this path.
  // Themes and the universal-login template are served (issue 29 point 5); phone branding is not.
  { feature: "branding phone", paths: ["/branding/phone/*"] },
  { feature: "migrations", paths: ["/migrations"] },
  { feature: "forms", paths: ["/forms", "/forms/*"] },
  { feature: "flows", paths: ["/flows", "/flows/*"] },
  { feature: "self-service-profiles", paths: ["/self-service-profiles", "/self-service-profiles/*"] },
  // networkACLs.ts skips a 403.
  { feature: "network-acls", paths: ["/network-acls", "/network-acls/*", "/keys/network-acls", "/keys/network-acls/*"] },
  { feature: "user-attribute-profiles", paths: ["/user-attribute-profiles", "/user-attribute-profiles/*"] },
  { feature: "connection-profiles", paths: ["/connection-profiles", "/connection-profiles/*"] },
  { feature: "token-exchange-profiles", paths: ["/token-exchange-profiles", "/token-exchange-profiles/*"] },
  { feature: "event-streams", paths: ["/event-streams", "/event-streams/*"] },
  { feature: "device-credentials", paths: ["/device-credentials", "/device-credentials/*"] },
  { feature: "blacklists", paths: ["/blacklists/tokens"] },
  // actionModules.ts and rateLimitPolicies.ts skip a 403 (or 404) and export nothing for the resource.
  { feature: "action modules", paths: ["/actions/modules", "/actions/modules/*"] },
  { feature: "rate-limit-policies", paths: ["/rate-limit-policies", "/rate-limit-policies/*"] },
  { feature: "agents", paths: ["/agents", "/agents/*"] },
  { feature: "client ID metadata documents", paths: ["/clients/cimd/*"] },
  // connections.ts reads the directory-provisioning list and logs any failure as "not configured";
  // scimHandler.ts skips a connection whose SCIM configuration answers 403 or 404.
  {
    feature: "directory provisioning",
    paths: ["/connections-directory-provisionings", "/connections/{id}/directory-provisioning", "/connections/{id}/directory-provisioning/*"],
  },
  { feature: "scim", paths: ["/connections-scim-configurations", "/connections/{id}/scim-configuration", "/connections/{id}/scim-configuration/*"] },
  // Gatehouse's database and social connections hold no signing keys of their own (the tenant's keys sign).
  { feature: "connection keys", paths: ["/connections/{id}/keys", "/connections/{id}/keys/*"] },
  { feature: "events", paths: ["/events"] },
  { feature: "experimentation", paths: ["/experimentation/*"] },
  // Groups: roles are assigned to users directly; the effective-roles routes say `sources: ["direct"]`.
  {
    feature: "groups",
    paths: [
      "/groups",
      "/groups/*",
      "/roles/{id}/groups",
      "/users/{id}/groups",
      "/users/{id}/effective-roles/sources/groups",
      "/organizations/{id}/groups",
      "/organizations/{id}/groups/*",
      "/organizations/{id}/roles/{role_id}/groups",
      "/organizations/{id}/members/{user_id}/effective-roles/sources/groups",
    ],
  },
  // The tenant's signing keys are Gatehouse's own (/keys/signing); no customer-supplied or encryption keys.
  { feature: "custom signing keys", paths: ["/keys/custom-signing"] },
  { feature: "encryption keys", paths: ["/keys/encryption", "/keys/encryption/*"] },
  { feature: "organization clients", paths: ["/organizations/{id}/clients", "/organizations/{id}/clients/*"] },
  { feature: "organization discovery domains", paths: ["/organizations/{id}/discovery-domains", "/organizations/{id}/discovery-domains/*"] },
  { feature: "organization templates", paths: ["/organizations/{id}/organization-templates", "/organizations/{id}/organization-templates/*"] },
  { feature: "connected accounts", paths: ["/users/{id}/connected-accounts"] },
  // Risk assessment settings are stored and shown, but no assessor runs, so no user has assessments to clear.
  { feature: "risk assessment", paths: ["/users/{id}/risk-assessments/*"] },
  { feature: "verifiable-credentials", paths: ["/verifiable-credentials/*"] },
];

/**
 * What a read of an unoffered resource answers when the true answer is "you have none" (issue 28 point 2):
 * the reference platform's answer on a tenant without any, in the shape auth0-deploy-cli's handler for it
 * tolerates, so a default `a0deploy export` skips the resource instead of aborting. A write to the same path
 * still answers 403 `feature_not_enabled` (UNOFFERED_ROUTES), and a real route wins over a read as over a row.
 * Each row names the handler (auth0-deploy-cli `src/tools/auth0/handlers/<name>.ts`) that reads the path.
 * - "empty": 200 with nothing in it: a list, an offset page (`include_totals=true`) or settings that say off.
 * - "absent": 404, where the handler reads "not found" as "none" and would abort on a 403.
 */
type ReadAnswer = { kind: "empty"; body: (query: URLSearchParams) => unknown } | { kind: "absent"; error: ErrorCode };

/** An offset-paginated list with nothing in it: `{start, limit, total, <key>: []}` with totals, else `[]`. */
const emptyPage =
  (key: string) =>
  (query: URLSearchParams): unknown => {
    if (query.get("include_totals") !== "true") return [];
    const perPage = Number(query.get("per_page") ?? "50");
    return { start: 0, limit: Number.isInteger(perPage) && perPage > 0 ? perPage : 50, total: 0, [key]: [] };
  };
const empty = (body: (query: URLSearchParams) => unknown): ReadAnswer => ({ kind: "empty", body });

export const UNOFFERED_READS: readonly { path: string; answer: ReadAnswer }[] = [
  // emailTemplates.ts reads every template in a Promise.all that rethrows anything but a 404: email templates
  // are served now (issue 29 point 4), and a template never created is that 404 (inexistent_email_template).
  // prompts.ts: getSettings() and each custom text are served now (issue 29 point 3): a custom text never set reads {}.
  // attackProtection.ts and riskAssessment.ts: served now as settings documents (settings/documents.ts).
  // themes.ts (getDefault(): 404 is "no theme") and branding.ts (the universal-login template: 404 is "none")
  // are served now (issue 29 point 5, settings/branding-themes.ts) and answer those 404s themselves.
  // phoneProvider.ts and phoneTemplates.ts: both lists are read unguarded (`response.providers ?? []`).
  { path: "/branding/phone/providers", answer: empty(() => ({ providers: [] })) },
  { path: "/branding/phone/templates", answer: empty(() => ({ templates: [] })) },
  // forms.ts (forms and flows), flows.ts and flowVaultConnections.ts (flows and vault connections),
  // selfServiceProfiles.ts, eventStreams.ts: lists read unguarded through the SDK's paginators.
  { path: "/forms", answer: empty(emptyPage("forms")) },
  { path: "/flows", answer: empty(emptyPage("flows")) },
  { path: "/flows/vault/connections", answer: empty(emptyPage("connections")) },
  { path: "/self-service-profiles", answer: empty(emptyPage("self_service_profiles")) },
  // Checkpoint-paginated: no `next`, so the SDK asks for no further page.
  { path: "/event-streams", answer: empty(() => ({ eventStreams: [] })) },
];

const segments = (path: string) => path.split("/").filter(Boolean);
const isParam = (segment: string) => /^\{[A-Za-z_]+\}$/.test(segment);

/**
 * How specifically an OpenAPI-style path (optionally ending in `/*`) matches a request path: the number of
 * literal segments it matched, or -1 when it does not match.
 */
export function matchSpecificity(pattern: string, path: string): number {
  const wanted = segments(pattern);
  const wildcard = wanted[wanted.length - 1] === "*";
  if (wildcard) wanted.pop();
  const actual = segments(path);
  if (wildcard ? actual.length <= wanted.length : actual.length !== wanted.length) return -1;
  let literals = 0;
  for (const [i, segment] of wanted.entries()) {
    if (isParam(segment)) continue;
    if (segment !== actual[i]) return -1;
    literals++;
  }
  return literals;
}

/**
 * Whether a real route serves this request at least as specifically as the unoffered pattern: a real route
 * wins every tie, so implementing a route makes its row inert even before the row is removed.
 */
export function realRouteWins(routes: readonly ManagementRoute[], method: string, path: string, pattern: string): boolean {
  const row = matchSpecificity(pattern, path);
  return routes.some((route) => route.method.toUpperCase() === method.toUpperCase() && matchSpecificity(route.path, path) >= row);
}

const toHonoPath = (path: string) => path.replace(/\{([a-z_]+)\}/g, ":$1");

/**
 * Registers the unoffered rows on the management router, after authentication (no token is still 401)
 * and before the real routes, which they defer to (`realRouteWins`).
 */
export function mountUnoffered(router: Hono<AppEnv>, routes: readonly ManagementRoute[]): void {
  for (const { path: pattern, answer } of UNOFFERED_READS) {
    router.get(toHonoPath(pattern), async (c, next) => {
      const path = c.req.path.replace(/^\/api\/v2/, "");
      if (realRouteWins(routes, "GET", path, pattern)) return next();
      if (answer.kind === "absent") throw problem(answer.error);
      return c.json(answer.body(new URL(c.req.url).searchParams) as object, 200);
    });
  }
  for (const { feature, paths } of UNOFFERED_ROUTES) {
    for (const pattern of paths) {
      router.all(toHonoPath(pattern), async (c, next) => {
        const path = c.req.path.replace(/^\/api\/v2/, "");
        if (realRouteWins(routes, c.req.method, path, pattern)) return next();
        throw problem("feature_not_enabled", { feature });
      });
    }
  }
}

/**
 * A known path asked with a verb it does not serve answers 405 with `Allow` (RFC 9110 §15.5.6) in the
 * management error shape, instead of a 404 that tools read as "the resource is gone" (issue 28 point 3).
 * Mounted after every real route, so it sees only requests no route took.
 */
export function mountMethodNotAllowed(router: Hono<AppEnv>, routes: readonly ManagementRoute[]): void {
  router.all("*", async (c, next) => {
    const path = c.req.path.replace(/^\/api\/v2/, "");
    const methods = new Set(routes.filter((route) => matchSpecificity(route.path, path) >= 0).map((route) => route.method.toUpperCase()));
    if (methods.size === 0 || methods.has(c.req.method)) return next();
    if (methods.has("GET")) methods.add("HEAD");
    const allowed = [...methods].sort().join(", ");
    throw problem("method_not_allowed", { method: c.req.method, allowed }).withHeader("Allow", allowed);
  });
}
