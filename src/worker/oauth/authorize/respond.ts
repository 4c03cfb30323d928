import { html } from "hono/html";
import type { AppContext } from "../../context";
import { pageSecurityHeaders } from "../../login/cookies";

/** Response parameters sent back to the client's redirect_uri. */
export type ResponseParams = Record<string, string | undefined>;

/**
 * Delivers authorization response parameters to the redirect_uri in the requested mode (OAuth 2.0
 * Multiple Response Types §2, Form Post Response Mode §2): query string, fragment, or an auto-submitting
 * form. Registered query parameters of the redirect_uri are kept.
 */
export async function respondToClient(c: AppContext, redirectUri: string, mode: string, params: ResponseParams): Promise<Response> {
  pageSecurityHeaders(c);
  const entries = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
  if (mode === "form_post") {
    return await c.html(
      html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Submit this form</title></head>
<body onload="document.forms[0].submit()"><form method="post" action="${redirectUri}">${entries.map(
        ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
      )}<noscript><button type="submit">Continue</button></noscript></form></body></html>`,
    );
  }
  const url = new URL(redirectUri);
  if (mode === "fragment") {
    url.hash = new URLSearchParams(entries).toString();
  } else {
    for (const [k, v] of entries) url.searchParams.set(k, v);
  }
  return c.redirect(url.toString(), 302);
}
