/**
 * Management API scopes (SPEC §5.1), in the reference platform's `verb:resource` style. The management
 * resource server of every tenant offers all of them; the control-plane client is granted all of them.
 */
const RESOURCES = [
  "users",
  "users_app_metadata",
  "clients",
  "client_keys",
  "client_grants",
  "connections",
  "resource_servers",
  "roles",
  "role_members",
  "organizations",
  "organization_members",
  "organization_invitations",
  "organization_connections",
  "organization_member_roles",
  "refresh_tokens",
  "sessions",
  "logs",
  "branding",
  "custom_domains",
  "signing_keys",
  "guardian_factors",
  "guardian_enrollments",
  "authentication_methods",
  "hooks",
  "actions",
  "failed_events",
  "tenants",
  "tenant_settings",
  "tenant_operations",
  "jobs",
] as const;

const VERBS = ["read", "create", "update", "delete"] as const;

/** Every management scope, sorted. */
export const MANAGEMENT_SCOPES: readonly string[] = Object.freeze(
  RESOURCES.flatMap((resource) => VERBS.map((verb) => `${verb}:${resource}`)).sort(),
);

/** The management API audience (SPEC §5.3). */
export const MANAGEMENT_AUDIENCE = "urn:gatehouse:management";
