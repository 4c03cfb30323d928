import type { ErrorEntry } from "../classes";

/** Failures of request (a part of the one catalogue, errors/index.ts). */
export const REQUEST_ERRORS = {
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
  // Issue 28 point 4: the management API's rate limits (src/worker/management/rate-limit.ts); the reference
  // platform's 429 reads "Global limit has been reached" for its tenant-wide limit.
  tenant_rate_limited: { status: 429, message: "Global limit has been reached ({limit} requests per {period} s for this tenant)", errorCode: "too_many_requests" },
  client_rate_limited: { status: 429, message: "Rate limit reached for this client ({limit} requests per {period} s)", errorCode: "too_many_requests" },
  // Management authentication and authorization.
  missing_token: { status: 401, message: "Missing authentication", errorCode: "missing_token" },
  invalid_authorization_header: {
    status: 401,
    message: "Bad HTTP authentication header format",
    errorCode: "invalid_authorization_header",
  },
  invalid_token: { status: 403, message: "Invalid token", errorCode: "invalid_token" },
  revoked_token: { status: 403, message: "The access token has been revoked", errorCode: "invalid_token" },
  // RFC 9449 §7: a DPoP-bound token is used only in the DPoP scheme with a valid proof of its key.
  dpop_bound_token: { status: 401, message: "The access token is DPoP-bound: present it with the DPoP scheme and a proof", errorCode: "invalid_token" },
  invalid_dpop_proof: { status: 401, message: "Invalid DPoP proof: {detail}", errorCode: "invalid_dpop_proof" },
  use_dpop_nonce: { status: 401, message: "{detail}", errorCode: "use_dpop_nonce" },
  // Issue 25 finding 5: a user's management token stops working once its user is blocked or deleted.
  token_user_unavailable: { status: 403, message: "The token's user is blocked or no longer exists", errorCode: "invalid_token" },
  insufficient_scope: { status: 403, message: "Insufficient scope, expected any of: {scope}", errorCode: "insufficient_scope" },
  // Review after issue 30: an operator never gains authority it does not hold (src/worker/management/operator-authority.ts).
  operator_control_plane_admin_only: {
    status: 403,
    message: "The control plane's own users, roles, applications and settings change only by an operator holding every management scope (missing: {scope})",
    errorCode: "insufficient_scope",
  },
  operator_grant_beyond_own: { status: 403, message: "An operator cannot grant management scopes it does not hold: {scope}", errorCode: "insufficient_scope" },
  operator_credentials_of_stronger_client: {
    status: 403,
    message: "An operator cannot change the credentials of an application whose management grant holds scopes it does not: {scope}",
    errorCode: "insufficient_scope",
  },
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
  // Routes of the reference platform that this service does not offer (deploy tools skip a 403).
  // Issue 28 point 2: what the reference platform answers where a tenant has none of a resource Gatehouse
  // does not offer (src/worker/management/unoffered.ts, UNOFFERED_READS).
  inexistent_branding_template: { status: 404, message: "Template does not exist.", errorCode: "inexistent_template" },
  inexistent_default_theme: { status: 404, message: "There is no default theme: no theme has been created", errorCode: "theme_not_found" },
  // Issue 29 point 5: the theme and the universal-login page template (src/worker/management/settings/branding-*.ts).
  inexistent_theme: { status: 404, message: "The theme does not exist", errorCode: "theme_not_found" },
  theme_exists: { status: 409, message: "There is already a theme for this tenant: update or delete it", errorCode: "theme_conflict" },
  login_template_tags: {
    status: 400,
    message: "The template must contain a single auth0:head tag and at least one auth0:widget tag.",
    errorCode: "invalid_body",
  },
  login_template_invalid: { status: 400, message: "Payload validation error: '{detail}' on property template", errorCode: "invalid_body" },
  feature_not_enabled: {
    status: 403,
    message: 'The feature "{feature}" is not enabled on this tenant',
    errorCode: "feature_not_enabled",
  },
} as const satisfies Record<string, ErrorEntry>;
