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
  | "invalid_request_uri"
  // RFC 9101 §6.3 (request objects) and RFC 9449 §5, §8 (DPoP proofs and server nonces).
  | "invalid_request_object"
  | "invalid_dpop_proof"
  | "use_dpop_nonce"
  // The reference platform's login refusal under breached-password detection's `block` shield.
  | "password_leaked";

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
