import type { FC } from "hono/jsx";
import { EmailField, PhoneField } from "../pages/fields";
import { FormError, Layout, type PageShell } from "../pages/layout";
import type { FormFailure } from "../pages/parts";
import type { PasswordlessStrategy } from "./offer";

interface PasswordlessProps {
  shell: PageShell;
  state: string;
  csrf: string;
  clientName: string;
  connection: PasswordlessStrategy;
  error?: FormFailure;
  /** Whether the page is the login page itself (no other connection): no "Back to log in" link then. */
  isOnlyConnection: boolean;
}

const query = (state: string, connection: PasswordlessStrategy) => `?state=${encodeURIComponent(state)}&connection=${connection}`;

/** Passwordless, first step: the address (or phone number) the one-time code goes to. */
export const PasswordlessStartPage: FC<PasswordlessProps & { identifier?: string }> = (p) => {
  const isEmail = p.connection === "email";
  const { text } = p.shell;
  const t = (id: Parameters<typeof text.t<"login-passwordless", "login-passwordless-identifier">>[2], vars?: Record<string, string>) =>
    text.t("login-passwordless", "login-passwordless-identifier", id, vars);
  return (
    <Layout shell={p.shell} title={t("pageTitle", { clientName: p.clientName })}>
      <h1 id="page-title">{t("title")}</h1>
      <p class="subtitle">{t(isEmail ? "emailDescription" : "smsDescription", { clientName: p.clientName })}</p>
      <form method="post" action={`/u2/passwordless${query(p.state, p.connection)}`} novalidate>
        {p.error ? <FormError code={p.error.code} message={text.failure(p.error)} /> : null}
        <input type="hidden" name="_csrf" value={p.csrf} />
        {isEmail ? (
          <EmailField label={t("emailPlaceholder")} value={p.identifier} autocomplete="email" hasFocus isInvalid={Boolean(p.error)} />
        ) : (
          <PhoneField label={t("phonePlaceholder")} hint={t("phoneHint")} value={p.identifier} isInvalid={Boolean(p.error)} />
        )}
        <button type="submit">{t("buttonText")}</button>
      </form>
      {p.isOnlyConnection ? null : (
        <p class="alt">
          <a href={`/u2/login?state=${encodeURIComponent(p.state)}`}>{t("otherMethodsLinkText")}</a>
        </p>
      )}
    </Layout>
  );
};

/** Passwordless, second step: the six-digit code that was sent. */
export const PasswordlessCodePage: FC<PasswordlessProps & { identifier: string }> = (p) => {
  const { text } = p.shell;
  // The reference platform's screens: one per connection, with the same text ids.
  const screen = p.connection === "email" ? "login-passwordless-email-code" : "login-passwordless-sms-otp";
  const t = (id: Parameters<typeof text.t<"login-passwordless", "login-passwordless-email-code">>[2], vars?: Record<string, string>) =>
    text.t("login-passwordless", screen, id, vars);
  return (
    <Layout shell={p.shell} title={t("pageTitle", { clientName: p.clientName })}>
      <h1 id="page-title">{t("title")}</h1>
      <p class="subtitle">{t("description", { identifier: p.identifier })}</p>
      <form method="post" action={`/u2/passwordless/code${query(p.state, p.connection)}`} novalidate>
        {p.error ? <FormError code={p.error.code} message={text.failure(p.error)} /> : null}
        <input type="hidden" name="_csrf" value={p.csrf} />
        <input type="hidden" name="identifier" value={p.identifier} />
        <div class="field">
          <label for="code">{t("codePlaceholder")}</label>
          <input
            id="code"
            name="code"
            type="text"
            autocomplete="one-time-code"
            inputmode="numeric"
            pattern="[0-9]{6}"
            maxlength={6}
            required
            autofocus
            aria-invalid={p.error ? "true" : undefined}
            aria-describedby={p.error ? "form-error" : undefined}
          />
        </div>
        <button type="submit">{t("buttonText")}</button>
      </form>
      <p class="alt">
        <a href={`/u2/passwordless${query(p.state, p.connection)}`}>{t("resendActionText")}</a>
      </p>
    </Layout>
  );
};
