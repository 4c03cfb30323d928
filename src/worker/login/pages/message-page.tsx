import type { FC } from "hono/jsx";
import { Layout, type PageShell } from "./layout";

export interface MessagePageProps {
  shell: PageShell;
  title: string;
  message: string;
  /** Stable code for errors (data-error-code), absent on plain notices such as "logged out". */
  code?: string;
  /** A same-site link to start again. */
  retryHref?: string;
  retryLabel?: string;
}

/** The generic error page, and plain notices (logged out, check your email). */
export const MessagePage: FC<MessagePageProps> = ({ shell, title, message, code, retryHref, retryLabel }) => (
  <Layout shell={shell} title={title}>
    <h1 id="page-title">{title}</h1>
    {code ? (
      <p class="error" role="alert" data-error-code={code}>
        {message}
      </p>
    ) : (
      <p class="subtitle">{message}</p>
    )}
    {retryHref ? (
      <p class="alt">
        <a class="button" href={retryHref}>
          {retryLabel ?? "Try again"}
        </a>
      </p>
    ) : null}
  </Layout>
);
