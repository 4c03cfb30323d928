import type { FC } from "hono/jsx";
import { EmailField, PasswordField } from "./fields";
import { FormError, Layout, type PageShell, Partial } from "./layout";
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
  const { text } = shell;
  const t = (id: Parameters<typeof text.t<"login", "login">>[2], vars?: Record<string, string>) => text.t("login", "login", id, vars);
  // The other ways in (connections, passkey) below the form, or above it under the theme's
  // social_buttons_layout: top, with the "or" separator between them and the form (issue 29 point 5).
  const top = Boolean(shell.branding.socialButtonsTop) && hasPassword;
  const separator = hasPassword ? <p class="alt">{t("separatorText")}</p> : null;
  const others =
    alternatives.length || passkey ? (
      <div class="alt-logins">
        {top ? null : separator}
        {alternatives.length ? (
          <ul class="connections">
            {alternatives.map((a) => (
              <li>
                <a class="button secondary" href={a.href}>
                  {a.label}
                </a>
              </li>
            ))}
          </ul>
        ) : null}
        {passkey ? (
          <>
            {alternatives.length && !top ? <p class="alt">{t("separatorText")}</p> : null}
            <CeremonyForm action={`/u2/login/passkey${q}`} csrf={csrf} mode={passkey.autofill ? "autofill" : "authenticate"} label={t("passkeyButtonText")} hideButton={!passkey.button} />
          </>
        ) : null}
        {top ? separator : null}
      </div>
    ) : null;
  return (
    <Layout shell={shell} title={t("pageTitle", { clientName })}>
      <h1 id="page-title">{t("title")}</h1>
      <p class="subtitle">
        {organizationName ? t("organizationDescription", { organizationName, clientName }) : t("description", { clientName })}
      </p>
      {top ? others : null}
      {hasPassword ? (
      <form method="post" action={`/u2/login${q}`} novalidate>
        {error ? <FormError code={error.code} message={text.failure(error)} /> : null}
        <input type="hidden" name="_csrf" value={csrf} />
        <Partial shell={shell} prompt="login" point="form-content-start" />
        <EmailField
          label={t("emailPlaceholder")}
          lockedHint={t("invitationEmailHint")}
          value={email}
          autocomplete={passkey?.autofill ? "username webauthn" : "username"}
          hasFocus={!focusPassword}
          isInvalid={Boolean(error)}
          isLocked={isEmailLocked}
        />
        <PasswordField label={t("passwordPlaceholder")} autocomplete="current-password" hasFocus={focusPassword} isInvalid={Boolean(error)} describedBy={describedBy} />
        {canReset ? (
          <p class="forgot">
            <a href={`/u2/reset-password${q}`}>{t("forgotPasswordText")}</a>
          </p>
        ) : null}
        <Partial shell={shell} prompt="login" point="form-content-end" />
        <Partial shell={shell} prompt="login" point="form-footer-start" />
        <button type="submit">{t("buttonText")}</button>
        <Partial shell={shell} prompt="login" point="form-footer-end" />
      </form>
      ) : null}
      <Partial shell={shell} prompt="login" point="secondary-actions-start" />
      {top ? null : others}
      {/* After the form whatever the layout: the ceremony script finds the fields it binds to. */}
      {passkey ? <CeremonyScripts nonce={shell.nonce} options={passkey.options} /> : null}
      {canSignup ? (
        <p class="alt">
          {t("footerText")} <a href={`/u2/signup${q}`}>{t("footerLinkText")}</a>
        </p>
      ) : null}
      <Partial shell={shell} prompt="login" point="secondary-actions-end" />
    </Layout>
  );
};
