import type { MiddlewareHandler } from "hono";
import { timingSafeEqualText } from "../../shared/crypto/compare";
import type { ConsoleEnv } from "./context";
import { sendConsoleError } from "./render";

/**
 * CSRF protection of every unsafe console request (issue 30): the browser must say it comes from the
 * console's own origin (`Origin`, else `Sec-Fetch-Site`), and the form must carry the session's CSRF
 * token (a synchronizer token kept server-side with the session), compared in constant time. Either
 * failing is 403 and nothing is called.
 */
export const checkCsrf: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
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
