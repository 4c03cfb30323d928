import type { FC } from "hono/jsx";
import { EmailField } from "./fields";
import { FormError, Layout, type PageShell } from "./layout";
import type { FormFailure } from "./login-page";

export interface ResetRequestPageProps {
  shell: PageShell;
  state: string;
  csrf: string;
  clientName: string;
  email?: string;
  error?: FormFailure;
}

/** "Forgot password?": the address to send the reset link to. */
export const ResetRequestPage: FC<ResetRequestPageProps> = ({ shell, state, csrf, clientName, email, error }) => {
  const q = `?state=${encodeURIComponent(state)}`;
  return (
    <Layout shell={shell} title={`Reset your password | ${clientName}`}>
      <h1 id="page-title">Forgot your password?</h1>
      <p class="subtitle">Enter your email address and we will send you a link to reset your password.</p>
      <form method="post" action={`/u2/reset-password${q}`} novalidate>
        {error ? <FormError code={error.code} message={error.message} /> : null}
        <input type="hidden" name="_csrf" value={csrf} />
        <EmailField value={email} autocomplete="email" hasFocus isInvalid={Boolean(error)} />
        <button type="submit">Continue</button>
      </form>
      <p class="alt">
        <a href={`/u2/login${q}`}>Back to log in</a>
      </p>
    </Layout>
  );
};

export interface NewPasswordPageProps {
  shell: PageShell;
  /** The link's secret, posted back with the form (the ticket is the proof; no session exists here). */
  ticket: string;
  email: string;
  /** The connection's rule, stated up front. */
  policy: string;
  error?: FormFailure & { field?: "password" | "password_confirm" };
}

/** The new password and its confirmation, under the connection's policy. */
export const NewPasswordPage: FC<NewPasswordPageProps> = ({ shell, ticket, email, policy, error }) => {
  const confirmInvalid = error?.field === "password_confirm";
  const passwordInvalid = error !== undefined && !confirmInvalid;
  return (
    <Layout shell={shell} title="Change your password">
      <h1 id="page-title">Change your password</h1>
      <p class="subtitle">Enter a new password for {email}.</p>
      <form method="post" action="/u2/reset-password/change" novalidate>
        {error ? <FormError code={error.code} message={error.message} /> : null}
        <input type="hidden" name="ticket" value={ticket} />
        {/* Lets password managers file the new password under the right account. */}
        <input type="hidden" name="username" autocomplete="username" value={email} />
        <div class="field">
          <label for="password">New password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="new-password"
            required
            autofocus
            aria-invalid={passwordInvalid ? "true" : undefined}
            aria-describedby={passwordInvalid ? "form-error password-hint" : "password-hint"}
          />
          <p id="password-hint" class="hint">
            {policy}
          </p>
        </div>
        <div class="field">
          <label for="password_confirm">Confirm new password</label>
          <input
            id="password_confirm"
            name="password_confirm"
            type="password"
            autocomplete="new-password"
            required
            aria-invalid={confirmInvalid ? "true" : undefined}
            aria-describedby={confirmInvalid ? "form-error" : undefined}
          />
        </div>
        <button type="submit">Reset password</button>
      </form>
    </Layout>
  );
};
