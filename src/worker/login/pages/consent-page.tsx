import type { FC } from "hono/jsx";
import { Layout, type PageShell } from "./layout";

export interface ConsentPageProps {
  shell: PageShell;
  state: string;
  csrf: string;
  clientName: string;
  /** Who is asked (their email or name). */
  userLabel: string;
  scopes: { value: string; description: string }[];
}

/**
 * The consent page (issue 29 point 2): what the application asks for, in the API's own words, and two
 * buttons posting the decision; "Decline" answers the application `access_denied`.
 */
export const ConsentPage: FC<ConsentPageProps> = ({ shell, state, csrf, clientName, userLabel, scopes }) => {
  const t = (id: Parameters<typeof shell.text.t<"consent", "consent">>[2]) => shell.text.t("consent", "consent", id, { clientName, userName: userLabel });
  return (
  <Layout shell={shell} title={t("pageTitle")}>
    <h1 id="page-title">{t("title")}</h1>
    <p class="subtitle">{t("description")}</p>
    {scopes.length ? (
      <>
        <h2 id="scopes-heading">{t("scopesTitle")}</h2>
        <ul id="consent-scopes" class="scopes" aria-labelledby="scopes-heading">
          {scopes.map((s) => (
            <li data-scope={s.value}>{s.description}</li>
          ))}
        </ul>
      </>
    ) : (
      <p>{t("identityOnlyText")}</p>
    )}
    <form method="post" action={`/u2/consent?state=${encodeURIComponent(state)}`}>
      <input type="hidden" name="_csrf" value={csrf} />
      <button type="submit" name="action" value="accept">
        {t("acceptButtonText")}
      </button>
      <button type="submit" name="action" value="deny" class="secondary">
        {t("declineButtonText")}
      </button>
    </form>
  </Layout>
  );
};
