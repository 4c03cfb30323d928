import { randomId } from "../../../shared/crypto/random";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { finishLogin } from "../../oauth/authorize/complete";
import { type PasswordlessRefusal, passwordlessIdentifier, passwordlessSubject, sendPasswordlessCode, smsUserId } from "../../oauth/passwordless";
import { tenantObject, userObject } from "../../tenant/stubs";
import { isSignupDisabled } from "../connection";
import { redeemCode } from "../mfa/one-time-codes";
import type { FormFailure } from "../pages/parts";
import { EXPIRED_LOGIN, sendMessage, sendPage } from "../render";
import { type LoginTransaction, loadTransaction, setCsrfCookie, submittedForm } from "../transaction";
import { type PasswordlessStrategy, loginOffer } from "./offer";
import { PasswordlessCodePage, PasswordlessStartPage } from "./passwordless-pages";

/**
 * Passwordless login on the universal login pages (issue 29 point 0): the address (or phone number), a
 * six-digit code sent through the machinery of /passwordless/start (its code store, throttles and
 * providers; the development sink under `npm start`), then the code, checked as the OTP grant checks it
 * (3 guesses per code, 5 failures per identifier in 5 minutes), and the login completed by finishLogin as
 * a password login is (MFA policy, organizations, post-login actions, consent).
 */

const NOT_OFFERED = { code: "CONNECTION_NOT_FOUND", text: "connection-not-offered", title: "Login unavailable", message: "This application does not offer this way of logging in." } as const;

const WRONG_CODE: Record<PasswordlessStrategy, FormFailure> = {
  email: { code: "INVALID_CODE", text: "wrong-email-code", message: "Wrong email or verification code." },
  sms: { code: "INVALID_CODE", text: "wrong-sms-code", message: "Wrong phone number or verification code." },
};
const INVALID_IDENTIFIER: Record<PasswordlessStrategy, FormFailure> = {
  email: { code: "INVALID_EMAIL", message: "Enter a valid email address." },
  sms: { code: "INVALID_PHONE_NUMBER", text: "invalid-phone", message: "Enter a phone number with its country code, e.g. +14155550100." },
};
const REFUSED: Record<PasswordlessRefusal, [FormFailure, ContentfulStatusCode]> = {
  ip_limit: [{ code: "TOO_MANY_REQUESTS", message: "Too many requests from your network. Wait a few minutes, then try again." }, 429],
  identifier_limit: [{ code: "TOO_MANY_REQUESTS", text: "too-many-codes", message: "Too many codes were sent to this address. Wait a few minutes, then try again." }, 429],
  no_provider: [{ code: "DELIVERY_UNAVAILABLE", message: "Codes cannot be sent right now. Try another way to log in." }, 503],
  delivery_failed: [{ code: "DELIVERY_FAILED", message: "The code could not be sent. Try again later." }, 503],
};
const TOO_MANY_ATTEMPTS: FormFailure = { code: "TOO_MANY_FAILED_LOGINS", text: "too-many-attempts", message: "Too many failed attempts. Wait a few minutes, then ask for a new code." };
const BLOCKED: FormFailure = { code: "USER_BLOCKED", message: "This account is blocked. Contact the application's administrator." };
const SIGNUP_DISABLED: FormFailure = { code: "SIGNUP_DISABLED", text: "no-account-signup-closed", message: "There is no account for this address, and sign-ups are closed." };

/** The passwordless connection of the request (`?connection=`) when this login may use it, with the page's context. */
function passwordlessOf(c: AppContext, t: LoginTransaction) {
  const offer = loginOffer(t);
  const connection = offer.passwordless.find((x) => x.name === c.req.query("connection"));
  if (!connection) return null;
  const isOnlyConnection = !offer.database && offer.passwordless.length === 1 && offer.enterprise.length === 0;
  return { connection, strategy: connection.strategy, isOnlyConnection };
}

type Usable = NonNullable<ReturnType<typeof passwordlessOf>>;

function startPage(c: AppContext, t: LoginTransaction, p: Usable, extra: { identifier?: string; error?: FormFailure } = {}, status: ContentfulStatusCode = 200) {
  const page = <PasswordlessStartPage shell={t.shell} state={t.state} csrf={t.loginSession.csrf_token} clientName={t.client.name} connection={p.strategy} isOnlyConnection={p.isOnlyConnection} {...extra} />;
  return sendPage(c, t.shell, page, status);
}

function codePage(c: AppContext, t: LoginTransaction, p: Usable, identifier: string, error?: FormFailure, status: ContentfulStatusCode = 200) {
  const page = (
    <PasswordlessCodePage shell={t.shell} state={t.state} csrf={t.loginSession.csrf_token} clientName={t.client.name} connection={p.strategy} isOnlyConnection={p.isOnlyConnection} identifier={identifier} {...(error ? { error } : {})} />
  );
  return sendPage(c, t.shell, page, status);
}

/** The first step as the login page shows it when the passwordless connection is the only one (or named by `connection=`). */
export function passwordlessLoginPage(c: AppContext, t: LoginTransaction, strategy: PasswordlessStrategy, isOnlyConnection: boolean) {
  setCsrfCookie(c, t.loginSession);
  const hint = t.loginSession.request.login_hint;
  const identifier = hint ? (passwordlessIdentifier(strategy, hint) ?? undefined) : undefined;
  return startPage(c, t, { connection: t.config.connections.find((x) => x.name === strategy) as Usable["connection"], strategy, isOnlyConnection }, identifier ? { identifier } : {});
}

/** GET /u2/passwordless?state=&connection=email|sms: the address (or phone number) form. */
export async function passwordlessPage(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c);
  if (t instanceof Response) return t;
  const p = passwordlessOf(c, t);
  if (!p) return sendMessage(c, t.shell, NOT_OFFERED, 400);
  return passwordlessLoginPage(c, t, p.strategy, p.isOnlyConnection);
}

/** POST /u2/passwordless: sends a code (throttled as /passwordless/start), then shows the code form. */
export async function passwordlessSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "login");
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const p = passwordlessOf(c, t);
  if (!p) return sendMessage(c, t.shell, NOT_OFFERED, 400);
  const raw = (p.strategy === "email" ? form.email : form.phone_number) ?? "";
  const identifier = passwordlessIdentifier(p.strategy, raw);
  if (!identifier) return startPage(c, t, p, { identifier: raw, error: INVALID_IDENTIFIER[p.strategy] }, 400);
  // The code is bound to this login transaction: it completes this login and no other.
  const sent = await sendPasswordlessCode(c, t.config, t.client, p.strategy, identifier, { login_session: t.loginSession.id }, t.shell.text.lang);
  if (!sent.ok) {
    const [error, status] = REFUSED[sent.reason];
    return startPage(c, t, p, { identifier, error }, status);
  }
  return codePage(c, t, p, identifier);
}

/**
 * POST /u2/passwordless/code: the code, checked once (constant time, attempts counted before the compare,
 * consumed atomically) and only for this login transaction; then the user (created on first login unless
 * the connection disables sign-up) and finishLogin. A wrong or expired code re-renders the form with 403.
 */
export async function passwordlessCodeSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "login");
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const p = passwordlessOf(c, t);
  if (!p) return sendMessage(c, t.shell, NOT_OFFERED, 400);
  const identifier = passwordlessIdentifier(p.strategy, form.identifier ?? "");
  if (!identifier) return startPage(c, t, p, { error: INVALID_IDENTIFIER[p.strategy] }, 400);
  const clientId = t.client.client_id;
  const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: clientId } });
  const stub = tenantObject(c.env, c.var.tenant.id);

  // The same per-identifier failure budget as the OTP grant (one user object per identifier).
  const throttle = userObject(c.env, c.var.tenant.id, `passwordless:${p.strategy}:${identifier}`).mfa();
  const admission = await throttle.begin();
  if (!admission.admitted) return codePage(c, t, p, identifier, TOO_MANY_ATTEMPTS, 429);
  const stored = await redeemCode(c, "passwordless", passwordlessSubject(p.strategy, identifier), clientId, (form.code ?? "").trim());
  if (!stored || stored.login_session !== t.loginSession.id) {
    await stub.passwordless(audit).recordFailure(`wrong code for ${p.strategy}`, clientId, "f");
    return codePage(c, t, p, identifier, WRONG_CODE[p.strategy], 403);
  }
  await throttle.settle(true);

  const who = {
    connection: p.strategy,
    identifier,
    new_user_id: p.strategy === "email" ? `email|${randomId("", 24)}` : await smsUserId(c.var.tenant.id, identifier),
    allow_signup: !isSignupDisabled(p.connection),
  };
  const resolved = await stub.passwordless(audit).resolve(who, clientId);
  if (!resolved.ok) return startPage(c, t, p, { identifier, error: resolved.reason === "blocked" ? BLOCKED : SIGNUP_DISABLED }, 403);
  const response = await finishLogin(c, t.loginSession, t.client, resolved.user, [p.strategy === "email" ? "otp" : "sms"]);
  return response ?? sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
}
