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
  return (
    <Layout shell={shell} title={`Organization | ${clientName}`}>
      <h1 id="page-title">{choices ? "Choose your organization" : "Enter your organization"}</h1>
      <p class="subtitle">{`${clientName} is used through an organization.`}</p>
      {error ? <FormError code={error.code} message={error.message} /> : null}
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
            <label for="organization">Organization name</label>
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
          <button type="submit">Continue</button>
        </form>
      )}
    </Layout>
  );
};
