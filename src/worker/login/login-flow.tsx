import { normalizeEmail } from "../../shared/schemas/users";
import type { PasswordLoginRead } from "../../shared/types";
import { tenantObject } from "../tenant/stubs";
import { isSealedLoginState, openLoginState } from "../tenant/login-state";
import { configOf, DATABASE_STRATEGY } from "./connection";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppContext } from "../context";
import { finishLogin } from "../oauth/authorize/complete";
import { OIDC_STRATEGY, type PasswordlessStrategy, connectionLabel, loginOffer, type LoginOffer, requestedConnection, showsAsButton } from "./connections/offer";
import { passwordlessLoginPage } from "./connections/passwordless-flow";
import { loginPasskeyOptions } from "./mfa/passkey-flow";
import { invitedEmail, organizationProps } from "./organization";
import type { FormFailure } from "./pages/login-page";
import { LoginPage } from "./pages/login-page";
import type { PageShell } from "./pages/layout";
import { holeMark, PrerenderCache } from "./pages/prerendered";
import { LOGIN_FAILURE_MESSAGES, publicLoginCode, verifyPassword } from "./password";
import { EXPIRED_LOGIN, pageDocument, sendMessage, sendPage } from "./render";
import { type LoginTransaction, loadTransaction, setCsrfCookie, submittedForm } from "./transaction";

/** Shown when no connection at all is enabled for the application (issue 29 point 3). */
const NO_CONNECTION = {
  code: "CONNECTION_NOT_FOUND",
  title: "Login unavailable",
  message: "This application has no way to log in enabled.",
} as const;

/** Shown when `connection=` names a connection that does not exist or is not enabled for the application. */
const NOT_OFFERED = {
  code: "CONNECTION_NOT_FOUND",
  text: "connection-not-offered",
  title: "Login unavailable",
  message: "This application does not offer this way of logging in.",
} as const;

/** Whether `connection=` names a connection this login does not offer (the reference refuses it rather than show another). */
const namesUnoffered = (offer: LoginOffer, named: string | undefined, requested: unknown) =>
  Boolean(named) && !requested && offer.database?.connection.name !== named;

/** The login pages rendered once per tenant configuration, language, application and `connection=` (issue 29 point 1). */
const LOGIN_PAGES = new PrerenderCache();

async function renderLogin(
  c: AppContext,
  t: LoginTransaction,
  offer: LoginOffer,
  options: { email?: string; error?: FormFailure },
  status: ContentfulStatusCode = 200,
) {
  // Passkeys on the connection: a fresh challenge for this login, offered by autofill and a button.
  const passkey = offer.database ? await loginPasskeyOptions(c, t.config, t.client, t.loginSession) : null;
  const page = (shell: PageShell, state: string, csrf: string) => {
    const q = `?state=${encodeURIComponent(state)}`;
    const alternatives = [
      ...offer.passwordless.map((x) => ({
        href: `/u2/passwordless${q}&connection=${x.name}`,
        label: shell.text.t("login", "login", x.strategy === "email" ? "passwordlessEmailButtonText" : "passwordlessSmsButtonText"),
      })),
      ...offer.enterprise.filter(showsAsButton).map((x) => ({
        href: `/u2/enterprise${q}&connection=${encodeURIComponent(x.name)}`,
        label: shell.text.t("login", "login", "federatedConnectionButtonText", { connectionName: connectionLabel(x) }),
      })),
    ];
    return (
      <LoginPage
        shell={shell}
        state={state}
        csrf={csrf}
        clientName={t.client.name}
        hasPassword={offer.database !== null}
        canSignup={offer.database?.canSignup ?? false}
        canReset={offer.database?.canReset ?? false}
        alternatives={alternatives}
        {...organizationProps(t)}
        passkey={passkey}
        {...(options.email ? { email: options.email } : {})}
        {...(options.error ? { error: options.error } : {})}
      />
    );
  };
  // The common first display (no hint, error, passkey challenge, organization or invitation) differs from
  // one login to the next only by the nonce, the state and the CSRF token: rendered once, then filled in.
  if (status === 200 && !options.email && !options.error && !passkey && !t.organization && !invitedEmail(t.loginSession.request)) {
    const key = [t.config.tenantId, t.config.version, t.shell.text.lang, t.client.client_id, t.loginSession.request.connection ?? ""].join("\n");
    const values = { nonce: t.shell.nonce, state: t.state, csrf: t.loginSession.csrf_token };
    const filled = await LOGIN_PAGES.fill(key, values, () => {
      const shell = { ...t.shell, nonce: holeMark("nonce") };
      return pageDocument(c, shell, page(shell, holeMark("state"), holeMark("csrf")));
    });
    if (filled !== null) return sendPage(c, t.shell, filled, status);
  }
  return sendPage(c, t.shell, page(t.shell, t.state, t.loginSession.csrf_token), status, { scripts: passkey !== null });
}

/** GET /u2/login?state=<login session>: the email and password form; sets the CSRF cookie. */
export async function loginPage(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c, undefined, { recent: true });
  if (t instanceof Response) return t;
  const offer = loginOffer(t);
  // Issue 29 point 0: `connection=` naming a passwordless or enterprise connection goes straight to it, and a
  // passwordless connection that is the application's only one is the login page.
  const requested = requestedConnection(offer, t.loginSession.request.connection);
  if (namesUnoffered(offer, t.loginSession.request.connection, requested)) return sendMessage(c, t.shell, NOT_OFFERED, 400);
  if (requested && requested.strategy === OIDC_STRATEGY) return c.redirect(`/u2/enterprise?state=${encodeURIComponent(t.state)}&connection=${encodeURIComponent(requested.name)}`, 302);
  if (requested) return passwordlessLoginPage(c, t, requested.strategy as PasswordlessStrategy, false);
  const [only] = offer.passwordless;
  if (!offer.database && only && offer.passwordless.length === 1 && offer.enterprise.length === 0) return passwordlessLoginPage(c, t, only.strategy, true);
  if (!offer.database && offer.passwordless.length === 0 && offer.enterprise.length === 0) return sendMessage(c, t.shell, NO_CONNECTION, 400);
  setCsrfCookie(c, t.loginSession);
  const hint = t.loginSession.request.login_hint;
  return renderLogin(c, t, offer, hint ? { email: normalizeEmail(hint) } : {});
}

/**
 * POST /u2/login?state=<login session>: CSRF check, then the password check shared with /co/authenticate.
 * Failures re-render the form with status 403 and the SPEC §7 code; success completes the transaction
 * (session cookie, authorization response) exactly once.
 */
export async function loginSubmit(c: AppContext): Promise<Response> {
  // Issue 31: the login session, the account by the submitted email in the tenant's database connections and
  // whether linking would link it, in one round trip (the offer picks the connection once the session is known).
  let prefetched: PasswordLoginRead | undefined;
  const databases = (await configOf(c)).connections.filter((x) => x.strategy === DATABASE_STRATEGY).map((x) => x.name);
  const submitted = await submittedForm(c, "login", undefined, async (state, fields) => {
    const stub = tenantObject(c.env, c.get("tenant").id);
    // A sealed state is opened once, here: one that does not open costs the tenant object nothing (no account
    // lookups for a forged one); one that does stands for the session until a step has stored it.
    const sealed = isSealedLoginState(state) ? await openLoginState(c.env.ENCRYPTION_KEY, c.get("tenant").id, state) : null;
    if (isSealedLoginState(state) && !sealed) return null;
    if (!fields?.email || !databases.length) return (await stub.logins().get(state)) ?? sealed;
    prefetched = await stub.passwordLoginRead(state, fields.email, databases);
    return prefetched.session ?? sealed;
  });
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const offer = loginOffer(t);
  if (namesUnoffered(offer, t.loginSession.request.connection, requestedConnection(offer, t.loginSession.request.connection))) {
    return sendMessage(c, t.shell, NOT_OFFERED, 400);
  }
  if (!offer.database) return sendMessage(c, t.shell, NO_CONNECTION, 400);
  const { connection } = offer.database;

  // An invitation fixes the address (issue 11); the field is read-only, and the server holds to it.
  const email = normalizeEmail(invitedEmail(t.loginSession.request) ?? form.email ?? "");
  const password = form.password ?? "";
  if (!email || !password) {
    const error = { code: "MISSING_CREDENTIALS", message: "Enter your email address and password." };
    return renderLogin(c, t, offer, { email, error }, 400);
  }
  const check = await verifyPassword(c, email, password, connection, t.client.client_id, prefetched);
  if (!check.ok) {
    const error = { code: publicLoginCode(check.code), message: LOGIN_FAILURE_MESSAGES[check.code] };
    return renderLogin(c, t, offer, { email, error }, check.status);
  }
  // SPEC §3.5: under an MFA policy the login session waits in awaiting_mfa for the second factor (in finishLogin).
  const response = await finishLogin(c, t.loginSession, t.client, check.user, undefined, check.linking);
  return response ?? sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
}
