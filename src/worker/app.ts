import { enterpriseCallback, enterpriseStart } from "./login/connections/oidc-flow";
import { passwordlessCodeSubmit, passwordlessPage, passwordlessSubmit } from "./login/connections/passwordless-flow";
import { type Context, Hono, type MiddlewareHandler, type Next } from "hono";
import { consoleApp } from "./admin";
import { authRateLimit } from "./middleware/auth-rate-limit";
import { benchRoutes } from "./bench";
import { copyDeployRoutes } from "./deploy/copy-endpoints";
import { mfaBenchRoutes } from "./bench-mfa";
import type { AppEnv } from "./context";
import { coAuthenticateEndpoint } from "./login/cross-origin";
import { dbSignupEndpoint } from "./login/dbconnections";
import { dbChangePasswordEndpoint } from "./login/password-reset";
import { newPasswordPage, newPasswordSubmit, resetRequestPage, resetRequestSubmit } from "./login/reset-flow";
import { infoPage, loggedOutPage } from "./login/info";
import { loginPage, loginSubmit } from "./login/login-flow";
import { invitationLanding, organizationPage, organizationSubmit } from "./login/organization-flow";
import { consentPage, consentSubmit } from "./login/consent-flow";
import { continueEndpoint } from "./oauth/authorize/continue";
import { continueSubmit, factorsPage, mfaEntryPage, recoveryCodePage, recoveryCodeSubmit } from "./login/mfa/mfa-flow";
import { passkeyEnrollmentPage, passkeyEnrollmentSubmit, passkeyLoginSubmit } from "./login/mfa/passkey-flow";
import { phoneChallengePage, phoneChallengeSubmit, phoneEnrollmentPage, phoneEnrollmentSubmit } from "./login/mfa/phone-flow";
import { enrollTicketPage } from "./login/mfa/ticket";
import { totpChallengePage, totpChallengeSubmit, totpEnrollmentPage, totpEnrollmentSubmit } from "./login/mfa/totp-flow";
import { webauthnChallengePage, webauthnChallengeSubmit, webauthnEnrollmentPage, webauthnEnrollmentSubmit } from "./login/mfa/webauthn-flow";
import { webauthnBrowserScript, webauthnCeremonyScript } from "./login/assets";
import { emailVerificationPage } from "./jobs/verification-email";
import { devMessagesEndpoint } from "./messaging/senders";
import { signupPage, signupSubmit } from "./login/signup-flow";
import { managementRouter } from "./management";
import { tenantsApp } from "./management/tenants/tenants-app";
import { samlMetadataEndpoint, samlSsoEndpoint } from "./samlp/sso";
import { browserCors, tokenCors } from "./middleware/cors";
import { type ErrorShape, errorSink, notFound } from "./middleware/errors";
import type { ManagementAuthOptions } from "./middleware/management-auth";
import { noStore } from "./middleware/no-store";
import { requestContext, tenantFromRequest } from "./middleware/request-context";
import { exportDownload } from "./jobs/download";
import { authorizeEndpoint } from "./oauth/authorize/authorize";
import { discoveryEndpoint } from "./oauth/discovery";
import { jwksEndpoint } from "./oauth/jwks";
import { mfaChallengeEndpoint } from "./oauth/mfa-challenge";
import { passwordlessStartEndpoint } from "./oauth/passwordless";
import { legacyLogoutEndpoint, oidcLogoutEndpoint } from "./oauth/logout";
import { authApiSpec } from "./oauth/openapi";
import { revokeEndpoint } from "./oauth/revoke";
import { deviceAuthorizationEndpoint } from "./oauth/device/device-authorization";
import { pushedAuthorizationEndpoint } from "./oauth/par";
import { activateCallback, activateConfirm, activatePage, activateSubmit } from "./login/device-flow";
import { tokenEndpoint } from "./oauth/token";
import { userinfoEndpoint } from "./oauth/userinfo";
import type { RoutingOptions } from "./settings";
import type { TenantLifecycleHooks } from "./tenant/lifecycle";

/** Host options (SPEC §5.3 resolvers and friends); the default export uses none. */
export interface AppOptions extends ManagementAuthOptions, TenantLifecycleHooks {
  /**
   * Lets tenant actions set `azp` (and only `azp`) on tokens (SPEC §6.2). Unsafe: relying parties may trust
   * `azp` as the client the token was issued to. @default false
   */
  unsafeAllowAzpCustomClaim?: boolean;
  /**
   * Account linking by verified email (SPEC §6.2): `builtin` links inline at sign-up and login, `template`
   * only where the `account-linking` hook is bound, `off` never; a client's `user_linking_mode` overrides it.
   * @default "builtin" (or the `USER_LINKING_MODE` variable)
   */
  userLinkingMode?: "builtin" | "template" | "off";
  /**
   * Subdomain routing: `baseDomain`, `useOrganizations` (default true), `reservedSubdomains`, custom
   * `resolveSubdomain` (SPEC "Control-plane inheritance").
   */
  routing?: Omit<RoutingOptions, "controlPlane">;
  /**
   * Control-plane inheritance (SPEC "Control-plane inheritance"): `inherit` turns read-time fallback on (or
   * INHERIT_FROM_CONTROL_PLANE=1); `resolveControlPlane({tenant_id})` names a tenant's parent, undefined
   * opting the tenant out of inheritance reads; `requireOrganizationMatch` (default true) confines a
   * control-plane user's organization-bound token to its organization's tenant; `defaultPermissions` and
   * `defaultRoles` are offered to new tenant organizations.
   */
  controlPlane?: RoutingOptions["controlPlane"];
}

/** What a surface declares once for all its routes. */
interface SurfaceSpec {
  /** How the tenant is resolved: from the request (host, header, query), or not at all. */
  tenant: "request" | "none";
  /** The body shape of errors that carry none of their own. */
  errors: ErrorShape;
  noStore: boolean;
  /** Whether its requests count against the tenant's authentication limit (src/worker/middleware/auth-rate-limit.ts). */
  limited?: boolean;
}

type Handler = (c: Context<AppEnv>, next: Next) => unknown;

/** The error shape of the root application's sink (createApp), which every route's errors reach. */
const ROOT_ERRORS: ErrorShape = "oauth";

/**
 * A surface: a Hono sub-application with its own error sink, whose routes all get the surface's middleware.
 * Per route, not `use("*")`: every surface is mounted at "/", where a `*` middleware would reach the others.
 * A surface whose shape is the root's leaves its errors to the root's sink (the same function): Hono wraps every
 * handler of a sub-application that has its own sink in a second compose (three more async frames per
 * middleware of every request, issue 31), while the root's compose already catches at each layer, so the same
 * error reaches the same sink at the same layer either way.
 */
function surface(spec: SurfaceSpec) {
  const app = new Hono<AppEnv>();
  if (spec.errors !== ROOT_ERRORS) app.onError(errorSink(spec.errors));
  const before: Handler[] = [requestContext];
  if (spec.noStore) before.push(noStore);
  if (spec.tenant === "request") before.push(tenantFromRequest);
  // Issue 31 point 4: the per-tenant overload answer (429 with Retry-After) on the authentication surfaces.
  if (spec.limited) before.push(authRateLimit);
  const on = (methods: string | string[], path: string, ...handlers: Handler[]) => {
    app.on(typeof methods === "string" ? [methods] : methods, [path], ...(before as MiddlewareHandler<AppEnv>[]), ...(handlers as MiddlewareHandler<AppEnv>[]));
  };
  return { app, on };
}

/** The one route table: every endpoint of the service on one screen, by surface. */
export function createApp(options: AppOptions = {}): Hono<AppEnv> {
  // Discovery and JWKS (SPEC §4.1): the tenant's public documents, answered from the isolate's snapshot. They
  // set their own caching (no-store stays on their errors) and never count against the tenant's limit.
  const wellKnown = surface({ tenant: "request", errors: "oauth", noStore: true });
  wellKnown.on("GET", "/.well-known/openid-configuration", discoveryEndpoint);
  wellKnown.on("GET", "/.well-known/jwks.json", jwksEndpoint);

  // Auth API (SPEC §4.1): OAuth error bodies.
  const auth = surface({ tenant: "request", errors: "oauth", noStore: true, limited: true });
  auth.on("GET", "/authorize", authorizeEndpoint);
  auth.on(["POST", "OPTIONS"], "/oauth/token", tokenCors, tokenEndpoint);
  auth.on(["POST", "OPTIONS"], "/oauth/revoke", tokenCors, revokeEndpoint);
  // RFC 8628 (device authorization; /activate below) and RFC 9126 (pushed authorization requests).
  auth.on(["POST", "OPTIONS"], "/oauth/device/code", tokenCors, deviceAuthorizationEndpoint);
  auth.on(["POST", "OPTIONS"], "/oauth/par", tokenCors, pushedAuthorizationEndpoint);
  auth.on(["POST", "OPTIONS"], "/mfa/challenge", tokenCors, mfaChallengeEndpoint);
  auth.on(["GET", "POST"], "/userinfo", userinfoEndpoint);
  auth.on("GET", "/v2/logout", legacyLogoutEndpoint);
  auth.on("GET", "/oidc/logout", oidcLogoutEndpoint);

  // Universal login (SPEC §4.1, §5.11, §7): HTML pages render their own error screens; the two JSON
  // endpoints throw OAuth errors and allow CORS from the applications' web_origins.
  const login = surface({ tenant: "request", errors: "oauth", noStore: true, limited: true });
  login.on("GET", "/u2/login", loginPage);
  login.on("POST", "/u2/login", loginSubmit);
  // The application's passwordless and enterprise connections (issue 29 point 0).
  login.on("GET", "/u2/passwordless", passwordlessPage);
  login.on("POST", "/u2/passwordless", passwordlessSubmit);
  login.on("POST", "/u2/passwordless/code", passwordlessCodeSubmit);
  login.on("GET", "/u2/enterprise", enterpriseStart);
  login.on("GET", "/login/callback", enterpriseCallback);
  login.on("GET", "/u2/signup", signupPage);
  login.on("POST", "/u2/signup", signupSubmit);
  // Password reset (issue 29 point 1): the "Forgot password?" form, then the emailed (or ticket) link's page.
  login.on("GET", "/u2/reset-password", resetRequestPage);
  login.on("POST", "/u2/reset-password", resetRequestSubmit);
  login.on("GET", "/u2/reset-password/change", newPasswordPage);
  login.on("POST", "/u2/reset-password/change", newPasswordSubmit);
  // Consent (issue 29 point 2): third-party applications and prompt=consent, once the user is signed in.
  login.on("GET", "/u2/consent", consentPage);
  login.on("POST", "/u2/consent", consentSubmit);
  login.on("GET", "/u2/organization", organizationPage);
  login.on("POST", "/u2/organization", organizationSubmit);
  login.on("GET", "/u2/invitation", invitationLanding);
  login.on("GET", "/u2/info", infoPage);
  login.on("GET", "/u2/logged-out", loggedOutPage);
  // Back from a post-login action's redirect (issue 32): GET or POST, with the state it was sent with.
  login.on(["GET", "POST"], "/continue", continueEndpoint);
  // The device flow's user-code entry and confirmation (RFC 8628 §3.3), then the normal login.
  login.on("GET", "/activate", activatePage);
  login.on("POST", "/activate", activateSubmit);
  login.on("POST", "/activate/confirm", activateConfirm);
  login.on("GET", "/activate/callback", activateCallback);
  // MFA (SPEC §4.1 MFA screens, §3.4-3.5; issue 12): one transaction per browser, bound by the gh_mfa cookie.
  login.on("GET", "/u2/mfa", mfaEntryPage);
  login.on("GET", "/u2/mfa/factors", factorsPage);
  login.on("POST", "/u2/mfa/continue", continueSubmit);
  login.on("GET", "/u2/mfa/totp-enrollment", totpEnrollmentPage);
  login.on("POST", "/u2/mfa/totp-enrollment", totpEnrollmentSubmit);
  login.on("GET", "/u2/mfa/totp-challenge", totpChallengePage);
  login.on("POST", "/u2/mfa/totp-challenge", totpChallengeSubmit);
  login.on("GET", "/u2/mfa/recovery-code", recoveryCodePage);
  login.on("POST", "/u2/mfa/recovery-code", recoveryCodeSubmit);
  login.on("GET", "/u2/mfa/phone-enrollment", phoneEnrollmentPage);
  login.on("POST", "/u2/mfa/phone-enrollment", phoneEnrollmentSubmit);
  login.on("GET", "/u2/mfa/phone-challenge", phoneChallengePage);
  login.on("POST", "/u2/mfa/phone-challenge", phoneChallengeSubmit);
  login.on("GET", "/u2/mfa/webauthn-enrollment", webauthnEnrollmentPage);
  login.on("POST", "/u2/mfa/webauthn-enrollment", webauthnEnrollmentSubmit);
  login.on("GET", "/u2/mfa/webauthn-challenge", webauthnChallengePage);
  login.on("POST", "/u2/mfa/webauthn-challenge", webauthnChallengeSubmit);
  login.on("GET", "/u2/passkey/enrollment", passkeyEnrollmentPage);
  login.on("POST", "/u2/passkey/enrollment", passkeyEnrollmentSubmit);
  login.on("POST", "/u2/login/passkey", passkeyLoginSubmit);
  login.on("GET", "/u2/guardian/enroll", enrollTicketPage);
  // Verification email links (POST /api/v2/jobs/verification-email): single use, 5 days.
  login.on("GET", "/u2/email-verification", emailVerificationPage);
  // The one development message sink (404 unless it is on, loopback hosts only): what SMS and email would
  // have sent. /__dev/mail is an alias (the organization invitations' former mailbox).
  login.on("GET", "/__dev/messages", devMessagesEndpoint);
  login.on("GET", "/__dev/mail", devMessagesEndpoint);
  login.on(["POST", "OPTIONS"], "/co/authenticate", browserCors({ credentials: true }), coAuthenticateEndpoint);
  login.on(["POST", "OPTIONS"], "/passwordless/start", browserCors({ credentials: false }), passwordlessStartEndpoint);
  login.on(["POST", "OPTIONS"], "/dbconnections/signup", browserCors({ credentials: false }), dbSignupEndpoint);
  login.on(["POST", "OPTIONS"], "/dbconnections/change_password", browserCors({ credentials: false }), dbChangePasswordEndpoint);
  // SAML identity provider (issue 14): public metadata; SP- (or, when enabled, IdP-) initiated login.
  login.on("GET", "/samlp/metadata/:client_id", samlMetadataEndpoint);
  login.on(["GET", "POST"], "/samlp/:client_id", samlSsoEndpoint);

  // Internal and static: no tenant.
  const internal = surface({ tenant: "none", errors: "oauth", noStore: false });
  // Browsers ask every page for it; answer without a 404 in their console.
  internal.on("GET", "/favicon.ico", (c) => c.body(null, 204, { "Cache-Control": "public, max-age=86400" }));
  // The login pages' WebAuthn scripts (no CDN; the pages' CSP admits them by nonce).
  internal.on("GET", "/u2/assets/webauthn-browser.js", webauthnBrowserScript);
  internal.on("GET", "/u2/assets/webauthn-ceremony.js", webauthnCeremonyScript);
  internal.on("GET", "/.well-known/openapi.json", (c) => c.body(authApiSpec(), 200, { "Content-Type": "application/json" }));
  // Users export downloads (issue 14 point 5): the job's signed, expiring `location`, scoped to one tenant.
  internal.on("GET", "/jobs-exports/:tenant/:file", exportDownload);

  // Benchmark routes (`npm run bench`): they exist only when BENCH_ROUTES=1.
  const bench = new Hono<AppEnv>();
  bench.onError(errorSink("oauth"));
  bench.use("*", requestContext, async (c, next) => (c.var.settings.benchRoutes ? next() : notFound(c)));
  bench.route("/", benchRoutes());
  bench.route("/", mfaBenchRoutes());

  const app = new Hono<AppEnv>();
  app.onError(errorSink(ROOT_ERRORS));
  app.notFound(notFound);
  const actionOptions = {
    unsafeAllowAzpCustomClaim: options.unsafeAllowAzpCustomClaim === true,
    ...(options.userLinkingMode ? { userLinkingMode: options.userLinkingMode } : {}),
  };
  // One object per app: the settings it folds in are cached by identity (src/worker/settings.ts withRouting).
  const hostRouting: RoutingOptions | undefined =
    options.routing || options.controlPlane ? { ...options.routing, ...(options.controlPlane ? { controlPlane: options.controlPlane } : {}) } : undefined;
  app.use("*", async (c, next) => {
    c.set("actionOptions", actionOptions);
    if (hostRouting) c.set("routing", hostRouting);
    c.set("tenantHooks", options);
    await next();
  });
  app.route("/", wellKnown.app);
  app.route("/", auth.app);
  app.route("/", login.app);
  app.route("/", internal.app);
  app.route("/__bench", bench);
  // A tenant copy's deployment endpoints (issue 16; 404 unless DEPLOY_TOKEN is set, i.e. in a copy).
  app.route("/__gatehouse/deploy", copyDeployRoutes());
  // Management API (SPEC §4.2, §5): its router declares CORS, authentication (which resolves the target
  // tenant), the management error shape and no-store itself.
  app.route("/api/v2", managementRouter(options));
  // The admin console (issue 30): server-rendered pages on the apex host, each action an in-process
  // /api/v2 request with the operator's own token through this same route table.
  app.route("/admin", consoleApp((request, c) => app.fetch(request, c.env, c.executionCtx)));
  // The multi-tenancy management app (SPEC §4.2 last paragraph): /management/tenants, main-tenant tokens only.
  app.route("/management", tenantsApp(options));
  return app;
}
