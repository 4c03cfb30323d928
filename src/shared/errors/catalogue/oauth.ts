import type { ErrorEntry } from "../classes";

/** Failures of oauth (a part of the one catalogue, errors/index.ts). */
export const OAUTH_ERRORS = {
  // Clients.
  inexistent_client: { status: 404, message: "The client does not exist", errorCode: "inexistent_client" },
  // /clients/{id}/credentials (issue 28 point 2): public keys for private_key_jwt.
  inexistent_client_credential: { status: 404, message: "The credential does not exist", errorCode: "inexistent_client_credential" },
  client_credential_conflict: { status: 409, message: "The client already has a credential with this key", errorCode: "conflict" },
  client_credentials_limit: { status: 400, message: "A client holds at most {max} credentials", errorCode: "invalid_body" },
  client_credential_type_unsupported: {
    status: 400,
    message: "Only public_key credentials (private_key_jwt) are supported; {type} is for mutual TLS, which Gatehouse does not offer",
    errorCode: "invalid_body",
  },
  client_credential_pem_invalid: { status: 400, message: "pem must be a PEM public key (BEGIN PUBLIC KEY) of RSA 2048 bits or more: {detail}", errorCode: "invalid_body" },
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
  inexistent_grant: { status: 404, message: "The grant does not exist", errorCode: "inexistent_grant" },
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
} as const satisfies Record<string, ErrorEntry>;
