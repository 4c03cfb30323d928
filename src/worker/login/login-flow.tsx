import { normalizeEmail } from "../../shared/schemas/users";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppContext } from "../context";
import { finishLogin } from "../oauth/authorize/complete";
import { isSelfServiceResetDisabled, isSignupDisabled, loginDatabaseConnection } from "./connection";
import { loginPasskeyOptions } from "./mfa/passkey-flow";
import { invitedEmail, organizationConnection, organizationProps } from "./organization";
import type { FormFailure } from "./pages/login-page";
import { LoginPage } from "./pages/login-page";
import { LOGIN_FAILURE_MESSAGES, publicLoginCode, verifyPassword } from "./password";
import { EXPIRED_LOGIN, sendMessage, sendPage } from "./render";
import { type LoginTransaction, loadTransaction, setCsrfCookie, submittedForm } from "./transaction";

/** Shown when the tenant's database connection is missing or not enabled for the application. */
const NO_CONNECTION = {
  code: "CONNECTION_NOT_FOUND",
  title: "Login unavailable",
  message: "This application has no email and password login.",
} as const;

async function renderLogin(
  c: AppContext,
  t: LoginTransaction,
  options: { email?: string; error?: FormFailure; canSignup: boolean; canReset: boolean },
  status: ContentfulStatusCode = 200,
) {
  // Passkeys on the connection: a fresh challenge for this login, offered by autofill and a button.
  const passkey = await loginPasskeyOptions(c, t.config, t.client, t.loginSession);
  return sendPage(
    c,
    t.shell,
    <LoginPage
      shell={t.shell}
      state={t.state}
      csrf={t.loginSession.csrf_token}
      clientName={t.client.name}
      canSignup={options.canSignup}
      canReset={options.canReset}
      {...organizationProps(t)}
      passkey={passkey}
      {...(options.email ? { email: options.email } : {})}
      {...(options.error ? { error: options.error } : {})}
    />,
    status,
    { scripts: passkey !== null },
  );
}

/**
 * The database connection this login may use: it must exist for the client and, in an organization, be
 * enabled for it (issue 11); sign-up also needs the organization's `is_signup_enabled` or an invitation.
 */
function loginConnection(t: LoginTransaction) {
  const connection = loginDatabaseConnection(t.config, t.client, t.loginSession.request.connection);
  if (!connection) return null;
  const inOrganization = organizationConnection(t.organization, connection.name, t.loginSession.request);
  if (!inOrganization.enabled) return null;
  return { connection, canSignup: !isSignupDisabled(connection) && inOrganization.signup, canReset: !isSelfServiceResetDisabled(connection) };
}

/** GET /u2/login?state=<login session>: the email and password form; sets the CSRF cookie. */
export async function loginPage(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c);
  if (t instanceof Response) return t;
  const usable = loginConnection(t);
  if (!usable) return sendMessage(c, t.shell, NO_CONNECTION, 400);
  setCsrfCookie(c, t.loginSession);
  const hint = t.loginSession.request.login_hint;
  return renderLogin(c, t, { canSignup: usable.canSignup, canReset: usable.canReset, ...(hint ? { email: normalizeEmail(hint) } : {}) });
}

/**
 * POST /u2/login?state=<login session>: CSRF check, then the password check shared with /co/authenticate.
 * Failures re-render the form with status 403 and the SPEC §7 code; success completes the transaction
 * (session cookie, authorization response) exactly once.
 */
export async function loginSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "login");
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const usable = loginConnection(t);
  if (!usable) return sendMessage(c, t.shell, NO_CONNECTION, 400);
  const { connection, canSignup, canReset } = usable;

  // An invitation fixes the address (issue 11); the field is read-only, and the server holds to it.
  const email = normalizeEmail(invitedEmail(t.loginSession.request) ?? form.email ?? "");
  const password = form.password ?? "";
  if (!email || !password) {
    const error = { code: "MISSING_CREDENTIALS", message: "Enter your email address and password." };
    return renderLogin(c, t, { email, error, canSignup, canReset }, 400);
  }
  const check = await verifyPassword(c, email, password, connection, t.client.client_id);
  if (!check.ok) {
    const error = { code: publicLoginCode(check.code), message: LOGIN_FAILURE_MESSAGES[check.code] };
    return renderLogin(c, t, { email, error, canSignup, canReset }, check.status);
  }
  // SPEC §3.5: under an MFA policy the login session waits in awaiting_mfa for the second factor (in finishLogin).
  const response = await finishLogin(c, t.loginSession, t.client, check.user);
  return response ?? sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
}
