import { normalizeEmail } from "../../shared/schemas/users";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppContext } from "../context";
import { finishLogin } from "../oauth/authorize/complete";
import { isSignupDisabled, loginDatabaseConnection, requiresVerifiedEmail } from "./connection";
import { invitedEmail, organizationConnection, organizationProps } from "./organization";
import { SignupPage, type SignupPageProps } from "./pages/signup-page";
import { EXPIRED_LOGIN, sendMessage, sendPage } from "./render";
import { signUpDatabaseUser } from "./signup";
import { type LoginTransaction, loadTransaction, setCsrfCookie, submittedForm } from "./transaction";

const SIGNUP_UNAVAILABLE = {
  code: "SIGNUP_DISABLED",
  title: "Sign-up unavailable",
  message: "New accounts cannot be created for this application.",
} as const;

/**
 * The database connection when it exists for the client and accepts sign-ups; in an organization it must
 * also be enabled for it with `is_signup_enabled`, unless an invitation is being accepted (issue 11).
 */
function signupConnection(t: LoginTransaction) {
  const connection = loginDatabaseConnection(t.config, t.client, t.loginSession.request.connection);
  if (!connection || isSignupDisabled(connection)) return null;
  return organizationConnection(t.organization, connection.name, t.loginSession.request).signup ? connection : null;
}

function renderSignup(
  c: AppContext,
  t: LoginTransaction,
  extra: Pick<SignupPageProps, "email" | "error"> = {},
  status: ContentfulStatusCode = 200,
) {
  const props: SignupPageProps = { shell: t.shell, state: t.state, csrf: t.loginSession.csrf_token, clientName: t.client.name, ...organizationProps(t) };
  if (extra.email) props.email = extra.email;
  if (extra.error) props.error = extra.error;
  return sendPage(c, t.shell, <SignupPage {...props} />, status);
}

/** GET /u2/signup?state=<login session>: the sign-up form (only when the connection allows sign-ups). */
export async function signupPage(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c);
  if (t instanceof Response) return t;
  if (!signupConnection(t)) return sendMessage(c, t.shell, SIGNUP_UNAVAILABLE, 403);
  setCsrfCookie(c, t.loginSession);
  const hint = t.loginSession.request.login_hint;
  return renderSignup(c, t, hint ? { email: normalizeEmail(hint) } : {});
}

/**
 * POST /u2/signup?state=<login session>: CSRF check, password policy, user creation (email not verified),
 * then the login completes as after a password login. A connection with `requires_verified_email` gets a
 * "verify your email" notice instead of a session.
 */
export async function signupSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "signup");
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const connection = signupConnection(t);
  if (!connection) return sendMessage(c, t.shell, SIGNUP_UNAVAILABLE, 403);

  // An invitation fixes the address (issue 11): the field is read-only, and the server holds to it.
  const email = normalizeEmail(invitedEmail(t.loginSession.request) ?? form.email ?? "");
  const result = await signUpDatabaseUser(c, connection, { email, password: form.password ?? "" }, t.client.client_id);
  if (!result.ok) {
    const status = result.failure.code === "USER_EXISTS" ? 409 : result.failure.code === "REGISTRATION_DENIED" ? 403 : 400;
    return renderSignup(c, t, { email, error: result.failure }, status);
  }
  if (requiresVerifiedEmail(connection)) {
    const notice = { title: t.shell.text.t("signup", "signup", "verifyEmailTitle"), message: t.shell.text.t("signup", "signup", "verifyEmailDescription") };
    return sendMessage(c, t.shell, notice, 200);
  }
  // Under an MFA policy a new user enrolls a factor before the first login completes (in finishLogin).
  const response = await finishLogin(c, t.loginSession, t.client, result.user);
  return response ?? sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
}
