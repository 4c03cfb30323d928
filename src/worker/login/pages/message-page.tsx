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
  /** An error's `common/errors` text id when it is not its code's kebab case, and the text's placeholders. */
  text?: string;
  vars?: Readonly<Record<string, string | number | undefined>>;
}

/**
 * The generic error page, and plain notices (logged out, check your email). An error's title and message
 * come from the catalogue by its code (`text` names another text id) when it has them; a notice's texts
 * are given in the page's language by the caller.
 */
export const MessagePage: FC<MessagePageProps> = (props) => {
  const { shell, code, retryHref, retryLabel } = props;
  const failure = code ? { code, message: props.message, ...(props.text ? { text: props.text } : {}), ...(props.vars ? { vars: props.vars } : {}) } : null;
  const title = failure ? shell.text.failureTitle(failure) : props.title;
  const message = failure ? shell.text.failure(failure) : props.message;
  return (
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
          {retryLabel ?? shell.text.t("common", "common", "tryAgainText")}
        </a>
      </p>
    ) : null}
  </Layout>
  );
};
