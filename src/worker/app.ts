import { Hono } from "hono";
import { benchRoutes } from "./bench";
import type { AppEnv } from "./context";
import { managementRouter } from "./management";
import type { ManagementAuthOptions } from "./middleware/management-auth";
import { notFound, onError } from "./middleware/errors";
import { requestContext, tenantFromRequest } from "./middleware/request-context";
import { browserCors, managementCors, tokenCors } from "./middleware/cors";
import { coAuthenticateEndpoint } from "./login/cross-origin";
import { dbSignupEndpoint } from "./login/dbconnections";
import { infoPage, loggedOutPage } from "./login/info";
import { loginPage, loginSubmit } from "./login/login-flow";
import { signupPage, signupSubmit } from "./login/signup-flow";
import { authorizeEndpoint } from "./oauth/authorize/authorize";
import { discoveryEndpoint } from "./oauth/discovery";
import { jwksEndpoint } from "./oauth/jwks";
import { authApiSpec } from "./oauth/openapi";
import { legacyLogoutEndpoint, oidcLogoutEndpoint } from "./oauth/logout";
import { revokeEndpoint } from "./oauth/revoke";
import { tokenEndpoint } from "./oauth/token";
import { userinfoEndpoint } from "./oauth/userinfo";

/** Host options (SPEC §5.3 resolvers and friends); the default export uses none. */
export type AppOptions = ManagementAuthOptions;

/** The one route table: every endpoint of the service on one screen. */
export function createApp(options: AppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(onError);
  app.notFound(notFound);
  app.use("*", requestContext);

  // Auth API (SPEC §4.1)
  app.get("/.well-known/openid-configuration", tenantFromRequest, discoveryEndpoint);
  app.get("/.well-known/jwks.json", tenantFromRequest, jwksEndpoint);
  // Browsers ask every page for it; answer without a 404 in their console.
  app.get("/favicon.ico", (c) => c.body(null, 204, { "Cache-Control": "public, max-age=86400" }));
  app.get("/.well-known/openapi.json", (c) => c.body(authApiSpec(), 200, { "Content-Type": "application/json" }));
  app.get("/authorize", tenantFromRequest, authorizeEndpoint);
  app.on(["POST", "OPTIONS"], "/oauth/token", tokenCors, tenantFromRequest, tokenEndpoint);
  app.on(["POST", "OPTIONS"], "/oauth/revoke", tokenCors, tenantFromRequest, revokeEndpoint);
  app.on(["GET", "POST"], "/userinfo", tenantFromRequest, userinfoEndpoint);
  app.get("/v2/logout", tenantFromRequest, legacyLogoutEndpoint);
  app.get("/oidc/logout", tenantFromRequest, oidcLogoutEndpoint);

  // Universal login (SPEC §4.1, §5.11, §7): HTML pages render their own error screens; the two JSON
  // endpoints throw OAuth errors and allow CORS from the applications' web_origins.
  app.get("/u2/login", tenantFromRequest, loginPage);
  app.post("/u2/login", tenantFromRequest, loginSubmit);
  app.get("/u2/signup", tenantFromRequest, signupPage);
  app.post("/u2/signup", tenantFromRequest, signupSubmit);
  app.get("/u2/info", tenantFromRequest, infoPage);
  app.get("/u2/logged-out", tenantFromRequest, loggedOutPage);
  app.on(["POST", "OPTIONS"], "/co/authenticate", tenantFromRequest, browserCors({ credentials: true }), coAuthenticateEndpoint);
  app.on(["POST", "OPTIONS"], "/dbconnections/signup", tenantFromRequest, browserCors({ credentials: false }), dbSignupEndpoint);

  // Management API (SPEC §4.2, §5)
  app.use("/api/v2/*", managementCors);
  app.route("/api/v2", managementRouter(options));

  app.use("/__bench/*", async (c, next) => (c.var.settings.benchRoutes ? next() : notFound(c)));
  app.route("/__bench", benchRoutes());
  return app;
}
