import type { ErrorEntry } from "../classes";

/** Failures of users (a part of the one catalogue, errors/index.ts). */
export const USER_ERRORS = {
  // Connections and users.
  inexistent_connection: { status: 404, message: "The connection does not exist", errorCode: "inexistent_connection" },
  connection_conflict: { status: 409, message: 'A connection with name "{name}" already exists', errorCode: "connection_conflict" },
  connection_has_users: {
    status: 409,
    message: 'The connection "{name}" still has {users} user(s); delete them first',
    errorCode: "connection_has_users",
  },
  inexistent_user: { status: 404, message: "The user does not exist.", errorCode: "inexistent_user" },
  // Issue 32: a custom database's script refused or failed; nothing was written here.
  custom_db_script_failed: { status: 400, message: "The custom database's {script} script failed: {detail}", errorCode: "custom_db_script_error" },
  user_exists: { status: 409, message: "The user already exists.", errorCode: "user_exists" },
  username_exists: { status: 409, message: "The username provided is in use already.", errorCode: "username_exists" },
  // Users (issue 9): creation, PATCH, linking.
  user_connection_not_found: { status: 400, message: "The connection does not exist.", errorCode: "inexistent_connection" },
  user_connection_unsupported: {
    status: 400,
    message: "Connection does not support user creation through the API. It must either be a database or passwordless connection.",
    errorCode: "operation_not_supported",
  },
  // DELETE /connections/{id}/users?email= (issue 28 point 1): database connections only, as the reference platform.
  authentication_method_not_phone: { status: 400, message: "preferred_authentication_method applies only to phone methods", errorCode: "invalid_body" },
  multifactor_provider_unknown: { status: 400, message: "Unknown multifactor provider {provider}: duo or google-authenticator", errorCode: "invalid_uri" },
  connection_users_unsupported: { status: 400, message: "Only database connections support deleting users by email.", errorCode: "operation_not_supported" },
  connection_user_not_found: { status: 404, message: "The connection has no user with this email", errorCode: "inexistent_user" },
  user_field_required: { status: 400, message: "Payload validation error: 'Missing required property: {field}'", errorCode: "invalid_body" },
  user_field_not_allowed: { status: 400, message: "{detail}", errorCode: "invalid_body" },
  password_too_weak: { status: 400, message: "PasswordStrengthError: {detail}", errorCode: "password_strength_error" },
  // Breached-password detection's pre-change-password `block` shield (issue 28): the same check as a reset.
  password_leaked: {
    status: 400,
    message: "PasswordLeakedError: This password has appeared in a data breach on another website and cannot be used here. Choose a different password.",
    errorCode: "password_leaked",
  },
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
  ticket_no_database_account: { status: 400, message: "The user has no database connection account whose password can change.", errorCode: "invalid_body" },
} as const satisfies Record<string, ErrorEntry>;
