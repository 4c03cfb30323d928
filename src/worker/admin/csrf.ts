import type { MiddlewareHandler } from "hono";
import { timingSafeEqualText } from "../../shared/crypto/compare";
import { IMPORT_FILE_MAX_BYTES } from "../../shared/schemas/jobs";
import type { ConsoleEnv } from "./context";
import { sendConsoleError } from "./render";

/** The largest console request body: a users file at the API's limit, and 16 KiB for the form's other fields. */
export const CONSOLE_BODY_MAX_BYTES = IMPORT_FILE_MAX_BYTES + 16 * 1024;

/**
 * CSRF protection of every unsafe console request (issue 30): the browser must say it comes from the
 * console's own origin (`Origin`, else `Sec-Fetch-Site`), and the form must carry the session's CSRF
 * token (a synchronizer token kept server-side with the session), compared in constant time. Either
 * failing is 403 and nothing is called.
 */
export const checkCsrf: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
  // The largest form is the users import (the API's file limit and room for its other fields): a larger body
  // is refused before it is read, with what to do about it.
  if (Number(c.req.header("content-length") ?? "0") > CONSOLE_BODY_MAX_BYTES) {
    const back = c.req.path.endsWith("/users/import") ? c.req.path.slice(0, -"/import".length) : undefined;
    return sendConsoleError(c, 413, "File too large", `The console takes a users file of at most ${IMPORT_FILE_MAX_BYTES / 1024} KB (${IMPORT_FILE_MAX_BYTES} bytes), the API's limit. Split the file into several imports.`, back);
  }
  // The console's origin is the issuer's (its login redirects there; its cookies live there).
  const own = new URL(c.var.settings.issuer).origin;
  const origin = c.req.header("origin");
  const site = c.req.header("sec-fetch-site");
  const sameOrigin = origin ? origin === own : site === undefined || site === "same-origin" || site === "none";
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const token = typeof form.csrf === "string" ? form.csrf : "";
  if (!sameOrigin || !token || !(await timingSafeEqualText(token, c.var.operator.csrf))) {
    return sendConsoleError(c, 403, "Request refused", "This form is out of date or came from another site. Reload the page and try again.");
  }
  await next();
};
