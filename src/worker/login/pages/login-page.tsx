import type { FC } from "hono/jsx";
import { EmailField, PasswordField } from "./fields";
import { FormError, Layout, type PageShell } from "./layout";
import type { FormFailure } from "./parts";
import { CeremonyForm, CeremonyScripts } from "./webauthn-pages";

export type { FormFailure } from "./parts";

export interface LoginPageProps {
  shell: PageShell;
  /** The login session id (the `state` query parameter of /u2 pages). */
  state: string;
  csrf: string;
  clientName: string;
  email?: string;
  error?: FormFailure;
  /** Whether a database connection is offered (the email and password form); false: only the alternatives. */
  hasPassword?: boolean;
  /** Passwordless and enterprise connections (issue 29 point 0): "Continue with ..." links, in the client's order. */
  alternatives?: { href: string; label: string }[];
  /** Whether the database connection accepts sign-ups (the link is shown only then). */
  canSignup: boolean;
  /** Whether the connection offers self-service password reset (the "Forgot password?" link). */
  canReset?: boolean;
  /** The organization the login runs in (its display name), and whether an invitation fixes the email. */
  organizationName?: string;
  isEmailLocked?: boolean;
  /** Passkeys as the first factor (issue 12): the request options, conditional UI autofill, the button. */
  passkey?: { options: unknown; autofill: boolean; button: boolean } | null;
}

/** Email and password on one screen (the reference platform's "identifier + password" login). */
export const LoginPage: FC<LoginPageProps> = ({ shell, state, csrf, clientName, email, error, hasPassword = true, alternatives = [], canSignup, canReset, organizationName, isEmailLocked, passkey }) => {
  const q = `?state=${encodeURIComponent(state)}`;
  const describedBy = error ? "form-error" : undefined;
  // With the email kept after a failed attempt, the password is what the user types next.
  const focusPassword = Boolean(email);
  return (
    <Layout shell={shell} title={`Log in | ${clientName}`}>
      <h1 id="page-title">Welcome</h1>
      <p class="subtitle">
        {organizationName ? `Log in to ${organizationName} to continue to ${clientName}.` : `Log in to continue to ${clientName}.`}
      </p>
      {hasPassword ? (
      <form method="post" action={`/u2/login${q}`} novalidate>
        {error ? <FormError code={error.code} message={error.message} /> : null}
        <input type="hidden" name="_csrf" value={csrf} />
        <EmailField
          value={email}
          autocomplete={passkey?.autofill ? "username webauthn" : "username"}
          hasFocus={!focusPassword}
          isInvalid={Boolean(error)}
          isLocked={isEmailLocked}
        />
        <PasswordField autocomplete="current-password" hasFocus={focusPassword} isInvalid={Boolean(error)} describedBy={describedBy} />
        {canReset ? (
          <p class="forgot">
            <a href={`/u2/reset-password${q}`}>Forgot password?</a>
          </p>
        ) : null}
        <button type="submit">Continue</button>
      </form>
      ) : null}
      {alternatives.length ? (
        <>
          {hasPassword ? <p class="alt">or</p> : null}
          <ul class="connections">
            {alternatives.map((a) => (
              <li>
                <a class="button secondary" href={a.href}>
                  {a.label}
                </a>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {passkey ? (
        <>
          <p class="alt">or</p>
          <CeremonyForm action={`/u2/login/passkey${q}`} csrf={csrf} mode={passkey.autofill ? "autofill" : "authenticate"} label="Sign in with a passkey" hideButton={!passkey.button} />
          <CeremonyScripts nonce={shell.nonce} options={passkey.options} />
        </>
      ) : null}
      {canSignup ? (
        <p class="alt">
          Don't have an account? <a href={`/u2/signup${q}`}>Sign up</a>
        </p>
      ) : null}
    </Layout>
  );
};
