import type { FC } from "hono/jsx";
import { MIN_PASSWORD_LENGTH } from "../signup";
import { EmailField, PasswordField } from "./fields";
import { FormError, Layout, type PageShell, Partial } from "./layout";
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
  const { text } = shell;
  const t = (id: Parameters<typeof text.t<"signup", "signup">>[2], vars?: Record<string, string | number>) => text.t("signup", "signup", id, vars);
  return (
    <Layout shell={shell} title={t("pageTitle", { clientName })}>
      <h1 id="page-title">{t("title")}</h1>
      <p class="subtitle">
        {organizationName ? t("organizationDescription", { organizationName, clientName }) : t("description", { clientName })}
      </p>
      <form method="post" action={`/u2/signup${q}`} novalidate>
        {error ? <FormError code={error.code} message={text.failure(error)} /> : null}
        <input type="hidden" name="_csrf" value={csrf} />
        <Partial shell={shell} prompt="signup" point="form-content-start" />
        <EmailField label={t("emailPlaceholder")} lockedHint={text.t("login", "login", "invitationEmailHint")} value={email} autocomplete="email" hasFocus={!isEmailLocked} isInvalid={emailInvalid} isLocked={isEmailLocked} />
        <PasswordField
          label={t("passwordPlaceholder")}
          autocomplete="new-password"
          hasFocus={isEmailLocked}
          minLength={MIN_PASSWORD_LENGTH}
          isInvalid={passwordInvalid}
          describedBy={passwordInvalid ? "form-error password-hint" : "password-hint"}
        >
          <p id="password-hint" class="hint">
            {t("passwordHint", { minLength: MIN_PASSWORD_LENGTH })}
          </p>
        </PasswordField>
        <Partial shell={shell} prompt="signup" point="form-content-end" />
        <Partial shell={shell} prompt="signup" point="form-footer-start" />
        <button type="submit">{t("buttonText")}</button>
        <Partial shell={shell} prompt="signup" point="form-footer-end" />
      </form>
      <Partial shell={shell} prompt="signup" point="secondary-actions-start" />
      <p class="alt">
        {t("loginActionText")} <a href={`/u2/login${q}`}>{t("loginActionLinkText")}</a>
      </p>
      <Partial shell={shell} prompt="signup" point="secondary-actions-end" />
    </Layout>
  );
};
