/**
 * The dependency rules CI checks (STYLE.md "Layout"; issue 26 point 5), run by `npm run lint` and by
 * `npm test` (its pretest step): `npm run deps`. A violation fails with the offending import (or cycle) printed.
 */

/**
 * The tenant object's capability folders and the neighbours each may import (besides `core` and
 * src/shared). `core` imports no capability. The root modules (tenant-object.ts, composition.ts, config.ts,
 * extensions.ts, bench.ts) compose the capabilities; no capability imports them.
 */
const TENANT_CAPABILITIES = {
  core: [],
  users: [],
  // An organization names the client grants its members' applications may use (issue 28 point 2).
  organizations: ["oauth"],
  oauth: [],
  outbox: [],
  roles: ["oauth", "organizations", "users"],
  settings: ["oauth"],
  // A login applies its actions' effects; an action's continuation issues the login's authorization code.
  actions: ["login", "users"],
  // A password reset sends its email through the outbox and spends email-verification tickets (jobs).
  login: ["actions", "jobs", "oauth", "outbox", "roles", "users"],
  // The MFA API's one read per step (issue 31) reads the SMS templates document with the token.
  mfa: ["actions", "login", "settings", "users"],
  jobs: ["outbox", "settings", "users"],
};

const TENANT = "^src/objects/tenant/";

const capabilityRules = Object.entries(TENANT_CAPABILITIES).map(([capability, neighbours]) => ({
  name: `tenant-${capability}-neighbours`,
  comment:
    capability === "core"
      ? "src/objects/tenant/core imports no capability folder (only src/shared and src/objects/sql.ts)"
      : `src/objects/tenant/${capability} imports only core, ${neighbours.join(", ") || "no other capability"} and src/shared (declare a new neighbour in .dependency-cruiser.cjs)`,
  severity: "error",
  from: { path: `${TENANT}${capability}/` },
  to: { path: TENANT, pathNot: `${TENANT}(${[capability, "core", ...neighbours].join("|")})/` },
}));

/**
 * The management API's capability folders (src/worker/management/<capability>/) and the neighbours each may
 * import. Every capability may import the management root's plumbing (define.ts, list-response.ts,
 * relation-routes.ts, tenant-scoped.ts ...; never index.ts, which mounts them all), src/shared, and the
 * worker's modules outside src/worker/management; the objects only as types (rule above).
 */
const MANAGEMENT_CAPABILITIES = {
  actions: [],
  jobs: [],
  login: [],
  mfa: [],
  // A resource server's default signing algorithm is a tenant setting; changing that setting ensures the key.
  oauth: ["settings"],
  settings: ["oauth"],
  // An organization names the client grants its members' applications may use (issue 28 point 2).
  organizations: ["oauth"],
  outbox: [],
  roles: [],
  tenants: [],
  users: [],
};

const MANAGEMENT = "^src/worker/management/";

const managementCapabilityRules = Object.entries(MANAGEMENT_CAPABILITIES).map(([capability, neighbours]) => ({
  name: `management-${capability}-neighbours`,
  comment: `src/worker/management/${capability} imports only the management root's plumbing, ${neighbours.join(", ") || "no other capability"}, src/shared and src/worker outside management (declare a new neighbour in .dependency-cruiser.cjs)`,
  severity: "error",
  from: { path: `${MANAGEMENT}${capability}/` },
  to: { path: `${MANAGEMENT}[^/]+/`, pathNot: `${MANAGEMENT}(${[capability, ...neighbours].join("|")})/` },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle anywhere in src/, type-only imports included (issue 26).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "worker-not-objects-at-run-time",
      comment:
        "The worker meets the objects only over RPC (issue 7 point 5): it may import their types; only the entry point re-exports the object classes.",
      severity: "error",
      from: { path: "^src/worker/", pathNot: "^src/worker/index\\.ts$" },
      to: { path: "^src/objects/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "objects-not-worker",
      comment: "The objects never import the worker, not even types.",
      severity: "error",
      from: { path: "^src/objects/" },
      to: { path: "^src/worker/" },
    },
    {
      name: "shared-imports-neither-side",
      comment: "src/shared is imported by the worker and the objects and imports neither.",
      severity: "error",
      from: { path: "^src/shared/" },
      to: { path: "^src/(worker|objects)/" },
    },
    ...capabilityRules,
    {
      name: "management-capability-folders-declared",
      comment: "Every folder under src/worker/management is a capability listed in MANAGEMENT_CAPABILITIES (.dependency-cruiser.cjs), so its rule applies.",
      severity: "error",
      from: { path: MANAGEMENT },
      to: { path: `${MANAGEMENT}[^/]+/`, pathNot: `${MANAGEMENT}(${Object.keys(MANAGEMENT_CAPABILITIES).join("|")})/` },
    },
    {
      name: "management-capabilities-not-root-index",
      comment: "A management capability never imports src/worker/management/index.ts (the root that mounts every capability).",
      severity: "error",
      from: { path: `${MANAGEMENT}[^/]+/` },
      to: { path: `${MANAGEMENT}index\\.ts$` },
    },
    {
      name: "management-plumbing-imports-no-capability",
      comment: "The management root's plumbing (every root module but index.ts) imports no capability folder: capabilities build on it, not it on them.",
      severity: "error",
      from: { path: `${MANAGEMENT}[^/]+\\.ts$`, pathNot: `${MANAGEMENT}index\\.ts$` },
      to: { path: `${MANAGEMENT}[^/]+/` },
    },
    ...managementCapabilityRules,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.sql$" },
    // Type-only imports are dependencies too (a type-only cycle is still a cycle).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
