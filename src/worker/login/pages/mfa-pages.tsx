import type { FC } from "hono/jsx";
import { FormError, Layout, type PageShell } from "./layout";
import { PhoneField } from "./fields";
import type { FormFailure } from "./login-page";

/**
 * The MFA screens (SPEC §4.1: /u2/mfa/*): branded like the login pages, one task per screen, every input
 * labelled, errors announced (role=alert) and tied to their field, focus on the field to fill.
 */

interface Base {
  shell: PageShell;
  /** The query of every /u2/mfa link: `?state=<transaction id>`, plus `&tenant_id=` when the query chose the tenant. */
  query: string;
  csrf: string;
  error?: FormFailure;
}

/** A one-time code field: numeric keyboard, the browser's one-time-code autofill, the hint read with it. */
export const CodeField: FC<{ label: string; hint: string; isInvalid: boolean; name?: string; numeric?: boolean }> = ({ label, hint, isInvalid, name = "code", numeric = true }) => (
  <div class="field">
    <label for="code">{label}</label>
    <input
      id="code"
      name={name}
      type="text"
      inputmode={numeric ? "numeric" : "text"}
      autocomplete="one-time-code"
      autocapitalize="none"
      spellcheck={false}
      maxlength={numeric ? 7 : 32}
      required
      autofocus
      aria-invalid={isInvalid ? "true" : undefined}
      aria-describedby={isInvalid ? "code-hint form-error" : "code-hint"}
    />
    <p id="code-hint" class="hint">
      {hint}
    </p>
  </div>
);

/** Links to the other ways through this step (another factor, a recovery code). */
export const Alternatives: FC<{ shell: PageShell; query: string; show: boolean }> = ({ shell, query, show }) =>
  show ? (
    <p class="alt">
      <a href={`/u2/mfa/factors${query}`}>{shell.text.t("mfa", "common", "pickAuthenticatorText")}</a>
    </p>
  ) : null;

export interface TotpEnrollmentProps extends Base {
  qrSvg: string;
  /** The base32 secret, grouped by four. */
  secret: string;
  hasAlternatives: boolean;
}

export const TotpEnrollmentPage: FC<TotpEnrollmentProps> = ({ shell, query, csrf, error, qrSvg, secret, hasAlternatives }) => {
  const t = (id: Parameters<typeof shell.text.t<"mfa-otp", "mfa-otp-enrollment-qr">>[2]) => shell.text.t("mfa-otp", "mfa-otp-enrollment-qr", id);
  return (
  <Layout shell={shell} title={t("pageTitle")}>
    <h1 id="page-title">{t("title")}</h1>
    <p class="subtitle">{t("description")}</p>
    {/* Safe: qrSvg is built by qr.ts from path data only; its label is escaped there. */}
    <div class="qr" dangerouslySetInnerHTML={{ __html: qrSvg }} />
    <p class="hint">{t("codeEnrollmentText")}</p>
    <p class="secret">
      <code id="totp-secret">{secret}</code>
    </p>
    <form method="post" action={`/u2/mfa/totp-enrollment${query}`} novalidate>
      {error ? <FormError code={error.code} message={shell.text.failure(error)} /> : null}
      <input type="hidden" name="_csrf" value={csrf} />
      <CodeField label={t("placeholder")} hint={t("hint")} isInvalid={Boolean(error)} />
      <button type="submit">{shell.text.t("mfa", "common", "buttonText")}</button>
    </form>
    <Alternatives shell={shell} query={query} show={hasAlternatives} />
  </Layout>
  );
};

export interface CodeChallengeProps extends Base {
  /** Where the form posts (`/u2/mfa/totp-challenge` ...). */
  action: string;
  title: string;
  subtitle: string;
  label: string;
  hint: string;
  numeric?: boolean;
  hasAlternatives: boolean;
  /** A second form (resend an SMS code). */
  resend?: boolean;
}

/** Enter a code: TOTP, SMS, or a recovery code. */
export const CodeChallengePage: FC<CodeChallengeProps> = (p) => (
  <Layout shell={p.shell} title={p.title}>
    <h1 id="page-title">{p.title}</h1>
    <p class="subtitle">{p.subtitle}</p>
    <form method="post" action={`${p.action}${p.query}`} novalidate>
      {p.error ? <FormError code={p.error.code} message={p.shell.text.failure(p.error)} /> : null}
      <input type="hidden" name="_csrf" value={p.csrf} />
      <CodeField label={p.label} hint={p.hint} isInvalid={Boolean(p.error)} numeric={p.numeric ?? true} />
      <button type="submit">{p.shell.text.t("mfa", "common", "buttonText")}</button>
    </form>
    {p.resend ? (
      <form method="post" action={`${p.action}${p.query}`} class="alt">
        <input type="hidden" name="_csrf" value={p.csrf} />
        <input type="hidden" name="action" value="resend" />
        <button type="submit" class="link">
          {p.shell.text.t("mfa-sms", "mfa-sms-challenge", "resendActionText")}
        </button>
      </form>
    ) : null}
    <Alternatives shell={p.shell} query={p.query} show={p.hasAlternatives} />
  </Layout>
);

export interface PhoneEnrollmentProps extends Base {
  phone?: string;
  hasAlternatives: boolean;
}

export const PhoneEnrollmentPage: FC<PhoneEnrollmentProps> = ({ shell, query, csrf, error, phone, hasAlternatives }) => {
  const t = (id: Parameters<typeof shell.text.t<"mfa-sms", "mfa-sms-enrollment">>[2]) => shell.text.t("mfa-sms", "mfa-sms-enrollment", id);
  return (
  <Layout shell={shell} title={t("pageTitle")}>
    <h1 id="page-title">{t("title")}</h1>
    <p class="subtitle">{t("description")}</p>
    <form method="post" action={`/u2/mfa/phone-enrollment${query}`} novalidate>
      {error ? <FormError code={error.code} message={shell.text.failure(error)} /> : null}
      <input type="hidden" name="_csrf" value={csrf} />
      <PhoneField label={t("placeholder")} hint={t("hint")} value={phone} isInvalid={Boolean(error)} />
      <button type="submit">{t("buttonText")}</button>
    </form>
    <Alternatives shell={shell} query={query} show={hasAlternatives} />
  </Layout>
  );
};

/** One choice on the factor screen. */
export interface FactorChoice {
  href: string;
  label: string;
  description: string;
}

export const FactorChoicePage: FC<{ shell: PageShell; title: string; subtitle: string; choices: FactorChoice[] }> = ({ shell, title, subtitle, choices }) => (
  <Layout shell={shell} title={title}>
    <h1 id="page-title">{title}</h1>
    <p class="subtitle">{subtitle}</p>
    <ul class="choices">
      {choices.map((choice) => (
        <li>
          <a class="choice" href={choice.href}>
            <span class="choice-label">{choice.label}</span>
            <span class="hint">{choice.description}</span>
          </a>
        </li>
      ))}
    </ul>
  </Layout>
);

export const RecoveryCodesPage: FC<{ shell: PageShell; query: string; csrf: string; codes: string[]; regenerated: boolean }> = ({ shell, query, csrf, codes, regenerated }) => {
  const t = (id: Parameters<typeof shell.text.t<"mfa-recovery-code", "mfa-recovery-code-enrollment">>[2]) => shell.text.t("mfa-recovery-code", "mfa-recovery-code-enrollment", id);
  return (
  <Layout shell={shell} title={t("title")}>
    <h1 id="page-title">{t("title")}</h1>
    <p class="subtitle">
      {regenerated ? t("regeneratedDescription") : t("description")} {t("storeSafelyText")}
    </p>
    <ol class="codes" id="recovery-codes" aria-label={t("listLabel")}>
      {codes.map((code) => (
        <li>
          <code>{code}</code>
        </li>
      ))}
    </ol>
    <form method="post" action={`/u2/mfa/continue${query}`}>
      <input type="hidden" name="_csrf" value={csrf} />
      <button type="submit">{t("buttonText")}</button>
    </form>
  </Layout>
  );
};
