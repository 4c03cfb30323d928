import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { DbConnectionError, ManagementError, OAuthError, reasonPhrase } from "../../shared/errors";
import { EncryptionKeyError } from "../../shared/crypto/encryption";
import type { AppContext } from "../context";
import { prefersHtml } from "../http/accept";
import { sendErrorPage } from "../login/render";

/** Management API body: the spec's shape plus the reference platform SDK's fields. */
function managementBody(status: number, message: string, errorCode: string) {
  return { statusCode: status, error: reasonPhrase(status), error_description: message, message, errorCode };
}

const isManagementPath = (path: string) => path.startsWith("/api/v2");

/** The body shape a surface gives to errors that carry none of their own (framework errors, bugs). */
export type ErrorShape = "oauth" | "management";

/**
 * The one error sink (STYLE.md "Errors"), one per surface (src/worker/app.ts). Known errors render in their
 * own shape wherever they are thrown; anything else gets the surface's shape, and anything unexpected becomes
 * a 500 `server_error` without internals in the body, and is logged.
 */
export const errorSink = (shape: ErrorShape) => (thrown: Error, c: Context) => {
  const error = overloadAnswer(thrown, shape);
  return shape === "oauth" && isBrowserNavigation(c) ? renderErrorPage(error, c as AppContext) : renderError(error, c, shape === "management");
};

/** Seconds a client waits before retrying a request its tenant's object refused as overloaded. */
export const OVERLOAD_RETRY_AFTER_S = 1;

/**
 * Issue 31 point 4 (docs/capacity.md): a Durable Object whose input queue is full refuses new calls with an
 * error marked `overloaded`. That is the tenant being past its capacity, not a bug: the answer is 429
 * `too_many_requests` with `Retry-After`, in the surface's shape, instead of a 500 (or a client's timeout).
 */
function overloadAnswer(error: Error, shape: ErrorShape): Error {
  if ((error as { overloaded?: unknown }).overloaded !== true) return error;
  console.warn("tenant object overloaded", error.message);
  const message = "The tenant is receiving more requests than it can serve; retry after the Retry-After delay";
  const answer = shape === "management" ? new ManagementError(429, message, "too_many_requests") : new OAuthError("too_many_requests", message, 429);
  return answer.withHeader("Retry-After", String(OVERLOAD_RETRY_AFTER_S));
}

/**
 * Issue 29 point 6: a browser that navigated here (GET, HTML preferred over JSON by its Accept header) gets
 * the HTML error page; a client that asks for JSON, or names no HTML, keeps the JSON body.
 */
function isBrowserNavigation(c: Context): boolean {
  return (c.req.method === "GET" || c.req.method === "HEAD") && prefersHtml(c.req.header("accept"));
}

function renderErrorPage(error: Error, c: AppContext): Promise<Response> {
  if (error instanceof OAuthError) return sendErrorPage(c, error.status as 400, error.code, error.description);
  if (error instanceof HTTPException) {
    const status = error.status;
    return sendErrorPage(c, status, status >= 500 ? "server_error" : "invalid_request", error.message || reasonPhrase(status));
  }
  console.error("unhandled error", c.req.method, c.req.path, error);
  const description = error instanceof EncryptionKeyError ? error.message : "An unexpected error occurred";
  return sendErrorPage(c, 500, "server_error", description);
}

function renderError(error: Error, c: Context, management: boolean): Response {
  if (error instanceof OAuthError) {
    return c.json({ ...error.fields, error: error.code, error_description: error.description }, error.status as 400, error.headers);
  }
  if (error instanceof ManagementError) {
    return c.json(managementBody(error.status, error.message, error.errorCode), error.status as 400, error.headers);
  }
  if (error instanceof DbConnectionError) {
    const name = `${reasonPhrase(error.status).replace(/\s/g, "")}Error`;
    return c.json({ name, code: error.code, description: error.description, statusCode: error.status }, error.status as 400, error.headers);
  }
  if (error instanceof HTTPException) {
    const status = error.status;
    const message = error.message || reasonPhrase(status);
    return management
      ? c.json(managementBody(status, message, "invalid_request"), status)
      : c.json({ error: status >= 500 ? "server_error" : "invalid_request", error_description: message }, status);
  }
  // A deployment without ENCRYPTION_KEY must fail loudly and clearly, never fall back to plaintext.
  const description = error instanceof EncryptionKeyError ? error.message : "An unexpected error occurred";
  console.error("unhandled error", c.req.method, c.req.path, error);
  return management
    ? c.json(managementBody(500, description, "server_error"), 500)
    : c.json({ error: "server_error", error_description: description }, 500);
}

/**
 * 404 for unknown routes, in the shape of the surface the path belongs to. Hono keeps one not-found
 * handler per application, so this one reads the path: `/api/v2` is the management surface.
 */
export function notFound(c: Context): Response | Promise<Response> {
  if (!isManagementPath(c.req.path) && isBrowserNavigation(c)) return sendErrorPage(c as AppContext, 404, "not_found", `No route for ${c.req.method} ${c.req.path}`);
  return isManagementPath(c.req.path)
    ? c.json(managementBody(404, "Not Found", "not_found"), 404)
    : c.json({ error: "not_found", error_description: `No route for ${c.req.method} ${c.req.path}` }, 404);
}
