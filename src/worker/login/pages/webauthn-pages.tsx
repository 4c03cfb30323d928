import type { FC } from "hono/jsx";
import { FormError, Layout, type PageShell } from "./layout";
import type { FormFailure } from "./parts";

/** JSON safe inside a `<script type="application/json">` block: no `</script>`, no comment openers. */
export const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");

/** The ceremony's data block and scripts (served by the worker; the nonce lets them run, nothing else can). */
export const CeremonyScripts: FC<{ nonce: string; options: unknown }> = ({ nonce, options }) => (
  <>
    <script type="application/json" id="webauthn-options" dangerouslySetInnerHTML={{ __html: scriptJson(options) }} />
    <script nonce={nonce} src="/u2/assets/webauthn-browser.js" />
    <script nonce={nonce} src="/u2/assets/webauthn-ceremony.js" />
  </>
);

/** The hidden form the ceremony script fills and submits, with the button that starts it. */
export const CeremonyForm: FC<{ action: string; csrf: string; mode: "register" | "authenticate" | "autofill"; label: string; error?: FormFailure; hideButton?: boolean; children?: unknown }> = ({
  action,
  csrf,
  mode,
  label,
  error,
  hideButton,
  children,
}) => (
  <form method="post" action={action} id="webauthn-form" data-mode={mode}>
    {error ? <FormError code={error.code} message={error.message} /> : null}
    <input type="hidden" name="_csrf" value={csrf} />
    <input type="hidden" name="credential" id="webauthn-response" value="" />
    {children}
    <p id="webauthn-status" class="hint" role="status" aria-live="polite" hidden />
    <button type="button" id="webauthn-start" {...(hideButton ? { hidden: true } : {})}>
      {label}
    </button>
  </form>
);

export interface WebAuthnPageProps {
  shell: PageShell;
  query: string;
  csrf: string;
  title: string;
  subtitle: string;
  /** Where the filled form posts. */
  action: string;
  mode: "register" | "authenticate";
  button: string;
  options: unknown;
  error?: FormFailure;
  /** Registration: ask for a name for the credential. */
  askName?: boolean;
  hasAlternatives: boolean;
  /** The passkey offer: a "Not now" that continues the login. */
  skippable?: boolean;
}

/** A security key, platform authenticator or passkey: register one, or verify with one. */
export const WebAuthnPage: FC<WebAuthnPageProps> = (p) => (
  <Layout shell={p.shell} title={p.title}>
    <h1 id="page-title">{p.title}</h1>
    <p class="subtitle">{p.subtitle}</p>
    <CeremonyForm
      action={`${p.action}${p.query}`}
      csrf={p.csrf}
      mode={p.mode}
      label={p.button}
      {...(p.error ? { error: { code: p.error.code, message: p.shell.text.failure(p.error) } } : {})}
    >
      {p.askName ? (
        <div class="field">
          <label for="friendly_name">{p.shell.text.t("mfa-webauthn", "mfa-webauthn-change-key-nickname", "nicknamePlaceholder")}</label>
          <input id="friendly_name" name="friendly_name" type="text" maxlength={64} autocomplete="off" aria-describedby="friendly-hint" />
          <p id="friendly-hint" class="hint">
            {p.shell.text.t("mfa-webauthn", "mfa-webauthn-change-key-nickname", "nicknameHint")}
          </p>
        </div>
      ) : null}
    </CeremonyForm>
    {p.skippable ? (
      <form method="post" action={`/u2/mfa/continue${p.query}`}>
        <input type="hidden" name="_csrf" value={p.csrf} />
        <input type="hidden" name="action" value="skip-passkey" />
        <button type="submit" class="secondary">
          {p.shell.text.t("passkeys", "passkey-enrollment", "skipButtonText")}
        </button>
      </form>
    ) : null}
    {p.hasAlternatives ? (
      <p class="alt">
        <a href={`/u2/mfa/factors${p.query}`}>{p.shell.text.t("mfa", "common", "pickAuthenticatorText")}</a>
      </p>
    ) : null}
    <CeremonyScripts nonce={p.shell.nonce} options={p.options} />
  </Layout>
);
