import type { Child, FC } from "hono/jsx";
import type { PageBranding } from "../branding";

/**
 * Fixed style sheet. Only the three custom properties vary, and their values come from
 * `pageBranding()` (validated `#rgb`/`#rrggbb`), never from raw tenant strings. The focus ring is dark on
 * the white card whatever the brand colour, so keyboard focus stays visible with any branding.
 */
const STYLE = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:flex-start;justify-content:center;padding:48px 16px;
  background:var(--gh-page-bg);color:#1f2328;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;max-width:400px;background:#fff;border-radius:12px;padding:32px 28px;
  box-shadow:0 1px 3px rgba(0,0,0,.12),0 8px 24px rgba(0,0,0,.06)}
.logo{display:block;max-height:52px;max-width:100%;margin:0 auto 20px}
h1{font-size:1.5rem;margin:0 0 4px;text-align:center}
.subtitle{margin:0 0 24px;text-align:center;color:#57606a}
.field{margin:0 0 16px}
label{display:block;font-weight:600;margin:0 0 6px}
input{width:100%;padding:10px 12px;font:inherit;color:inherit;border:1px solid #8c959f;border-radius:6px;background:#fff}
input[aria-invalid="true"]{border-color:#cf222e}
.hint{margin:6px 0 0;font-size:.875rem;color:#57606a}
.error{margin:0 0 16px;padding:10px 12px;border-radius:6px;background:#ffebe9;border:1px solid #cf222e;color:#82071e}
button,.button{display:block;width:100%;padding:11px 16px;border:0;border-radius:6px;font:inherit;font-weight:600;
  text-align:center;text-decoration:none;cursor:pointer;background:var(--gh-primary);color:var(--gh-on-primary)}
a{color:var(--gh-primary)}
.alt{margin:20px 0 0;text-align:center}
.forgot{margin:-8px 0 16px;font-size:.875rem}
:focus-visible{outline:3px solid #1f2328;outline-offset:2px}
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
.choice-label{display:block;font-weight:600;color:var(--gh-primary)}
.codes{columns:2;margin:0 0 20px;padding-left:1.5em;font:1rem/1.8 ui-monospace,SFMono-Regular,Menlo,monospace}
button.link{background:none;color:var(--gh-primary);text-decoration:underline;width:auto;display:inline;padding:0;font-weight:400}
button.secondary,.button.secondary{background:#fff;color:var(--gh-primary);border:1px solid var(--gh-primary);margin-top:12px}
.connections{list-style:none;margin:0;padding:0}
@media (max-width:480px){body{padding:0}main{border-radius:0;box-shadow:none;min-height:100vh;padding:24px 16px}}
`;

/** What every page shares (built by `shellFor` in ../render.tsx). */
export interface PageShell {
  branding: PageBranding;
  /** CSP nonce of the one <style> element. */
  nonce: string;
  /** Whose page it is (the application's name): the logo's alt text. */
  brandName?: string;
}

export interface LayoutProps {
  shell: PageShell;
  /** The document title. */
  title: string;
  wide?: boolean;
  children?: Child;
}

/** The one page shell of universal login: language, viewport, branded colours, a single centred card. */
export const Layout: FC<LayoutProps> = ({ shell, title, wide, children }) => {
  const { branding, nonce, brandName } = shell;
  const variables =
    `:root{--gh-primary:${branding.primary};--gh-on-primary:${branding.onPrimary};` +
    `--gh-page-bg:${branding.pageBackground}}`;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{title}</title>
        {/* Safe: STYLE is a constant and `variables` holds only validated hex colours. */}
        <style nonce={nonce} dangerouslySetInnerHTML={{ __html: variables + STYLE }} />
      </head>
      <body>
        <main class={wide ? "wide" : undefined} aria-labelledby="page-title">
          {branding.logoUrl ? <img class="logo" src={branding.logoUrl} alt={brandName ? `${brandName} logo` : "Logo"} /> : null}
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
