import type { Child, FC } from "hono/jsx";
import type { PageText } from "../../../shared/i18n/page-text";
import type { PageBranding } from "../branding";

/**
 * Fixed style sheet, driven by custom properties: the defaults below, the branding's colours (`pageBranding()`,
 * validated `#rgb`/`#rrggbb`) and the theme's values (theme-css.ts, each checked), never raw tenant strings.
 * The focus ring is dark on the default white card whatever the brand colour (a theme may set
 * `base_focus_color`), so keyboard focus stays visible.
 */
const STYLE = `
:root{--gh-page-align:center;--gh-page-image:none;--gh-body-text:#1f2328;--gh-muted:#57606a;--gh-body-weight:400;
  --gh-font-size:16px;--gh-body-size:1;--gh-font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;--gh-widget-bg:#fff;
  --gh-widget-border-w:0;--gh-widget-border:#d0d7de;--gh-widget-radius:12px;
  --gh-widget-shadow:0 1px 3px rgba(0,0,0,.12),0 8px 24px rgba(0,0,0,.06);--gh-logo-height:52px;--gh-header:#1f2328;
  --gh-header-align:center;--gh-title-size:1.5;--gh-title-weight:700;--gh-subtitle-size:1;--gh-subtitle-weight:400;
  --gh-label:#1f2328;--gh-label-size:1;--gh-label-weight:600;--gh-input-text:#1f2328;--gh-input-bg:#fff;
  --gh-input-border:#8c959f;--gh-input-border-w:1px;--gh-input-radius:6px;--gh-error:#cf222e;--gh-button-radius:6px;
  --gh-button-border-w:0;--gh-button-size:1;--gh-button-weight:600;--gh-link-decoration:underline;--gh-link-weight:400;
  --gh-link-size:1;--gh-focus:#1f2328}
*,*::before,*::after{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:var(--gh-page-align);padding:48px 16px;
  background:var(--gh-page-bg) var(--gh-page-image) center/cover no-repeat;color:var(--gh-body-text);
  font:var(--gh-body-weight) calc(var(--gh-font-size) * var(--gh-body-size))/1.5 var(--gh-font)}
main{width:100%;max-width:400px;background:var(--gh-widget-bg);border:var(--gh-widget-border-w) solid var(--gh-widget-border);
  border-radius:var(--gh-widget-radius);padding:32px 28px;box-shadow:var(--gh-widget-shadow)}
.logo{display:block;max-height:var(--gh-logo-height);max-width:100%;margin:0 auto 20px}
h1{font-size:calc(var(--gh-title-size) * 1em);font-weight:var(--gh-title-weight);margin:0 0 4px;text-align:var(--gh-header-align);color:var(--gh-header)}
.subtitle{margin:0 0 24px;text-align:var(--gh-header-align);color:var(--gh-muted);font-size:calc(var(--gh-subtitle-size) * 1em);
  font-weight:var(--gh-subtitle-weight)}
.field{margin:0 0 16px}
label{display:block;font-weight:var(--gh-label-weight);font-size:calc(var(--gh-label-size) * 1em);color:var(--gh-label);margin:0 0 6px}
input{width:100%;padding:10px 12px;font:inherit;color:var(--gh-input-text);border:var(--gh-input-border-w) solid var(--gh-input-border);
  border-radius:var(--gh-input-radius);background:var(--gh-input-bg)}
input[aria-invalid="true"]{border-color:var(--gh-error)}
.hint{margin:6px 0 0;font-size:.875rem;color:var(--gh-muted)}
.error{margin:0 0 16px;padding:10px 12px;border-radius:6px;background:#ffebe9;border:1px solid var(--gh-error);color:#82071e}
button,.button{display:block;width:100%;padding:11px 16px;border:var(--gh-button-border-w) solid var(--gh-primary);
  border-radius:var(--gh-button-radius);font:inherit;font-size:calc(var(--gh-button-size) * 1em);font-weight:var(--gh-button-weight);
  text-align:center;text-decoration:none;cursor:pointer;background:var(--gh-primary);color:var(--gh-on-primary)}
button:hover,.button:hover{background:var(--gh-hover);border-color:var(--gh-hover)}
a{color:var(--gh-link);text-decoration:var(--gh-link-decoration);font-weight:var(--gh-link-weight);font-size:calc(var(--gh-link-size) * 1em)}
.alt{margin:20px 0 0;text-align:center}
.forgot{margin:-8px 0 16px;font-size:.875rem}
:focus-visible{outline:3px solid var(--gh-focus);outline-offset:2px}
input:focus-visible{outline-offset:0}
table{width:100%;border-collapse:collapse;font-size:.875rem;margin:0 0 20px}
th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid #d0d7de;word-break:break-all}
th{width:35%;word-break:normal}
h2{font-size:1.1rem;margin:24px 0 8px}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f8fa;padding:12px;border-radius:6px;font-size:.8rem}
main.wide{max-width:720px}
.scopes{margin:0 0 20px;padding-left:1.25em}
.scopes li{margin:0 0 6px}
.details{display:grid;grid-template-columns:max-content 1fr;gap:4px 12px;margin:0;font-size:.875rem}
.details dt{font-weight:600}
.details dd{margin:0;word-break:break-all}
.qr{display:flex;justify-content:center;margin:0 0 16px}
.secret{text-align:center;margin:0 0 20px}
.secret code{font:600 1rem/1.6 ui-monospace,SFMono-Regular,Menlo,monospace;letter-spacing:.05em;word-break:break-all}
.choices{list-style:none;margin:0;padding:0}
.choices li{margin:0 0 12px}
.choice{display:block;padding:12px 14px;border:1px solid #8c959f;border-radius:6px;color:inherit;text-decoration:none}
.choice:hover{border-color:var(--gh-primary)}
.choice-label{display:block;font-weight:600;color:var(--gh-link)}
.codes{columns:2;margin:0 0 20px;padding-left:1.5em;font:1rem/1.8 ui-monospace,SFMono-Regular,Menlo,monospace}
button.link{background:none;color:var(--gh-link);text-decoration:underline;width:auto;display:inline;padding:0;font-weight:400;border:0}
button.secondary,.button.secondary{background:var(--gh-widget-bg);color:var(--gh-secondary-label);border:1px solid var(--gh-secondary-border);margin-top:12px}
button.secondary:hover,.button.secondary:hover{color:var(--gh-on-primary)}
.connections{list-style:none;margin:0;padding:0}
.alt-logins>.alt:last-child{margin:16px 0 16px}
@media (max-width:480px){body{padding:0}main{border-radius:0;box-shadow:none;min-height:100vh;padding:24px 16px}}
`;

/** What every page shares (built by `shellFor` in ../render.tsx). */
export interface PageShell {
  branding: PageBranding;
  /** CSP nonce of the one <style> element. */
  nonce: string;
  /** Whose page it is (the application's name): the logo's alt text. */
  brandName?: string;
  /** The tenant's universal-login page template and its variables (../theme/page-template.ts), when it has one. */
  template?: { source: string; vars: Record<string, unknown> };
  /** The page's language, direction and texts (issue 29 point 3). */
  text: PageText;
  /** The tenant's partials (PUT /prompts/{prompt}/partials): prompt → screen → insertion point → text. */
  partials?: Readonly<Record<string, Record<string, Record<string, string>>>>;
}

/** A partial at one of the reference's insertion points, as escaped text (never HTML). */
export const Partial: FC<{ shell: PageShell; prompt: "login" | "signup"; point: string }> = ({ shell, prompt, point }) => {
  const content = shell.partials?.[prompt]?.[prompt]?.[point];
  return content ? (
    <p class="hint" data-insertion-point={point}>
      {content}
    </p>
  ) : null;
};

export interface LayoutProps {
  shell: PageShell;
  /** The document title. */
  title: string;
  wide?: boolean;
  children?: Child;
}

/** The one page shell of universal login: language, viewport, branded colours, a single centred card. */
export const Layout: FC<LayoutProps> = ({ shell, title, wide, children }) => {
  const { branding, nonce, brandName, text } = shell;
  const variables =
    `:root{--gh-primary:${branding.primary};--gh-on-primary:${branding.onPrimary};--gh-page-bg:${branding.pageBackground};` +
    `--gh-link:${branding.primary};--gh-hover:${branding.primary};--gh-secondary-label:${branding.primary};` +
    `--gh-secondary-border:${branding.primary}}`;
  return (
    <html lang={text.lang} dir={text.dir}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{title}</title>
        {/* Safe: STYLE is a constant, `variables` holds only validated hex colours, themeCss only checked values (theme/theme/theme-css.ts). */}
        <style nonce={nonce} dangerouslySetInnerHTML={{ __html: variables + STYLE + (branding.themeCss ?? "") }} />
      </head>
      <body>
        <main class={wide ? "wide" : undefined} aria-labelledby="page-title">
          {branding.logoUrl ? <img class="logo" src={branding.logoUrl} alt={brandName ? text.t("common", "common", "logoAltText", { companyName: brandName }) : text.t("common", "common", "defaultLogoAltText")} /> : null}
          {children}
        </main>
      </body>
    </html>
  );
};

/** An error message block, linked from the fields it concerns by `aria-describedby="form-error"`. */
export const FormError: FC<{ code: string; message: string }> = ({ code, message }) => (
  <p id="form-error" class="error" role="alert" data-error-code={code}>
    {message}
  </p>
);
