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
  const { text } = shell;
  const t = (id: Parameters<typeof text.t<"reset-password", "reset-password-request">>[2], vars?: Record<string, string>) =>
    text.t("reset-password", "reset-password-request", id, vars);
  return (
    <Layout shell={shell} title={t("pageTitle", { clientName })}>
      <h1 id="page-title">{t("title")}</h1>
      <p class="subtitle">{t("description")}</p>
      <form method="post" action={`/u2/reset-password${q}`} novalidate>
        {error ? <FormError code={error.code} message={text.failure(error)} /> : null}
        <input type="hidden" name="_csrf" value={csrf} />
        <EmailField label={t("emailPlaceholder")} value={email} autocomplete="email" hasFocus isInvalid={Boolean(error)} />
        <button type="submit">{t("buttonText")}</button>
      </form>
      <p class="alt">
        <a href={`/u2/login${q}`}>{t("backToLoginLinkText")}</a>
      </p>
    </Layout>
  );
};

export interface NewPasswordPageProps {
  shell: PageShell;
  /** The link's secret, posted back with the form (the ticket is the proof; no session exists here). */
  ticket: string;
  email: string;
  /** The connection's rule, stated up front: its length and how many character classes (0: none). */
  policy: { minLength: number; classes: number };
  error?: FormFailure & { field?: "password" | "password_confirm" };
}

/** The new password and its confirmation, under the connection's policy. */
export const NewPasswordPage: FC<NewPasswordPageProps> = ({ shell, ticket, email, policy, error }) => {
  const confirmInvalid = error?.field === "password_confirm";
  const passwordInvalid = error !== undefined && !confirmInvalid;
  const { text } = shell;
  const t = (id: Parameters<typeof text.t<"reset-password", "reset-password">>[2], vars?: Record<string, string>) => text.t("reset-password", "reset-password", id, vars);
  return (
    <Layout shell={shell} title={t("pageTitle")}>
      <h1 id="page-title">{t("title")}</h1>
      <p class="subtitle">{t("description", { email })}</p>
      <form method="post" action="/u2/reset-password/change" novalidate>
        {error ? <FormError code={error.code} message={text.failure(error)} /> : null}
        <input type="hidden" name="ticket" value={ticket} />
        {/* Lets password managers file the new password under the right account. */}
        <input type="hidden" name="username" autocomplete="username" value={email} />
        <div class="field">
          <label for="password">{t("passwordPlaceholder")}</label>
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
            {policy.classes > 0
              ? t("passwordPolicyComplexity", { minLength: String(policy.minLength), count: String(policy.classes) })
              : t("passwordPolicy", { minLength: String(policy.minLength) })}
          </p>
        </div>
        <div class="field">
          <label for="password_confirm">{t("reEnterpasswordPlaceholder")}</label>
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
        <button type="submit">{t("buttonText")}</button>
      </form>
    </Layout>
  );
};
