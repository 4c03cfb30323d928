import type { FC } from "hono/jsx";
import { Layout, type PageShell } from "./layout";

export interface ErrorPageProps {
  shell: PageShell;
  /** The OAuth error code (`invalid_request`, `unauthorized_client`, `server_error`, ...). */
  error: string;
  description: string;
  /** The id an operator finds this failure under in the logs (the reference platform's "tracking id"). */
  traceId: string;
}

/**
 * Issue 29 point 6: what a browser sees when a request cannot go back to the application (unknown client,
 * unregistered redirect_uri, broken state): the error, its description and a trace id, as the reference
 * platform's universal-login error page shows them. No link back: the application is what is unknown.
 */
export const ErrorPage: FC<ErrorPageProps> = ({ shell, error, description, traceId }) => {
  const t = (id: Parameters<typeof shell.text.t<"common", "error-page">>[2]) => shell.text.t("common", "error-page", id);
  return (
  <Layout shell={shell} title={t("title")}>
    <h1 id="page-title">{t("title")}</h1>
    <p class="error" role="alert" data-error-code={error}>
      {description}
    </p>
    <p class="subtitle">{t("description")}</p>
    <dl class="details">
      <dt>{t("errorLabel")}</dt>
      <dd>
        <code id="error-code">{error}</code>
      </dd>
      <dt>{t("traceIdLabel")}</dt>
      <dd>
        <code id="trace-id">{traceId}</code>
      </dd>
    </dl>
  </Layout>
  );
};
