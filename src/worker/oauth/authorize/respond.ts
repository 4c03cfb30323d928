import { html } from "hono/html";
import type { AuthorizeRequest } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { AppContext } from "../../context";
import { pageSecurityHeaders } from "../../login/cookies";
import { samlDeniedResponse } from "../../samlp/respond";

/** Response parameters sent back to the client's redirect_uri. */
export type ResponseParams = Record<string, string | undefined>;

/**
 * Delivers authorization response parameters to the redirect_uri in the requested mode (OAuth 2.0
 * Multiple Response Types §2, Form Post Response Mode §2): query string, fragment, or an auto-submitting
 * form. Registered query parameters of the redirect_uri are kept.
 */
export async function respondToClient(c: AppContext, redirectUri: string, mode: string, params: ResponseParams): Promise<Response> {
  pageSecurityHeaders(c);
  // RFC 9207 §2: every authorization response (errors included) names its issuer, against mix-up attacks.
  const entries = Object.entries({ ...params, iss: c.var.tenant.issuer }).filter((e): e is [string, string] => e[1] !== undefined);
  if (mode === "web_message") return webMessage(c, new URL(redirectUri).origin, Object.fromEntries(entries));
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

/**
 * Refuses an authenticated login in the client's own protocol: an OAuth error in the response mode, or, for
 * a SAML login (whose redirect_uri is the ACS), a signed Responder/RequestDenied SAML response with the
 * RelayState, since an SP reads only a SAMLResponse (saml-profiles-2.0-os §4.1.4.2).
 */
export function refuseToClient(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  error: "access_denied" | "invalid_request" | "login_required",
  description: string,
): Promise<Response> {
  if (request.samlp) return samlDeniedResponse(c, request.samlp, client, description);
  return respondToClient(c, request.redirect_uri, request.response_mode, { error, error_description: description, state: request.state });
}

/** JSON safe inside an inline script: no `</script>`, no HTML comment or line-terminator breakouts. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");

/**
 * The web_message response mode (the reference platform's, used by its SPA SDK for silent authentication):
 * a page that posts `{type: "authorization_response", response}` to the opener or parent, addressed to the
 * registered origin only, and that only this origin may frame.
 */
function webMessage(c: AppContext, origin: string, response: Record<string, string>): Response {
  c.header("Content-Security-Policy", `frame-ancestors ${origin}; base-uri 'none'; object-src 'none'`);
  c.header("X-Frame-Options"); // removed: frame-ancestors names the one origin allowed to frame it
  const message = scriptJson({ type: "authorization_response", response });
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization response</title></head><body><script>
(function () {
  var target = window.opener || window.parent;
  target.postMessage(${message}, ${scriptJson(origin)});
})();
</script></body></html>`;
  return c.html(body, 200) as Response;
}
