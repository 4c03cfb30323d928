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
export const ErrorPage: FC<ErrorPageProps> = ({ shell, error, description, traceId }) => (
  <Layout shell={shell} title="Something went wrong">
    <h1 id="page-title">Something went wrong</h1>
    <p class="error" role="alert" data-error-code={error}>
      {description}
    </p>
    <p class="subtitle">The application that sent you here could not be told about it. Go back to it and try again, or tell its support the details below.</p>
    <dl class="details">
      <dt>Error</dt>
      <dd>
        <code id="error-code">{error}</code>
      </dd>
      <dt>Trace ID</dt>
      <dd>
        <code id="trace-id">{traceId}</code>
      </dd>
    </dl>
  </Layout>
);
