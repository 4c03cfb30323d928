import type { FC } from "hono/jsx";
import { FormError, Layout, type PageShell } from "./layout";
import type { FormFailure } from "./login-page";

/** The user-code entry of /activate (RFC 8628 §3.3). */
export const ActivatePage: FC<{ shell: PageShell; csrf: string; userCode?: string; error?: FormFailure }> = ({ shell, csrf, userCode, error }) => {
  const t = (id: Parameters<typeof shell.text.t<"device-flow", "device-code-activation">>[2]) => shell.text.t("device-flow", "device-code-activation", id);
  return (
  <Layout shell={shell} title={t("pageTitle")}>
    <h1 id="page-title">{t("title")}</h1>
    <p class="subtitle">{t("description")}</p>
    {error ? <FormError code={error.code} message={shell.text.failure(error)} /> : null}
    <form method="post" action="/activate" novalidate>
      <input type="hidden" name="_csrf" value={csrf} />
      <div class="field">
        <label for="user_code">{t("placeholder")}</label>
        <input
          id="user_code"
          name="user_code"
          type="text"
          autocomplete="one-time-code"
          autocapitalize="characters"
          spellcheck={false}
          required
          autofocus
          value={userCode ?? ""}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? "form-error" : undefined}
        />
      </div>
      <button type="submit">{t("buttonText")}</button>
    </form>
  </Layout>
  );
};

/**
 * The confirmation screen (RFC 8628 §5.4: the user checks what they are granting before logging in): the
 * application's name, the code and the scopes it asks for.
 */
export const ConfirmDevicePage: FC<{ shell: PageShell; csrf: string; userCode: string; clientName: string; scopes: string[]; audience: string | null }> = ({
  shell,
  csrf,
  userCode,
  clientName,
  scopes,
  audience,
}) => {
  const t = (id: Parameters<typeof shell.text.t<"device-flow", "device-code-confirmation">>[2]) => shell.text.t("device-flow", "device-code-confirmation", id, { clientName });
  return (
  <Layout shell={shell} title={t("pageTitle")}>
    <h1 id="page-title">{t("title")}</h1>
    <p class="subtitle">
      {t("description")} <strong id="user-code">{userCode}</strong>
    </p>
    <p>{t("scopesText")}</p>
    <ul id="device-scopes">
      {scopes.map((scope) => (
        <li>
          <code>{scope}</code>
        </li>
      ))}
    </ul>
    {audience ? (
      <p>
        {t("audienceLabel")} <code id="device-audience">{audience}</code>
      </p>
    ) : null}
    <form method="post" action="/activate/confirm" class="field">
      <input type="hidden" name="_csrf" value={csrf} />
      <input type="hidden" name="user_code" value={userCode} />
      <input type="hidden" name="action" value="confirm" />
      <button type="submit">{t("confirmButtonText")}</button>
    </form>
    <form method="post" action="/activate/confirm">
      <input type="hidden" name="_csrf" value={csrf} />
      <input type="hidden" name="user_code" value={userCode} />
      <input type="hidden" name="action" value="deny" />
      <button type="submit" class="secondary">
        {t("cancelButtonText")}
      </button>
    </form>
  </Layout>
  );
};
