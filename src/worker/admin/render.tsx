import { can } from "./grants";
import { html } from "hono/html";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CONSOLE_PATH } from "../../shared/console";
import { randomToken } from "../../shared/crypto/random";
import type { ConsoleContext } from "./context";
import { Layout, type Shell } from "./pages/layout";

/** A fresh shell for this request: the nonce, the operator (when signed in), the API calls made so far. */
export function shellOf(c: ConsoleContext, title: string, extra: Partial<Shell> = {}): Shell {
  const operator = c.var.operator;
  return {
    nonce: randomToken(16),
    title,
    ...(operator ? { operator: { name: operator.name, email: operator.email, csrf: operator.csrf } } : {}),
    ...(c.var.api ? { calls: c.var.api.calls } : {}),
    ...(c.var.api && !can(c, "read:clients") && can(c, "read:tenants") ? { detailsOnly: true } : {}),
    ...extra,
  };
}

/**
 * Sends a console page: strict CSP with the page's nonce (styles and the console's own module scripts
 * only), forms only to this origin, no framing, no caching.
 */
export function sendConsolePage(c: ConsoleContext, shell: Shell, body: JSX.Element, status: ContentfulStatusCode = 200): Response | Promise<Response> {
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'nonce-${shell.nonce}'; script-src 'nonce-${shell.nonce}' 'strict-dynamic'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Cache-Control", "no-store");
  return c.html(html`<!doctype html>${(<Layout shell={shell}>{body}</Layout>)}`, status);
}

/** An error page (refused CSRF, failed login, an API refusal with nothing else to show). */
export function sendConsoleError(c: ConsoleContext, status: ContentfulStatusCode, title: string, message: string, retry?: string): Response | Promise<Response> {
  const shell = shellOf(c, title);
  return sendConsolePage(
    c,
    shell,
    <div class="center">
      <h1>{title}</h1>
      <p class="error" role="alert">
        {message}
      </p>
      <p>
        <a href={retry ?? CONSOLE_PATH}>{retry ? "Try again" : "Back to the console"}</a>
      </p>
    </div>,
    status,
  );
}

/** A notice page (logged out). */
export function sendConsoleMessage(c: ConsoleContext, title: string, message: string, link: string, linkText: string): Response | Promise<Response> {
  const shell = shellOf(c, title);
  return sendConsolePage(
    c,
    shell,
    <div class="center">
      <h1>{title}</h1>
      <p>{message}</p>
      <p>
        <a href={link}>{linkText}</a>
      </p>
    </div>,
  );
}
