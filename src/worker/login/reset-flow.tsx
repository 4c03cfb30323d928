/**
 * The password reset pages (issue 29 point 1): /u2/reset-password asks for the address (from the login
 * page's "Forgot password?" link, in its login transaction), and /u2/reset-password/change, opened from the
 * email or a management ticket, sets the new password under the connection's policy: its strength, not the
 * current password, not one of the last `password_history.size` when the connection keeps a history.
 */
import { BREACHED_PASSWORD_MESSAGE, breachedPasswordVerdict } from "../users/breached-password";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { checkPassword, hashPassword } from "../../shared/crypto/passwords";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { ResetTicketView } from "../../shared/schemas/tickets";
import { normalizeEmail } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { clientIn } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { readLoginSession } from "../tenant/login-state";
import { passwordPolicyHint, passwordProblem } from "../users/password-policy";
import { configOf, isSelfServiceResetDisabled, loginDatabaseConnection } from "./connection";
import { organizationConnection } from "./organization";
import { NewPasswordPage, type NewPasswordPageProps } from "./pages/reset-pages";
import { ResetRequestPage } from "./pages/reset-pages";
import { requestPasswordReset } from "./password-reset";
import { sendMessage, sendPage, shellFor } from "./render";
import { hashSecret } from "./session";
import { isEmailAddress } from "../../shared/email-address";
import { applicationLoginRoute, resultRedirect } from "./ticket-links";
import { type LoginTransaction, loadTransaction, readForm, setCsrfCookie, submittedForm } from "./transaction";
import { changePasswordThroughScript } from "../actions/custom-db";

const RESET_UNAVAILABLE = { code: "RESET_DISABLED", title: "Password reset unavailable", message: "Passwords cannot be reset for this application." } as const;
const INVALID_LINK = {
  code: "INVALID_TICKET",
  text: "reset-link-expired",
  title: "Link expired",
  message: "This password reset link has expired or was already used. Ask for a new one.",
} as const;

/** The most history a connection may keep (the reference platform's `password_history.size` bound). */
const MAX_HISTORY = 24;

/** The database connection of the login transaction, when it offers self-service reset. */
function resetConnection(t: LoginTransaction) {
  const connection = loginDatabaseConnection(t.config, t.client, t.loginSession.request.connection);
  if (!connection || isSelfServiceResetDisabled(connection)) return null;
  return organizationConnection(t.organization, connection.name, t.loginSession.request).enabled ? connection : null;
}

function renderRequest(c: AppContext, t: LoginTransaction, extra: { email?: string; error?: { code: string; message: string } } = {}, status: ContentfulStatusCode = 200) {
  const props = { shell: t.shell, state: t.state, csrf: t.loginSession.csrf_token, clientName: t.client.name, ...extra };
  return sendPage(c, t.shell, <ResetRequestPage {...props} />, status);
}

/** GET /u2/reset-password?state=<login session>: the address form. */
export async function resetRequestPage(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c);
  if (t instanceof Response) return t;
  if (!resetConnection(t)) return sendMessage(c, t.shell, RESET_UNAVAILABLE, 403);
  setCsrfCookie(c, t.loginSession);
  const hint = t.loginSession.request.login_hint;
  return renderRequest(c, t, hint ? { email: normalizeEmail(hint) } : {});
}

/** POST /u2/reset-password?state=<login session>: sends the link (or not) and says the same either way. */
export async function resetRequestSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "reset-password");
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const connection = resetConnection(t);
  if (!connection) return sendMessage(c, t.shell, RESET_UNAVAILABLE, 403);
  const email = normalizeEmail(form.email ?? "");
  if (!isEmailAddress(email)) return renderRequest(c, t, { email, error: { code: "INVALID_EMAIL", message: "Enter a valid email address." } }, 400);
  await requestPasswordReset(c, { config: t.config, client: t.client, connection, email, organizationId: t.organization?.id ?? null, loginState: t.state, language: t.shell.text.lang });
  const sent = (id: "title" | "emailDescription" | "backToLoginLinkText") => t.shell.text.t("reset-password", "reset-password-email", id, { email });
  const retryHref = `/u2/login?state=${encodeURIComponent(t.state)}`;
  return sendMessage(c, t.shell, { title: sent("title"), message: sent("emailDescription"), retryHref, retryLabel: sent("backToLoginLinkText") }, 200);
}

const ticketOf = (value: string | undefined) => (value && /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : null);

/** The live ticket behind a link, with its connection's settings; null for anything unusable. */
async function openTicket(c: AppContext, ticket: string | null) {
  if (!ticket) return null;
  const hash = await hashSecret(ticket);
  const view = await tenantObject(c.env, c.var.tenant.id).userTickets().peekReset(hash, MAX_HISTORY);
  if (!view) return null;
  const config = await configOf(c);
  const connection = config.connections.find((x) => x.name === view.data.connection);
  return { hash, view, config, connection };
}

function renderNewPassword(c: AppContext, opened: NonNullable<Awaited<ReturnType<typeof openTicket>>>, ticket: string, error?: NewPasswordPageProps["error"], status: ContentfulStatusCode = 200) {
  const client = opened.view.data.client_id ? clientIn(opened.config, opened.view.data.client_id) : undefined;
  // Issue 29 point 2: the language the email was written in, else the browser's.
  const shell = shellFor(c, opened.config, client?.name, opened.view.data.language ?? undefined);
  const page = <NewPasswordPage shell={shell} ticket={ticket} email={opened.view.data.email} policy={passwordPolicyHint(opened.connection)} {...(error ? { error } : {})} />;
  return sendPage(c, shell, page, status);
}

/** GET /u2/reset-password/change?ticket=...: the new password form (the ticket is not consumed by looking). */
export async function newPasswordPage(c: AppContext): Promise<Response> {
  const ticket = ticketOf(c.req.query("ticket"));
  const opened = await openTicket(c, ticket);
  if (!opened || !ticket) return sendMessage(c, shellFor(c, await configOf(c)), INVALID_LINK, 400);
  return renderNewPassword(c, opened, ticket);
}

/** The connection's `password_history` option: how many earlier passwords a new one must differ from (0: none). */
function historySize(options: Record<string, unknown> | undefined): number {
  const history = options?.password_history as { enable?: unknown; size?: unknown } | undefined;
  if (history?.enable !== true) return 0;
  return typeof history.size === "number" ? Math.max(1, Math.min(MAX_HISTORY, Math.floor(history.size))) : 5;
}

/** Why a new password is refused, or null: the policy, the current password, the kept history. */
async function refusal(c: AppContext, password: string, view: ResetTicketView, options: Record<string, unknown> | undefined, size: number) {
  const weak = passwordProblem(password, { options: (options ?? {}) as ConnectionRecord["options"] });
  if (weak) return weak;
  const who = { client_id: view.data.client_id, user_id: view.user_id, connection: view.data.connection, email: view.data.email };
  if ((await breachedPasswordVerdict(c, "pre-change-password", password, who)) === "block") return { code: "PASSWORD_BREACHED", message: BREACHED_PASSWORD_MESSAGE };
  // checkPassword never verifies a hash above the cost cap (issue 25 finding 7): such a hash counts as different.
  if ((await checkPassword(password, view.password_hash)) === "match") return { code: "PASSWORD_REUSED", message: "Your new password must be different from your current one." };
  for (const old of view.history.slice(0, size)) {
    if ((await checkPassword(password, old)) === "match") return { code: "PASSWORD_HISTORY_ERROR", message: `Your new password must differ from your last ${size} passwords.`, vars: { count: size } };
  }
  return null;
}

/** POST /u2/reset-password/change: checks the new password, then consumes the ticket and sets it in one commit. */
export async function newPasswordSubmit(c: AppContext): Promise<Response> {
  const form = await readForm(c);
  const ticket = ticketOf(form?.ticket);
  const opened = await openTicket(c, ticket);
  if (!form || !opened || !ticket) return sendMessage(c, shellFor(c, await configOf(c)), INVALID_LINK, 400);
  const { view, connection } = opened;
  const password = form.password ?? "";
  const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: view.data.client_id } });
  if (password !== (form.password_confirm ?? "")) {
    return renderNewPassword(c, opened, ticket, { code: "PASSWORDS_DIFFERENT", message: "The two passwords do not match.", field: "password_confirm" }, 400);
  }
  const size = historySize(connection?.options);
  const refused = await refusal(c, password, view, connection?.options, size);
  if (refused) {
    await tenantObject(c.env, c.var.tenant.id).userTickets(audit).refuseReset(opened.hash, view.user_id, view.data.client_id, refused.message);
    return renderNewPassword(c, opened, ticket, { ...refused, field: "password" }, 400);
  }
  // Issue 32: without import mode, a custom database's change_password script keeps the password.
  const scripted = await changePasswordThroughScript(c, opened.config, view.data.connection, view.data.email, password);
  if (scripted.kind === "refused") return renderNewPassword(c, opened, ticket, { code: "PASSWORD_CHANGE_FAILED", message: scripted.message, field: "password" }, 400);
  const hash = scripted.kind === "changed" ? null : await hashPassword(password);
  const outcome = await tenantObject(c.env, c.var.tenant.id).userTickets(audit).completeReset(opened.hash, { password_hash: hash, history_size: size });
  if (!outcome.ok) return sendMessage(c, shellFor(c, opened.config, undefined, opened.view.data.language ?? undefined), INVALID_LINK, 400);
  return successPage(c, opened.config, outcome.data);
}

/** "Password changed", with the way back: the login it came from, the ticket's result_url, or the app's login route. */
async function successPage(c: AppContext, config: Awaited<ReturnType<typeof configOf>>, data: ResetTicketView["data"]): Promise<Response> {
  const client = data.client_id ? clientIn(config, data.client_id) : undefined;
  const shell = shellFor(c, config, client?.name, data.language ?? undefined);
  const done = (id: "title" | "description" | "backToClientText" | "buttonText") =>
    shell.text.t("reset-password", "reset-password-success", id, client ? { clientName: client.name } : {});
  // The result_url's `message` stays English: it is for the application, not the page.
  const message = "Your password has been changed. You can now log in with your new password.";
  const login = data.login_state ? await readLoginSession(c, data.login_state) : null;
  let back: string | null = null;
  if (login?.state === "pending") back = `/u2/login?state=${encodeURIComponent(login.id)}`;
  else if (data.result_url) back = resultRedirect(data.result_url, message, data.include_email_in_redirect ? data.email : null);
  else back = applicationLoginRoute(client);
  const label = client ? done("backToClientText") : done("buttonText");
  return sendMessage(c, shell, { title: done("title"), message: done("description"), ...(back ? { retryHref: back, retryLabel: label } : {}) }, 200);
}
