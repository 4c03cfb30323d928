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
  | "server_error";

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
}

function defaultOAuthStatus(code: OAuthErrorCode): number {
  switch (code) {
    case "invalid_client":
    case "invalid_token":
      return 401;
    case "access_denied":
    case "invalid_grant":
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
    readonly errorCode: string = defaultErrorCode(status),
  ) {
    super(message);
    this.name = "ManagementError";
  }
}

function defaultErrorCode(status: number): string {
  switch (status) {
    case 400:
      return "invalid_body";
    case 401:
      return "invalid_token";
    case 403:
      return "insufficient_scope";
    case 404:
      return "inexistent_resource";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    case 501:
      return "not_implemented";
    default:
      return "server_error";
  }
}

/** A domain error as it crosses Durable Object RPC: a plain value, never a thrown class instance. */
export interface DomainError {
  status: number;
  message: string;
  errorCode?: string;
}

/** The result shape every object method with a domain failure mode returns. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: DomainError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (status: number, message: string, errorCode?: string): Result<never> => ({
  ok: false,
  error: errorCode === undefined ? { status, message } : { status, message, errorCode },
});

/** Unwraps an object result in the worker, throwing its domain error as a management error. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new ManagementError(result.error.status, result.error.message, result.error.errorCode);
}

/** Common management errors, so that messages stay identical wherever they are raised. */
export const errors = {
  badRequest: (message: string) => new ManagementError(400, message, "invalid_body"),
  invalidQuery: (message: string) => new ManagementError(400, message, "invalid_query_string"),
  notFound: (message: string) => new ManagementError(404, message, "inexistent_resource"),
  conflict: (message: string) => new ManagementError(409, message, "conflict"),
  missingToken: () => new ManagementError(401, "Missing authentication", "missing_token"),
  malformedAuthorization: () =>
    new ManagementError(401, "Bad HTTP authentication header format", "invalid_authorization_header"),
  invalidToken: (message = "Invalid token") => new ManagementError(403, message, "invalid_token"),
  insufficientScope: (scope: string) =>
    new ManagementError(403, `Insufficient scope, expected any of: ${scope}`, "insufficient_scope"),
  crossTenant: () =>
    new ManagementError(403, "Cross-tenant management requires a control-plane token", "cross_tenant_forbidden"),
  tenantNotFound: () => new ManagementError(404, "Tenant not found", "tenant_not_found"),
  notImplemented: (message: string) => new ManagementError(501, message, "not_implemented"),
};
