import type { FC } from "hono/jsx";
import { MIN_PASSWORD_LENGTH } from "../signup";
import { EmailField, PasswordField } from "./fields";
import { FormError, Layout, type PageShell } from "./layout";
import type { FormFailure } from "./login-page";

export interface SignupPageProps {
  shell: PageShell;
  state: string;
  csrf: string;
  clientName: string;
  email?: string;
  error?: FormFailure & { field?: "email" | "password" };
  /** The organization the sign-up joins (its display name), and whether an invitation fixes the email. */
  organizationName?: string;
  isEmailLocked?: boolean;
}

/** Email and password (no confirmation field: the password rule is stated up front instead). */
export const SignupPage: FC<SignupPageProps> = ({ shell, state, csrf, clientName, email, error, organizationName, isEmailLocked }) => {
  const q = `?state=${encodeURIComponent(state)}`;
  const emailInvalid = error !== undefined && error.field !== "password";
  const passwordInvalid = error !== undefined && error.field !== "email";
  return (
    <Layout shell={shell} title={`Sign up | ${clientName}`}>
      <h1 id="page-title">Create your account</h1>
      <p class="subtitle">
        {organizationName ? `Sign up to join ${organizationName} on ${clientName}.` : `Sign up to continue to ${clientName}.`}
      </p>
      <form method="post" action={`/u2/signup${q}`} novalidate>
        {error ? <FormError code={error.code} message={error.message} /> : null}
        <input type="hidden" name="_csrf" value={csrf} />
        <EmailField value={email} autocomplete="email" hasFocus={!isEmailLocked} isInvalid={emailInvalid} isLocked={isEmailLocked} />
        <PasswordField
          autocomplete="new-password"
          hasFocus={isEmailLocked}
          minLength={MIN_PASSWORD_LENGTH}
          isInvalid={passwordInvalid}
          describedBy={passwordInvalid ? "form-error password-hint" : "password-hint"}
        >
          <p id="password-hint" class="hint">
            At least {MIN_PASSWORD_LENGTH} characters.
          </p>
        </PasswordField>
        <button type="submit">Sign up</button>
      </form>
      <p class="alt">
        Already have an account? <a href={`/u2/login${q}`}>Log in</a>
      </p>
    </Layout>
  );
};
