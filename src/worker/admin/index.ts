import { Hono } from "hono";
import { CONSOLE_PATH } from "../../shared/console";
import { requestContext } from "../middleware/request-context";
import { isApexHost, requestHost } from "../routing/resolve-tenant";
import type { ConsoleEnv, Dispatch } from "./context";
import { checkCsrf } from "./csrf";
import { loggedOut, loginCallback, loginStart, logout } from "./login";
import { sendConsoleError } from "./render";
import { bindingsScreen, changeBindings } from "./screens/action-bindings";
import { actionScreen, actionsScreen, createAction, deployAction, testAction, saveAction } from "./screens/actions";
import { applicationScreen, applicationsScreen, createApplication, deleteApplication, rotateApplicationSecret, updateApplication } from "./screens/applications";
import { addApiScope, apiScreen, changePermissions, roleScreen, updateApi } from "./screens/catalog";
import { connectionScreen, saveCustomDatabase, switchConnectionClient, updateConnection } from "./screens/connection";
import { brandingScreen, saveTemplate, saveTheme } from "./screens/branding";
import { addDomain, deleteDomain, domainScreen, domainsScreen, verifyDomain } from "./screens/domains";
import { homeScreen } from "./screens/home";
import { keysScreen, revokeKey, rotateKeys } from "./screens/keys";
import { listScreens } from "./screens/lists";
import { logScreen, logsScreen } from "./screens/logs";
import { createInvitation, organizationScreen } from "./screens/organizations";
import { protectionScreen, saveBreachedPassword, saveBruteForce, saveSuspiciousIp } from "./screens/protection";
import { saveSettings, settingsScreen } from "./screens/settings";
import { createTenant, goToTenant, saveTenantDetails, tenantDetailsScreen, tenantsScreen } from "./screens/tenants";
import { createTryApplication, startTryLogin, tryLoginCallback, tryLoginScreen } from "./screens/try-login";
import { ACCESS_WRITES } from "./screens/user-access";
import { createWebhook, deleteWebhook, enableWebhook, retryFailedEvent, updateWebhook, webhookScreen, webhooksScreen } from "./screens/webhooks";
import { confirmDeleteLogStream, createLogStream, deleteLogStream, logStreamsScreen } from "./screens/log-streams";
import { changeRoles, createUser, deleteUser, importUsersJob, setBlocked, userAccessWrite, userScreen, usersScreen } from "./screens/users";
import { jobScreen } from "./screens/user-import";
import { rememberTenant, requireOperator } from "./session";

/**
 * The admin console at /admin (issue 30): server-rendered pages, each a client of /api/v2 with the operator's
 * own token (ARCHITECTURE §9). Served on the apex host only; every unsafe request passes the CSRF check.
 * The one route table of the console.
 */
export function consoleApp(dispatch: Dispatch): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.onError((error, c) => {
    console.error("console error", error);
    return sendConsoleError(c, 500, "Something went wrong", "The console could not complete this request.");
  });
  app.use("*", requestContext as never, async (c, next) => {
    if (!isApexHost(requestHost(c.req.raw), c.var.settings)) return c.notFound();
    c.set("dispatch", dispatch);
    c.header("Cache-Control", "no-store");
    await next();
  });
  // The login: no session yet.
  app.get("/login", loginStart);
  app.get("/callback", loginCallback);
  app.get("/logged-out", loggedOut);

  // Everything else needs an operator; every unsafe method a CSRF token.
  const operator = new Hono<ConsoleEnv>();
  operator.use("*", requireOperator, checkCsrf);
  operator.use("/t/:tenant/*", rememberTenant);
  operator.get("/", (c) => c.redirect(`${CONSOLE_PATH}/tenants`, 302));
  operator.post("/logout", logout);
  operator.get("/tenants", (c) => tenantsScreen(c));
  operator.get("/tenants/go", goToTenant);
  operator.post("/tenants", createTenant);
  operator.get("/t/:tenant", (c) => c.redirect(`${CONSOLE_PATH}/t/${encodeURIComponent(c.req.param("tenant"))}/home`, 302));
  operator.get("/t/:tenant/home", (c) => homeScreen(c));
  operator.get("/t/:tenant/details", (c) => tenantDetailsScreen(c));
  operator.post("/t/:tenant/details", saveTenantDetails);
  operator.get("/t/:tenant/applications", (c) => applicationsScreen(c));
  operator.post("/t/:tenant/applications", createApplication);
  operator.get("/t/:tenant/applications/:id", (c) => applicationScreen(c));
  operator.post("/t/:tenant/applications/:id", updateApplication);
  operator.post("/t/:tenant/applications/:id/rotate-secret", rotateApplicationSecret);
  operator.post("/t/:tenant/applications/:id/delete", deleteApplication);
  operator.get("/t/:tenant/users", (c) => usersScreen(c));
  operator.post("/t/:tenant/users", createUser);
  operator.post("/t/:tenant/users/import", importUsersJob);
  operator.get("/t/:tenant/jobs/:id", (c) => jobScreen(c));
  operator.get("/t/:tenant/users/:id", (c) => userScreen(c));
  operator.post("/t/:tenant/users/:id/block", setBlocked(true));
  operator.post("/t/:tenant/users/:id/unblock", setBlocked(false));
  operator.post("/t/:tenant/users/:id/delete", deleteUser);
  operator.post("/t/:tenant/users/:id/roles", changeRoles(true));
  operator.post("/t/:tenant/users/:id/roles/remove", changeRoles(false));
  for (const write of ACCESS_WRITES) operator.post(`/t/:tenant/users/:id/${write}`, userAccessWrite(write));
  operator.get("/t/:tenant/actions", (c) => actionsScreen(c));
  operator.post("/t/:tenant/actions", createAction);
  operator.get("/t/:tenant/actions/:id", (c) => actionScreen(c));
  operator.post("/t/:tenant/actions/:id", saveAction);
  operator.post("/t/:tenant/actions/:id/deploy", deployAction);
  operator.post("/t/:tenant/actions/:id/test", testAction);
  operator.get("/t/:tenant/triggers/:trigger", (c) => bindingsScreen(c));
  operator.post("/t/:tenant/triggers/:trigger", changeBindings);
  operator.get("/t/:tenant/apis/:id", (c) => apiScreen(c));
  operator.post("/t/:tenant/apis/:id", updateApi);
  operator.post("/t/:tenant/apis/:id/scopes", addApiScope);
  operator.get("/t/:tenant/roles/:id", (c) => roleScreen(c));
  operator.post("/t/:tenant/roles/:id/permissions", changePermissions(true));
  operator.post("/t/:tenant/roles/:id/permissions/remove", changePermissions(false));
  operator.get("/t/:tenant/connections/:id", (c) => connectionScreen(c));
  operator.post("/t/:tenant/connections/:id", updateConnection);
  operator.post("/t/:tenant/connections/:id/clients", switchConnectionClient);
  operator.post("/t/:tenant/connections/:id/database", saveCustomDatabase);
  operator.get("/t/:tenant/try-login", (c) => tryLoginScreen(c));
  operator.post("/t/:tenant/try-login", createTryApplication);
  operator.get("/t/:tenant/try-login/start", startTryLogin);
  operator.get("/t/:tenant/try-login/callback", tryLoginCallback);
  operator.get("/t/:tenant/logs", (c) => logsScreen(c));
  operator.get("/t/:tenant/logs/:id", (c) => logScreen(c));
  operator.get("/t/:tenant/organizations/:id", (c) => organizationScreen(c));
  operator.post("/t/:tenant/organizations/:id/invitations", createInvitation);
  // Tenant configuration screens (issue 30): keys, domains, attack protection, settings, webhooks, branding.
  operator.get("/t/:tenant/keys", (c) => keysScreen(c));
  operator.post("/t/:tenant/keys/rotate", rotateKeys);
  operator.post("/t/:tenant/keys/:kid/revoke", revokeKey);
  operator.get("/t/:tenant/domains", (c) => domainsScreen(c));
  operator.post("/t/:tenant/domains", addDomain);
  operator.get("/t/:tenant/domains/:id", (c) => domainScreen(c));
  operator.post("/t/:tenant/domains/:id/verify", verifyDomain);
  operator.post("/t/:tenant/domains/:id/delete", deleteDomain);
  operator.get("/t/:tenant/protection", (c) => protectionScreen(c));
  operator.post("/t/:tenant/protection/brute-force", saveBruteForce);
  operator.post("/t/:tenant/protection/suspicious-ip", saveSuspiciousIp);
  operator.post("/t/:tenant/protection/breached-password", saveBreachedPassword);
  operator.get("/t/:tenant/settings", (c) => settingsScreen(c));
  operator.post("/t/:tenant/settings", saveSettings);
  operator.get("/t/:tenant/webhooks", (c) => webhooksScreen(c));
  operator.post("/t/:tenant/webhooks", createWebhook);
  operator.post("/t/:tenant/webhooks/:id/delete", deleteWebhook);
  operator.post("/t/:tenant/webhooks/:id/enabled", enableWebhook);
  operator.post("/t/:tenant/webhooks/failed/:id/retry", retryFailedEvent);
  operator.get("/t/:tenant/webhooks/:id", (c) => webhookScreen(c));
  operator.post("/t/:tenant/webhooks/:id", updateWebhook);
  operator.get("/t/:tenant/log-streams", (c) => logStreamsScreen(c));
  operator.post("/t/:tenant/log-streams", createLogStream);
  operator.get("/t/:tenant/log-streams/:id/delete", confirmDeleteLogStream);
  operator.post("/t/:tenant/log-streams/:id/delete", deleteLogStream);
  operator.get("/t/:tenant/branding", (c) => brandingScreen(c));
  operator.post("/t/:tenant/branding/theme", saveTheme);
  operator.post("/t/:tenant/branding/template", saveTemplate);
  for (const screen of listScreens) {
    operator.get(`/t/:tenant/${screen.key}`, screen.handler);
    if (screen.create) operator.post(`/t/:tenant/${screen.key}`, screen.create);
  }
  app.route("/", operator);
  app.notFound((c) => sendConsoleError(c, 404, "Not found", "There is no console page here."));
  return app;
}

export { CONSOLE_PATH };
