import type { FC } from "hono/jsx";
import { FormError, Layout, type PageShell } from "./layout";
import type { FormFailure } from "./login-page";

export interface OrganizationPageProps {
  shell: PageShell;
  state: string;
  csrf: string;
  clientName: string;
  /** Post-login prompt: the user's organizations to choose from. Absent: the pre-login name prompt. */
  choices?: Array<{ id: string; label: string }>;
  name?: string;
  error?: FormFailure;
}

/**
 * The organization prompt (issue 11 point 5): before login, the organization's name (the reference
 * platform's `pre_login_prompt`); after login, one of the user's organizations (`post_login_prompt`).
 */
export const OrganizationPage: FC<OrganizationPageProps> = ({ shell, state, csrf, clientName, choices, name, error }) => {
  const action = `/u2/organization?state=${encodeURIComponent(state)}`;
  const { text } = shell;
  const screen = choices ? "organization-picker" : "organization-selection";
  const t = (id: "pageTitle" | "title" | "description") => text.t("organizations", screen, id, { clientName });
  const ts = (id: Parameters<typeof text.t<"organizations", "organization-selection">>[2]) => text.t("organizations", "organization-selection", id);
  return (
    <Layout shell={shell} title={t("pageTitle")}>
      <h1 id="page-title">{t("title")}</h1>
      <p class="subtitle">{t("description")}</p>
      {error ? <FormError code={error.code} message={text.failure(error)} /> : null}
      {choices ? (
        choices.map((choice) => (
          <form method="post" action={action} class="field">
            <input type="hidden" name="_csrf" value={csrf} />
            <input type="hidden" name="organization" value={choice.id} />
            <button type="submit">{choice.label}</button>
          </form>
        ))
      ) : (
        <form method="post" action={action} novalidate>
          <input type="hidden" name="_csrf" value={csrf} />
          <div class="field">
            <label for="organization">{ts("placeholder")}</label>
            <input
              id="organization"
              name="organization"
              type="text"
              autocomplete="organization"
              autocapitalize="none"
              spellcheck={false}
              required
              autofocus
              value={name ?? ""}
              aria-invalid={error ? "true" : undefined}
              aria-describedby={error ? "form-error" : undefined}
            />
          </div>
          <button type="submit">{ts("buttonText")}</button>
        </form>
      )}
    </Layout>
  );
};
