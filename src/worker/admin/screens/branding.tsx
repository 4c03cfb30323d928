import { THEME_REQUIRED_COLOURS } from "../../../shared/schemas/branding";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { numeric, type Outcome, outcomeOf, readStatus, statusOf, tenantOf } from "../pages/outcome";
import { ApiError, Field, Notice, str, tenantPath } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";
import { tenantIssuer } from "./applications";
import { DEFAULT_THEME, type Theme } from "./branding-theme";
import { LoginPreview } from "./branding-preview";

interface Client {
  client_id: string;
  name: string;
  app_type?: string;
  callbacks?: string[];
}

const THEME_PATH = "/branding/themes";
const TEMPLATE_PATH = "/branding/templates/universal-login";

/** "primary_button" → "Primary button". */
const labelOf = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replaceAll("_", " ");

/** The tenant's real login page for an application (opened in a new tab: login pages refuse to be framed). */
function loginUrl(issuer: string, tenant: string, client: Client): string {
  const params = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: client.callbacks?.[0] ?? "",
    scope: "openid profile",
    prompt: "login",
  });
  return `${tenantIssuer(issuer, tenant)}authorize?${params}`;
}

/** GET /admin/t/:tenant/branding: the theme (colours, fonts), the page template, and a preview. */
export async function brandingScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const [themeRead, templateRead, clients] = await Promise.all([
    c.var.api.get<Theme>(tenant, `${THEME_PATH}/default`),
    c.var.api.get<{ body: string }>(tenant, TEMPLATE_PATH),
    c.var.api.get<{ clients: Client[] }>(tenant, "/clients", { per_page: 50, include_totals: true, fields: "client_id,name,app_type,callbacks" }),
  ]);
  // 404 is "none yet" for both (the reference platform's answer); anything else is an error to show.
  const theme = themeRead.ok ? themeRead.body : DEFAULT_THEME;
  const template = templateRead.ok ? templateRead.body.body : "";
  const readError = [themeRead, templateRead, clients].find((r) => !r.ok && r.status !== 404)?.error;
  const interactive = (clients.ok ? clients.body.clients : []).filter((x) => x.app_type !== "non_interactive" && x.callbacks?.length);
  const base = tenantPath(tenant, "/branding");
  const csrf = c.var.operator.csrf;
  const mayTheme = can(c, themeRead.ok ? "update:branding" : "create:branding");
  const mayTemplate = can(c, "update:branding");
  const colourFields = (
    <fieldset disabled={!mayTheme} class="plain">
      <legend>Colours</legend>
      <div class="grid2">
        {[...THEME_REQUIRED_COLOURS].map((key) => (
          <Field name={`colors.${key}`} label={labelOf(key)} value={theme.colors[key]} />
        ))}
        <Field name="page_background" label="Page background" value={theme.page_background.background_color} />
      </div>
    </fieldset>
  );
  const fontFields = (
    <fieldset disabled={!mayTheme} class="plain">
      <legend>Fonts and logo</legend>
      <Field name="font_url" label="Font URL" value={theme.fonts.font_url} hint="An https URL of a font file, or empty for the system font." />
      <Field name="reference_text_size" label="Base text size (px)" type="number" value={String(theme.fonts.reference_text_size)} hint="12 to 24." />
      <Field name="logo_url" label="Logo URL" value={theme.widget.logo_url} hint="An https URL, or empty for none." />
    </fieldset>
  );
  return sendConsolePage(
    c,
    shellOf(c, "Branding", { tenant, section: "branding" }),
    <>
      <h1>Branding</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? readError} />
      <h2>Preview</h2>
      <div class="card">
        <LoginPreview theme={theme} tenant={tenant} />
        {interactive.length ? (
          <ul>
            {interactive.slice(0, 5).map((x) => (
              <li>
                <a href={loginUrl(c.var.settings.issuer, tenant, x)} target="_blank" rel="noopener noreferrer">
                  Open the real login page of {x.name} (new tab)
                </a>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">Create an application with a callback URL to open the tenant's real login page from here.</p>
        )}
      </div>
      <h2>Theme{themeRead.ok ? "" : " (defaults: no theme saved yet)"}</h2>
      {mayTheme ? (
        <form method="post" action={`${base}/theme`} class="card">
          <Csrf token={csrf} />
          {colourFields}
          {fontFields}
          <button type="submit">Save theme</button>
        </form>
      ) : (
        <div class="card">
          {colourFields}
          {fontFields}
        </div>
      )}
      <h2>Login page template</h2>
      {mayTemplate ? (
        <form method="post" action={`${base}/template`} class="card">
          <Csrf token={csrf} />
          <div class="field">
            <label for="f-template">Template (Liquid)</label>
            <textarea id="f-template" name="template" class="code" aria-describedby="h-template">
              {template}
            </textarea>
            <p class="hint" id="h-template">
              A whole HTML page with one {"{%- auth0:head -%}"} in its head and {"{%- auth0:widget -%}"} where the login form goes. Empty uses the built-in page.
            </p>
          </div>
          <button type="submit">Save template</button>
        </form>
      ) : (
        <pre>{template || "No template: the built-in page is used."}</pre>
      )}
    </>,
    outcome.status ?? readStatus(...[themeRead, templateRead, clients].filter((r) => r.status !== 404)),
  );
}

/** POST .../branding/theme: the stored theme (or the defaults) with the form's values, PATCHed or POSTed whole. */
export async function saveTheme(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const form = await c.req.parseBody();
  const current = await c.var.api.get<Theme>(tenant, `${THEME_PATH}/default`);
  if (!current.ok && current.status !== 404) return brandingScreen(c, { error: current.error, status: statusOf(current.status) });
  // A stored theme without a name reads back `displayName: ""`, which the API refuses on the way in.
  const { themeId, displayName, ...rest } = current.ok ? current.body : { themeId: "", ...DEFAULT_THEME };
  const stored = { ...rest, ...(displayName ? { displayName } : {}) };
  const colors = { ...stored.colors };
  for (const key of THEME_REQUIRED_COLOURS) {
    const value = str(form[`colors.${key}`]).trim();
    if (value) colors[key] = value;
  }
  const size = str(form.reference_text_size).trim();
  const body = {
    ...stored,
    colors,
    fonts: { ...stored.fonts, font_url: str(form.font_url).trim(), ...(size ? { reference_text_size: numeric(size) } : {}) },
    page_background: { ...stored.page_background, background_color: str(form.page_background).trim() || stored.page_background.background_color },
    widget: { ...stored.widget, logo_url: str(form.logo_url).trim() },
  };
  const saved = current.ok ? await c.var.api.patch(tenant, `${THEME_PATH}/${encodeURIComponent(themeId)}`, body) : await c.var.api.post(tenant, THEME_PATH, body);
  return brandingScreen(c, outcomeOf(saved, "Theme saved."));
}

/** POST .../branding/template: PUT /branding/templates/universal-login, or DELETE when the field is empty. */
export async function saveTemplate(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const template = str((await c.req.parseBody()).template);
  if (!template.trim()) {
    const removed = await c.var.api.delete(tenant, TEMPLATE_PATH);
    return brandingScreen(c, removed.status === 404 ? { notice: "No template to remove." } : outcomeOf(removed, "Template removed: the built-in page is used."));
  }
  return brandingScreen(c, outcomeOf(await c.var.api.put(tenant, TEMPLATE_PATH, { template }), "Template saved."));
}
