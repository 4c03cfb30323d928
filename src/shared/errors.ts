/**
 * The one error catalogue (ARCHITECTURE.md §7, SPEC §7).
 *
 * Routes throw these; `app.onError` (src/worker/middleware/errors.ts) is the only place that turns an
 * error into a response body. Two wire shapes exist:
 * - OAuth endpoints: `{ error, error_description }` (RFC 6749 §5.2).
 * - Management API: `{ statusCode, error, error_description, message, errorCode }`, which satisfies both
 *   the spec's shape and the reference platform's SDK error parsing (it reads `message` / `errorCode`).
 */

/** OAuth 2.0 error codes used by the Auth API (SPEC §7). */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "unsupported_response_mode"
  | "access_denied"
  | "login_required"
  | "consent_required"
  | "invalid_token"
  | "unsupported_token_type"
  | "too_many_requests"
  | "temporarily_unavailable"
  | "server_error"
  // The reference platform's MFA API (/oauth/token, /mfa/challenge).
  | "mfa_required"
  | "mfa_registration_required"
  | "unsupported_challenge_type"
  // RFC 8628 §3.5 (device authorization grant) and RFC 9101 §6.2 (request_uri of a pushed request).
  | "authorization_pending"
  | "slow_down"
  | "expired_token"
  | "invalid_request_uri";

/** Base class: anything that knows its HTTP status and how it is described to a caller. */
export abstract class HttpError extends Error {
  abstract readonly status: number;
  /** Extra response headers (WWW-Authenticate, Allow ...). */
  headers: Record<string, string> = {};
  withHeader(name: string, value: string): this {
    this.headers[name] = value;
    return this;
  }
}

/** An OAuth-style error: `{ error, error_description }`. */
export class OAuthError extends HttpError {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = defaultOAuthStatus(code),
  ) {
    super(description);
    this.name = "OAuthError";
  }

  /** Extra members of the error body (the `mfa_token` of `mfa_required`). */
  fields: Record<string, string> = {};
  withFields(fields: Record<string, string>): this {
    this.fields = { ...this.fields, ...fields };
    return this;
  }
}

function defaultOAuthStatus(code: OAuthErrorCode): number {
  switch (code) {
    case "invalid_client":
    case "invalid_token":
      return 401;
    case "access_denied":
    case "invalid_grant":
    case "mfa_required":
    case "mfa_registration_required":
      return 403;
    case "server_error":
      return 500;
    default:
      return 400;
  }
}

const REASON: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
};

/** Standard reason phrase for a status code. */
export function reasonPhrase(status: number): string {
  return REASON[status] ?? "Error";
}

/**
 * An error of the reference platform's database-connection endpoints (`/dbconnections/*`), whose SDKs read
 * `{ name, code, description, statusCode }` rather than the OAuth pair.
 */
export class DbConnectionError extends HttpError {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
    this.name = "DbConnectionError";
  }
}

/** A management-API error: `{ statusCode, error, error_description, message, errorCode }`. */
export class ManagementError extends HttpError {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode: string,
  ) {
    super(message);
    this.name = "ManagementError";
  }
}

/** One entry of the catalogue: HTTP status, message (with `{param}` placeholders) and the wire `errorCode`. */
export interface ErrorEntry {
  status: number;
  message: string;
  errorCode: string;
}

/**
 * The one catalogue of domain and management failures (issue 7; better-auth's error-code catalogue). Keys
 * are stable codes that objects return (`fail("inexistent_client")`) and routes throw (`problem(...)`);
 * each has exactly one status, one message and the reference platform's `errorCode`, so the same failure
 * reads the same on every route. Add a code here, never a status or message at a call site.
 */
export const ERRORS = {
  // Generic request problems; `{detail}` is the validator's own message.
  invalid_body: { status: 400, message: "{detail}", errorCode: "invalid_body" },
  invalid_query_string: { status: 400, message: "{detail}", errorCode: "invalid_query_string" },
  invalid_cursor: { status: 400, message: "Invalid checkpoint cursor (from)", errorCode: "invalid_query_string" },
  cursor_sort_mismatch: {
    status: 400,
    message: 'The checkpoint cursor was issued for sort "{issued}" and cannot be used with sort "{sort}"',
    errorCode: "invalid_query_string",
  },
  unsupported_sort: { status: 400, message: 'Unsupported sort "{sort}"; supported: {supported}', errorCode: "invalid_query_string" },
  body_required: { status: 400, message: "Request body is required", errorCode: "invalid_body" },
  body_not_utf8: { status: 400, message: "Request body is not valid UTF-8", errorCode: "invalid_body" },
  body_too_deep: { status: 400, message: "Invalid JSON body: nested deeper than {depth} levels", errorCode: "invalid_body" },
  body_not_json: { status: 400, message: "Invalid JSON body: {detail}", errorCode: "invalid_body" },
  payload_too_large: { status: 413, message: "Request body exceeds {bytes} bytes", errorCode: "payload_too_large" },
  unsupported_media_type: { status: 415, message: "Content-Type must be application/json", errorCode: "unsupported_media_type" },
  not_implemented: { status: 501, message: "{detail}", errorCode: "not_implemented" },
  // Management authentication and authorization.
  missing_token: { status: 401, message: "Missing authentication", errorCode: "missing_token" },
  invalid_authorization_header: {
    status: 401,
    message: "Bad HTTP authentication header format",
    errorCode: "invalid_authorization_header",
  },
  invalid_token: { status: 403, message: "Invalid token", errorCode: "invalid_token" },
  revoked_token: { status: 403, message: "The access token has been revoked", errorCode: "invalid_token" },
  // Issue 25 finding 5: a user's management token stops working once its user is blocked or deleted.
  token_user_unavailable: { status: 403, message: "The token's user is blocked or no longer exists", errorCode: "invalid_token" },
  insufficient_scope: { status: 403, message: "Insufficient scope, expected any of: {scope}", errorCode: "insufficient_scope" },
  cross_tenant_forbidden: {
    status: 403,
    message: "Cross-tenant management requires a control-plane token",
    errorCode: "cross_tenant_forbidden",
  },
  control_plane_only: { status: 403, message: "Only a control-plane token may create tenants", errorCode: "cross_tenant_forbidden" },
  // Issue 15 point 3: a control-plane user's organization-bound token reaches only its organization's tenant.
  tenant_organization_mismatch: {
    status: 403,
    message: 'Access denied to tenant "{tenant_id}": it is not the tenant of the token\'s organization',
    errorCode: "cross_tenant_forbidden",
  },
  tenant_field_forbidden: {
    status: 403,
    message: "An organization member may change only name, friendly_name, sender_name and sender_email (not: {fields})",
    errorCode: "insufficient_scope",
  },
  // SPEC §4.2: the multi-tenancy management app takes only main-tenant tokens without org_id.
  organization_token_forbidden: {
    status: 403,
    message: "The tenants management app requires a control-plane token without org_id (main tenant only)",
    errorCode: "cross_tenant_forbidden",
  },
  // Tenants and domains (registry).
  tenant_not_found: { status: 404, message: "Tenant not found", errorCode: "tenant_not_found" },
  tenant_exists: { status: 409, message: 'A tenant with id "{id}" already exists', errorCode: "tenant_exists" },
  tenant_id_reserved: {
    status: 400,
    message: "Payload validation error: 'id is reserved (confusable with the control plane)' on property id",
    errorCode: "invalid_body",
  },
  tenant_id_reserved_subdomain: {
    status: 400,
    message: "Payload validation error: 'id is a reserved subdomain' on property id",
    errorCode: "invalid_body",
  },
  tenant_hook_refused: { status: 400, message: "The tenant change was refused: {detail}", errorCode: "invalid_body" },
  inherited_read_only: {
    status: 403,
    message: "This item is inherited from the control plane and is read-only here",
    errorCode: "operation_not_supported",
  },
  control_plane_undeletable: { status: 400, message: "The control-plane tenant cannot be deleted", errorCode: "invalid_body" },
  // Per-tenant deployments (issue 16): operations journal, releases, proxy routes.
  inexistent_operation: { status: 404, message: "The tenant operation does not exist", errorCode: "inexistent_operation" },
  operation_in_progress: {
    status: 409,
    message: 'Tenant "{tenant_id}" already has an operation in progress ({operation_id})',
    errorCode: "operation_in_progress",
  },
  release_not_found: { status: 400, message: 'Release "{release}" is not in the release store', errorCode: "release_not_found" },
  tenant_not_wfp: {
    status: 400,
    message: 'Tenant "{tenant_id}" is a shared tenant: {detail}',
    errorCode: "invalid_body",
  },
  copy_not_ready: {
    status: 409,
    message: 'Tenant "{tenant_id}" has no ready copy (provisioning_state is {state})',
    errorCode: "copy_not_ready",
  },
  copy_credentials_unavailable: {
    status: 409,
    message: 'The control plane does not hold the credentials of tenant "{tenant_id}"\'s copy: it was provisioned before they were kept',
    errorCode: "copy_credentials_unavailable",
  },
  copy_unreachable: { status: 502, message: 'The copy of tenant "{tenant_id}" refused the token request ({detail})', errorCode: "copy_unreachable" },
  inexistent_proxy_route: { status: 404, message: "The proxy route does not exist", errorCode: "inexistent_proxy_route" },
  invalid_proxy_handler: { status: 400, message: "Payload validation error: {detail}", errorCode: "invalid_body" },
  domain_conflict: { status: 409, message: 'The domain "{domain}" is already claimed', errorCode: "domain_conflict" },
  inexistent_custom_domain: { status: 404, message: "The custom domain does not exist", errorCode: "inexistent_custom_domain" },
  custom_domain_not_verified: {
    status: 400,
    message: 'The custom domain "{domain}" is not verified: only a verified custom domain or the canonical domain can be the default',
    errorCode: "invalid_body",
  },
  invalid_domain: { status: 400, message: "Payload validation error: '{detail}' on property domain", errorCode: "invalid_body" },
  custom_domain_writes_unavailable: {
    status: 501,
    message: "Custom domains are managed by the control plane: this deployment has no CONTROL_PLANE_URL",
    errorCode: "not_implemented",
  },
  certificate_provider_failed: { status: 502, message: "The certificate provider refused the request: {detail}", errorCode: "certificate_provider_error" },
  control_plane_unreachable: { status: 502, message: "The control plane did not answer: {detail}", errorCode: "control_plane_error" },
  // Clients.
  inexistent_client: { status: 404, message: "The client does not exist", errorCode: "inexistent_client" },
  client_exists: { status: 409, message: "A client with this client_id already exists", errorCode: "client_exists" },
  invalid_client_settings: { status: 400, message: "{detail}", errorCode: "invalid_body" },
  system_client_settings: {
    status: 400,
    message: "These settings of a system client are managed by the deployment: {fields}",
    errorCode: "operation_not_supported",
  },
  system_client_undeletable: { status: 400, message: "You cannot delete a system client", errorCode: "operation_not_supported" },
  system_client_secret: {
    status: 400,
    message: "The secret of a system client is managed by the deployment's configuration",
    errorCode: "operation_not_supported",
  },
  // Resource servers (APIs) and client grants.
  inexistent_resource_server: { status: 404, message: "The resource server does not exist", errorCode: "inexistent_resource_server" },
  inexistent_audience: {
    status: 404,
    message: 'No resource server found for audience "{audience}"',
    errorCode: "inexistent_resource_server",
  },
  resource_server_conflict: {
    status: 409,
    message: 'A resource server with identifier "{identifier}" already exists',
    errorCode: "resource_server_conflict",
  },
  system_api_immutable: { status: 400, message: "You cannot modify a system API", errorCode: "operation_not_supported" },
  system_api_undeletable: { status: 400, message: "You cannot delete a system API", errorCode: "operation_not_supported" },
  method_not_allowed: { status: 405, message: "Method {method} is not allowed on this path; allowed: {allowed}", errorCode: "method_not_allowed" },
  inexistent_client_grant: { status: 404, message: "The client grant does not exist", errorCode: "inexistent_client_grant" },
  undefined_scopes: {
    status: 400,
    message: 'Scopes not defined on the resource server "{audience}": {scopes}',
    errorCode: "invalid_scope",
  },
  client_grant_conflict: {
    status: 409,
    message: "A client grant for this client and audience already exists",
    errorCode: "client_grant_conflict",
  },
  system_grant_immutable: { status: 400, message: "You cannot modify the grant of a system client", errorCode: "operation_not_supported" },
  system_grant_undeletable: { status: 400, message: "You cannot delete the grant of a system client", errorCode: "operation_not_supported" },
  // Roles and permissions (SPEC §4.2 "Clients, connections, roles, resource servers").
  inexistent_role: { status: 404, message: "The role does not exist", errorCode: "inexistent_role" },
  role_conflict: { status: 409, message: 'A role named "{name}" already exists', errorCode: "role_conflict" },
  inexistent_permission_api: {
    status: 404,
    message: 'Resource server "{identifier}" does not exist',
    errorCode: "inexistent_resource_server",
  },
  undefined_permissions: {
    status: 400,
    message: 'Permissions not defined on the resource server "{identifier}": {permissions}',
    errorCode: "invalid_body",
  },
  checkpoint_sort: {
    status: 400,
    message: "sort cannot be combined with checkpoint pagination (from, take)",
    errorCode: "invalid_query_string",
  },
  // Routes of the reference platform that this service does not offer (deploy tools skip a 403).
  feature_not_enabled: {
    status: 403,
    message: 'The feature "{feature}" is not enabled on this tenant',
    errorCode: "feature_not_enabled",
  },
  // Connections and users.
  inexistent_connection: { status: 404, message: "The connection does not exist", errorCode: "inexistent_connection" },
  connection_conflict: { status: 409, message: 'A connection with name "{name}" already exists', errorCode: "connection_conflict" },
  connection_has_users: {
    status: 409,
    message: 'The connection "{name}" still has {users} user(s); delete them first',
    errorCode: "connection_has_users",
  },
  inexistent_user: { status: 404, message: "The user does not exist.", errorCode: "inexistent_user" },
  user_exists: { status: 409, message: "The user already exists.", errorCode: "user_exists" },
  username_exists: { status: 409, message: "The username provided is in use already.", errorCode: "username_exists" },
  // Users (issue 9): creation, PATCH, linking.
  user_connection_not_found: { status: 400, message: "The connection does not exist.", errorCode: "inexistent_connection" },
  user_connection_unsupported: {
    status: 400,
    message: "Connection does not support user creation through the API. It must either be a database or passwordless connection.",
    errorCode: "operation_not_supported",
  },
  user_field_required: { status: 400, message: "Payload validation error: 'Missing required property: {field}'", errorCode: "invalid_body" },
  user_field_not_allowed: { status: 400, message: "{detail}", errorCode: "invalid_body" },
  password_too_weak: { status: 400, message: "PasswordStrengthError: {detail}", errorCode: "password_strength_error" },
  metadata_too_large: { status: 400, message: "Payload validation error: '{field} must not exceed {bytes} bytes'", errorCode: "invalid_body" },
  inexistent_identity_connection: {
    status: 404,
    message: 'The user has no identity in the connection "{connection}"',
    errorCode: "inexistent_identity",
  },
  inexistent_identity: { status: 404, message: "The identity does not exist.", errorCode: "inexistent_identity" },
  link_self: { status: 400, message: "Main identity and the new one are the same.", errorCode: "invalid_body" },
  link_inexistent_identity: { status: 400, message: "Linking an inexistent identity is not allowed.", errorCode: "invalid_body" },
  identity_already_linked: { status: 400, message: "The identity is already linked to a user.", errorCode: "invalid_body" },
  unlink_main_identity: { status: 400, message: "Main identity cannot be removed.", errorCode: "invalid_body" },
  invalid_link_token: { status: 400, message: "link_with is not a valid ID token of this tenant for the caller's application", errorCode: "invalid_body" },
  hook_denied: { status: 400, message: "{reason}", errorCode: "hook_denied" },
  inexistent_session: { status: 404, message: "The session does not exist.", errorCode: "inexistent_session" },
  session_metadata_unavailable: {
    status: 409,
    message: "Session metadata needs this tenant's schema upgrade (tenant migration 0017_session_metadata)",
    errorCode: "operation_not_supported",
  },
  // Signing keys (SPEC §4.2 "Signing keys").
  inexistent_signing_key: { status: 404, message: "The signing key does not exist", errorCode: "inexistent_signing_key" },
  inherited_signing_key: { status: 403, message: "Inherited signing keys are read-only", errorCode: "inherited_signing_key" },
  signing_key_revoked: { status: 400, message: "The signing key is revoked", errorCode: "signing_key_revoked" },
  signing_key_conflict: { status: 409, message: "The signing key changed role; retry the request", errorCode: "signing_key_conflict" },
  renew_validity_only: { status: 400, message: "renew accepts validity_days only", errorCode: "invalid_body" },
  // Refresh tokens.
  inexistent_hook: { status: 404, message: "The hook does not exist", errorCode: "inexistent_hook" },
  invalid_trigger: { status: 400, message: 'Trigger "{trigger}" cannot be dispatched', errorCode: "invalid_trigger" },
  hook_conflict: { status: 409, message: 'A hook named "{name}" already exists', errorCode: "hook_conflict" },
  inexistent_log: { status: 404, message: "The log event does not exist", errorCode: "inexistent_log" },
  inexistent_failed_event: { status: 404, message: "The failed event does not exist", errorCode: "inexistent_failed_event" },
  checkpoint_unsupported: { status: 400, message: "Checkpoint paging is not supported here", errorCode: "invalid_query_string" },
  inexistent_refresh_token: { status: 404, message: "The refresh token does not exist.", errorCode: "inexistent_refresh_token" },
  // Organizations (SPEC §2.6, §2.7, §4.2 "Organizations").
  inexistent_organization: { status: 404, message: "No organization found by that id or name", errorCode: "inexistent_organization" },
  organization_conflict: { status: 409, message: 'An organization with name "{name}" already exists', errorCode: "organization_conflict" },
  organization_connection_conflict: {
    status: 409,
    message: "The connection is already enabled for this organization",
    errorCode: "organization_connection_conflict",
  },
  inexistent_organization_connection: {
    status: 404,
    message: "The connection is not enabled for this organization",
    errorCode: "inexistent_organization_connection",
  },
  inexistent_organization_member: {
    status: 404,
    message: "The user is not a member of the organization",
    errorCode: "inexistent_organization_member",
  },
  inexistent_invitation: { status: 404, message: "The invitation does not exist", errorCode: "inexistent_invitation" },
  invitation_email_unavailable: {
    status: 400,
    message: "Invitations need an email provider: set EMAIL_PROVIDER, or send_invitation_email false",
    errorCode: "invalid_body",
  },
  // Actions (issue 13).
  inexistent_action: { status: 404, message: "The action does not exist", errorCode: "inexistent_action" },
  inexistent_action_version: { status: 404, message: "The action version does not exist", errorCode: "inexistent_action_version" },
  inexistent_action_execution: { status: 404, message: "The action execution does not exist", errorCode: "inexistent_action_execution" },
  action_conflict: { status: 409, message: 'An action named "{name}" already exists', errorCode: "action_conflict" },
  action_changed: { status: 409, message: "The action changed while it was being deployed; retry the request", errorCode: "action_conflict" },
  action_dependencies_unsupported: {
    status: 400,
    message: "Dependencies are not supported: actions may use only the provided API and built-in modules ({names})",
    errorCode: "invalid_body",
  },
  action_build_failed: { status: 400, message: "The action's code does not build: {detail}", errorCode: "action_build_failed" },
  action_not_deployed: { status: 400, message: 'The action "{name}" must be deployed before it can be bound', errorCode: "action_not_deployed" },
  action_trigger_mismatch: { status: 400, message: 'The action "{name}" does not support the trigger "{trigger}"', errorCode: "invalid_body" },
  action_bound: {
    status: 400,
    message: "The action is bound to {triggers}; unbind it first or delete with force=true",
    errorCode: "action_bound",
  },
  action_secret_value_required: { status: 400, message: 'The new secret "{name}" needs a value', errorCode: "invalid_body" },
  inexistent_binding_ref: { status: 400, message: 'No action matches the binding reference {type} "{value}"', errorCode: "invalid_body" },
  // Log streams.
  inexistent_log_stream: { status: 404, message: "The log stream does not exist", errorCode: "inexistent_log_stream" },
  // Authentication methods and MFA (SPEC §2.4-2.5, §3.4, §4.2 guardian routes).
  inexistent_authentication_method: {
    status: 404,
    message: "The authentication method does not exist.",
    errorCode: "inexistent_authentication_method",
  },
  authentication_method_exists: { status: 409, message: "{detail}", errorCode: "authentication_method_conflict" },
  inexistent_mfa_transaction: { status: 404, message: "The MFA transaction does not exist or has expired.", errorCode: "inexistent_mfa_transaction" },
  mfa_challenge_required: {
    status: 403,
    message: "Verify one of your existing factors before adding another.",
    errorCode: "mfa_challenge_required",
  },
  inexistent_guardian_factor: { status: 404, message: 'Unknown factor "{name}"; factors: {factors}', errorCode: "inexistent_factor" },
  inexistent_sms_provider: { status: 404, message: 'Unknown SMS provider "{name}"; providers: twilio', errorCode: "inexistent_provider" },
  inexistent_enrollment: { status: 404, message: "The enrollment does not exist.", errorCode: "inexistent_enrollment" },
  ticket_factors_disabled: {
    status: 400,
    message: "Enrollment tickets need the otp or sms factor enabled (PUT /api/v2/guardian/factors/otp {\"enabled\": true})",
    errorCode: "mfa_factors_disabled",
  },
  ticket_factor_disabled: { status: 400, message: 'The factor "{factor}" is not enabled for this tenant', errorCode: "mfa_factors_disabled" },
  email_provider_missing: {
    status: 400,
    message: "No email provider is configured: set EMAIL_PROVIDER (or DEV_MESSAGE_SINK=1 for local development)",
    errorCode: "email_provider_missing",
  },
  inexistent_email_provider: { status: 404, message: "Email provider has not been configured", errorCode: "inexistent_email_provider" },
  email_provider_conflict: { status: 409, message: "An email provider is already configured (PATCH changes it)", errorCode: "email_provider_conflict" },
  // User import and export jobs (issue 14 point 5, SPEC §4.2 "Failed events and jobs").
  inexistent_job: { status: 404, message: "The job does not exist.", errorCode: "inexistent_job" },
  import_not_multipart: { status: 415, message: "Content-Type must be multipart/form-data with a users file", errorCode: "unsupported_media_type" },
  import_field_required: { status: 400, message: "Payload validation error: 'Missing required property: {field}'", errorCode: "invalid_body" },
  import_field_invalid: { status: 400, message: "Payload validation error: '{detail}'", errorCode: "invalid_body" },
  import_file_too_large: { status: 413, message: "The users file exceeds {bytes} bytes; split it into several jobs", errorCode: "payload_too_large" },
  import_file_not_json: { status: 400, message: "The users file is not valid JSON: {detail}", errorCode: "invalid_body" },
  import_file_not_array: { status: 400, message: "The users file must be a JSON array of users", errorCode: "invalid_body" },
  import_file_empty: { status: 400, message: "The users file holds no users", errorCode: "invalid_body" },
  import_file_too_many_rows: { status: 400, message: "The users file holds more than {rows} users; split it into several jobs", errorCode: "invalid_body" },
  import_connection_not_found: { status: 400, message: "The connection does not exist.", errorCode: "inexistent_connection" },
  import_connection_not_database: { status: 400, message: "Users can only be imported into a database connection.", errorCode: "operation_not_supported" },
  export_link_invalid: { status: 403, message: "The export link is invalid or has expired.", errorCode: "invalid_signature" },
  // POST /jobs/verification-email.
  ticket_no_database_account: { status: 400, message: "The user has no database connection account whose password can change.", errorCode: "invalid_body" },
  verification_email_no_address: { status: 400, message: "The user does not have an email address to verify.", errorCode: "invalid_body" },
  verification_identity_not_found: { status: 400, message: "The identity is not one of the user's identities.", errorCode: "invalid_body" },
} as const satisfies Record<string, ErrorEntry>;

/** A stable failure code (a key of {@link ERRORS}). */
export type ErrorCode = keyof typeof ERRORS;

/** Values for a message's `{param}` placeholders. */
export type ErrorParams = Record<string, string | number>;

/**
 * A domain failure as it crosses Durable Object RPC: a plain value, never a thrown class instance. The
 * code is what callers branch on; status, message and errorCode are the catalogue's, filled in by `fail`.
 */
export interface DomainError extends ErrorEntry {
  code: ErrorCode;
  params?: ErrorParams;
}

/** The result shape every object method with a domain failure mode returns. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: DomainError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

/** A domain failure by code (objects). */
export const fail = (code: ErrorCode, params?: ErrorParams): Result<never> => ({
  ok: false,
  error: { code, ...(params === undefined ? {} : { params }), ...describeError({ code, params }) },
});

/** Status, message and wire `errorCode` of a failure, from the catalogue. */
export function describeError(error: { code: ErrorCode; params?: ErrorParams }): ErrorEntry {
  const entry: ErrorEntry = ERRORS[error.code];
  const message = entry.message.replace(/\{(\w+)\}/g, (_, key: string) => String(error.params?.[key] ?? ""));
  return { status: entry.status, message, errorCode: entry.errorCode };
}

/** The management error to throw for a catalogue code (routes, middleware). */
export function problem(code: ErrorCode, params?: ErrorParams): ManagementError {
  const { status, message, errorCode } = describeError({ code, params });
  return new ManagementError(status, message, errorCode);
}

/** Unwraps an object result in the worker, throwing its domain error as a management error. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw problem(result.error.code, result.error.params);
}
