import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";

/**
 * `Cache-Control: no-store` on every response of a surface that did not choose its own caching (discovery,
 * JWKS and the favicon do): tokens, codes and personal data must never sit in a shared cache.
 */
export const noStore: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "no-store");
};
