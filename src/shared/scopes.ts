/**
 * Management API scopes (SPEC §5.1), in the reference platform's `verb:resource` style. The management
 * resource server of every tenant offers all of them; the control-plane client is granted all of them.
 */
const RESOURCES = [
  "users",
  "users_app_metadata",
  "clients",
  "client_keys",
  "client_credentials",
  "client_grants",
  "grants",
  "connections",
  "resource_servers",
  "roles",
  "role_members",
  "organizations",
  "organization_members",
  "organization_invitations",
  "organization_connections",
  "organization_client_grants",
  "organization_member_roles",
  "refresh_tokens",
  "sessions",
  "logs",
  "branding",
  "custom_domains",
  "signing_keys",
  "guardian_factors",
  "guardian_enrollments",
  "guardian_enrollment_tickets",
  "mfa_policies",
  "authentication_methods",
  "hooks",
  "actions",
  "log_streams",
  "failed_events",
  "tenants",
  "tenant_settings",
  "tenant_operations",
  "tenant_credentials",
  "proxy_routes",
  "attack_protection",
  "jobs",
  "email_provider",
  "email_templates",
  "user_tickets",
  "prompts",
] as const;

const VERBS = ["read", "create", "update", "delete"] as const;

/** Resources the API only reads (the reference platform offers no other verb on them). */
const READ_ONLY_RESOURCES = ["stats"] as const;

/** Every management scope, sorted. */
export const MANAGEMENT_SCOPES: readonly string[] = Object.freeze(
  [...RESOURCES.flatMap((resource) => VERBS.map((verb) => `${verb}:${resource}`)), ...READ_ONLY_RESOURCES.map((resource) => `read:${resource}`)].sort(),
);

/**
 * The reference platform's current-user scopes: the only management scopes a user-facing grant may put in a
 * token, and they act only on the token's own user (issue 6; the reference platform's "get a management
 * token for the current user"). Every other management scope reaches a token only through a client grant.
 */
export const CURRENT_USER_SCOPES: readonly string[] = Object.freeze([
  "read:current_user",
  "update:current_user_metadata",
  "create:current_user_metadata",
  "delete:current_user_metadata",
  "update:current_user_identities",
  "create:current_user_device_credentials",
  "delete:current_user_device_credentials",
]);

/**
 * The management scopes a control-plane user's token may carry when issued through one of the control
 * plane's tenant organizations, if the user holds them as permissions there (issue 15 point 3): reading and
 * updating the organization's own tenant, nothing else (never create or delete).
 */
export const ORGANIZATION_TENANT_SCOPES: readonly string[] = Object.freeze(["read:tenants", "update:tenants"]);

/** Whether a scope is one of the current-user family. */
export const isCurrentUserScope = (scope: string) => CURRENT_USER_SCOPES.includes(scope);

/** The management API audience (SPEC §5.3). */
export const MANAGEMENT_AUDIENCE = "urn:gatehouse:management";
