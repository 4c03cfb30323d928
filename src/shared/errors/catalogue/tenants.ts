import type { ErrorEntry } from "../classes";

/** Failures of tenants (a part of the one catalogue, errors/index.ts). */
export const TENANT_ERRORS = {
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
  tenant_served_by_copy: {
    status: 400,
    message:
      'Tenant "{tenant_id}" runs in its own deployment at {host}: call that host\'s /api/v2 with a token from POST /api/v2/tenants/{tenant_id}/management-token (this service holds no data of it)',
    errorCode: "tenant_served_elsewhere",
  },
  tenant_pin_by_operation: {
    status: 400,
    message: 'Tenant "{tenant_id}" runs in its own deployment: {fields} change only through POST /api/v2/tenants/{tenant_id}/operations (kind upgrade)',
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
  // Prompts (issue 29 point 3): the reference platform's path and payload validation errors.
  unknown_prompt: { status: 400, message: "Path validation error: 'must be one of the prompt names' on property prompt ({prompt})", errorCode: "invalid_uri" },
  unknown_prompt_language: {
    status: 400,
    message: "Path validation error: 'must be one of the supported languages' on property language ({language})",
    errorCode: "invalid_uri",
  },
  unknown_prompt_screen: { status: 400, message: "Payload validation error: 'Additional properties not allowed: {screen}' on property {prompt}", errorCode: "invalid_body" },
  unknown_prompt_text: { status: 400, message: "Payload validation error: 'Additional properties not allowed: {text}' on property {screen}", errorCode: "invalid_body" },
  invalid_prompt_text: { status: 400, message: "Payload validation error: '{detail}' on property {property}", errorCode: "invalid_body" },
} as const satisfies Record<string, ErrorEntry>;
