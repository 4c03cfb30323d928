import { html } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSX } from "hono/jsx/jsx-runtime";
import { randomToken } from "../../shared/crypto/random";
import { textsFor } from "../../shared/i18n/catalogue";
import { negotiateLocale } from "../../shared/i18n/negotiate";
import { PageText } from "../../shared/i18n/page-text";
import type { TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";
import { pageBranding } from "./branding";
import { promptOf, renderInTemplate } from "./theme/page-template";
import { pageSecurityHeaders } from "./cookies";
import { ErrorPage } from "./pages/error-page";
import { MessagePage, type MessagePageProps } from "./pages/message-page";
import { tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import type { PageShell } from "./pages/layout";

/**
 * What every page shares: validated branding, a fresh CSP nonce, whose page it is, the page template, and its
 * language (issue 29 point 3): the login transaction's `ui_locales` (else the query's), the browser's
 * Accept-Language against the tenant's `enabled_locales`, else the tenant's first enabled locale.
 * The texts come from a per-(tenant, configuration version, language) cache: no merge per request.
 */
export function shellFor(c: AppContext, config: TenantConfig | null, brandName?: string, uiLocales?: string): PageShell {
  const lang = negotiateLocale({
    uiLocales: uiLocales ?? c.req.query("ui_locales"),
    acceptLanguage: c.req.header("accept-language"),
    enabledLocales: config?.settings.enabled_locales,
  });
  const texts = textsFor(lang, config?.prompts?.custom_text, config ? `${config.tenantId}:${config.version}` : undefined);
  const text = new PageText(texts, brandName ? { clientName: brandName } : {});
  const partials = config?.prompts?.partials;
  const branding = pageBranding(config);
  const shell: PageShell = { branding, nonce: randomToken(16), text, ...(partials ? { partials } : {}), ...(brandName ? { brandName } : {}) };
  const source = config?.loginTemplate;
  if (typeof source === "string" && source) {
    const { friendly_name } = config.settings as { friendly_name?: string };
    // The reference's template variables (locale and prompt are added per page by sendPage).
    const vars = {
      application: brandName ? { name: brandName } : {},
      branding: { logo_url: branding.logoUrl ?? undefined, colors: { primary: branding.primary, page_background: branding.pageBackground } },
      tenant: { name: config.tenantId, friendly_name: typeof friendly_name === "string" ? friendly_name : config.tenantId },
    };
    shell.template = { source, vars };
  }
  return shell;
}

/**
 * Sends a server-rendered page with the login pages' headers: no framing, no caching (pageSecurityHeaders),
 * and a CSP that allows nothing but the page's own nonce-tagged style sheet and http(s) images (the logo).
 * No form-action restriction: a successful login POST redirects to the client's origin.
 */
export function sendPage(
  c: AppContext,
  shell: PageShell,
  /** The page, or its whole document already made by {@link pageDocument} (pages/prerendered.ts). */
  page: JSX.Element | string,
  status: ContentfulStatusCode = 200,
  options: { scripts?: boolean } = {},
): Response | Promise<Response> {
  pageSecurityHeaders(c);
  // Pages with a WebAuthn ceremony run scripts, and only those carrying the page's nonce.
  const scripts = options.scripts ? ` script-src 'nonce-${shell.nonce}';` : "";
  // A theme's font file is allowed from its one origin (an https origin, theme-css.ts).
  const fonts = shell.branding.fontOrigin ? ` font-src ${shell.branding.fontOrigin};` : "";
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'nonce-${shell.nonce}';${scripts}${fonts} img-src https: http:; frame-ancestors 'none'; base-uri 'none'`,
  );
  if (typeof page === "string") return c.html(page, status);
  if (shell.template) return pageDocument(c, shell, page).then((document) => c.html(document, status));
  return c.html(html`<!doctype html>${page}`, status);
}

/** The page's whole document: inside the tenant's page template when it has one; the plain page when the template cannot render. */
export async function pageDocument(c: AppContext, shell: PageShell, page: JSX.Element): Promise<string> {
  const plain = await page.toString();
  if (!shell.template) return `<!doctype html>${plain}`;
  const vars = { ...shell.template.vars, prompt: promptOf(c.req.path) };
  return renderInTemplate(shell.template.source, plain, vars) ?? `<!doctype html>${plain}`;
}

/** The generic error (or notice) page. */
export function sendMessage(
  c: AppContext,
  shell: PageShell,
  props: Omit<MessagePageProps, "shell">,
  status: ContentfulStatusCode,
): Response | Promise<Response> {
  return sendPage(c, shell, <MessagePage shell={shell} {...props} />, status);
}

/** The one wording for an unknown, expired or already completed login transaction. */
export const EXPIRED_LOGIN = {
  code: "INVALID_LOGIN_SESSION",
  title: "Login link expired",
  message: "This login link has expired or is invalid",
} as const;

/**
 * The HTML error page of a request that cannot go back to the application (issue 29 point 6), branded as
 * the tenant's pages when the tenant is known. The trace id is logged with the error so an operator finds
 * what the user reports.
 */
export async function sendErrorPage(c: AppContext, status: ContentfulStatusCode, error: string, description: string): Promise<Response> {
  let config: TenantConfig | null = null;
  const tenantId = c.get("tenant")?.id;
  if (tenantId) config = await tenantConfig(tenantId, tenantObject(c.env, tenantId), c.var.settings).catch(() => null);
  // Cloudflare's ray id when it is one (a client could send any header value), else a fresh id.
  const ray = c.req.header("cf-ray") ?? "";
  const traceId = /^[0-9a-f]{16}(?:-[A-Z]{3})?$/.test(ray) ? ray : randomToken(12);
  console.warn("error page", traceId, status, error, c.req.method, c.req.path);
  const shell = shellFor(c, config);
  c.header("X-Trace-Id", traceId);
  return sendPage(c, shell, <ErrorPage shell={shell} error={error} description={description} traceId={traceId} />, status);
}
