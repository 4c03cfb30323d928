import type { Child, FC } from "hono/jsx";
import { CONSOLE_PATH } from "../../../shared/console";
import { type ApiCall, curlOf } from "../api";
import { CONSOLE_STYLE } from "./style";

/** Every console page's frame: nonce for its style (and scripts), the operator, the current tenant. */
export interface Shell {
  nonce: string;
  title: string;
  operator?: { name: string; email: string; csrf: string };
  tenant?: string;
  /** The side navigation entry of this page. */
  section?: string;
  calls?: ApiCall[];
  /** Seconds after which the page reloads itself (a job page the operator chose to watch; no JavaScript). */
  refresh?: number;
  /** Module scripts under /admin/assets (progressive enhancement). */
  scripts?: string[];
  /** An operator who reaches only the tenant's record (a tenant admin through its organization): the nav shows only that. */
  detailsOnly?: boolean;
}

const SECTIONS = [
  ["home", "Home"],
  ["applications", "Applications"],
  ["apis", "APIs"],
  ["users", "Users"],
  ["roles", "Roles"],
  ["organizations", "Organizations"],
  ["connections", "Connections"],
  ["actions", "Actions"],
  ["logs", "Logs"],
  ["try-login", "Try login"],
  ["branding", "Branding"],
  ["protection", "Attack protection"],
  ["webhooks", "Webhooks"],
  ["log-streams", "Log streams"],
  ["domains", "Custom domains"],
  ["keys", "Signing keys"],
  ["details", "Tenant details"],
  ["settings", "Tenant settings"],
] as const;

/** The hidden CSRF field every console form carries. */
export const Csrf: FC<{ token: string }> = ({ token }) => <input type="hidden" name="csrf" value={token} />;

export const Layout: FC<{ shell: Shell; children?: Child }> = ({ shell, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      {shell.refresh ? <meta http-equiv="refresh" content={String(shell.refresh)} /> : null}
      <title>{`${shell.title} · Gatehouse console`}</title>
      <style nonce={shell.nonce}>{CONSOLE_STYLE}</style>
    </head>
    <body>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={`${CONSOLE_PATH}/tenants`}>
          Gatehouse console
        </a>
        {shell.tenant ? (
          <span>
            Tenant: <strong>{shell.tenant}</strong> · <a href={`${CONSOLE_PATH}/tenants`}>Switch tenant</a>
          </span>
        ) : null}
        {shell.operator ? (
          <form method="post" action={`${CONSOLE_PATH}/logout`} class="row">
            <span>{shell.operator.email || shell.operator.name}</span>
            <Csrf token={shell.operator.csrf} />
            <button type="submit">Log out</button>
          </form>
        ) : null}
      </header>
      <div class="layout">
        {shell.tenant ? (
          <nav class="side" aria-label="Tenant">
            <h2>{shell.tenant}</h2>
            <ul>
              {SECTIONS.filter(([key]) => !shell.detailsOnly || key === "details").map(([key, label]) => (
                <li>
                  <a href={`${CONSOLE_PATH}/t/${encodeURIComponent(shell.tenant as string)}/${key}`} aria-current={shell.section === key ? "page" : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        <main id="main">
          {children}
          {shell.calls?.length ? (
            <details class="calls">
              <summary>Show the API calls of this page</summary>
              {shell.calls.map((call) => (
                <pre>{`${curlOf(call)}\n# → ${call.status}`}</pre>
              ))}
            </details>
          ) : null}
        </main>
      </div>
      {(shell.scripts ?? []).map((src) => (
        <script type="module" src={src} nonce={shell.nonce} />
      ))}
    </body>
  </html>
);
