/**
 * The universal-login theme (`/api/v2/branding/themes`) and page template
 * (`/api/v2/branding/templates/universal-login`), issue 29 point 5, in the reference platform's shapes: one
 * theme per tenant (a second create is a 409), `GET /themes/default` 404 while there is none (deploy tools
 * read that as "no theme"), PATCH sends the whole theme. The template is Liquid with one `auth0:head` and at
 * least one `auth0:widget` tag; PUT takes `{"template": "..."}`, a JSON string or a text/html body, parses
 * and trial-renders it in the sandbox before it is stored.
 */
import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { randomId } from "../../../shared/crypto/random";
import { themeBody } from "../../../shared/schemas/branding";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { MAX_BODY_BYTES, readBodyText } from "../../http/body";
import { TemplateError } from "../../messaging/liquid";
import { compileTemplate, hasRequiredTags, renderInTemplate } from "../../login/theme/page-template";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/** The longest page template accepted. @default 100,000 characters (the reference's limit) */
const MAX_TEMPLATE_CHARS = 100_000;

const themeId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
const checkId = (id: string) => {
  if (!themeId.safeParse(id).success) throw problem("inexistent_theme");
  return id;
};

/** The template of a PUT body: `{"template": "..."}`, a JSON string, or the text/html body itself. */
async function templateOf(c: AppContext): Promise<string> {
  const type = c.req.header("content-type") ?? "";
  const text = await readBodyText(c.req.raw, () => problem("payload_too_large", { bytes: MAX_BODY_BYTES }));
  let template: unknown = text;
  if (/^application\/(.+\+)?json\b/i.test(type)) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw problem("body_not_json", { detail: (error as Error).message });
    }
    template = typeof data === "string" ? data : (data as { template?: unknown } | null)?.template;
  } else if (!/^text\/(html|plain)\b/i.test(type)) {
    throw problem("unsupported_media_type");
  }
  if (typeof template !== "string" || template.trim() === "") throw problem("invalid_body", { detail: "template must be a non-empty string" });
  if (template.length > MAX_TEMPLATE_CHARS) throw problem("invalid_body", { detail: `template must be at most ${MAX_TEMPLATE_CHARS} characters` });
  return template;
}

/** Parses and trial-renders the template around a sample page: a failure is a 400 before anything is stored. */
async function checkTemplate(template: string): Promise<void> {
  if (!hasRequiredTags(template)) throw problem("login_template_tags");
  try {
    compileTemplate(template);
  } catch (err) {
    if (err instanceof TemplateError) throw problem("login_template_invalid", { detail: err.message.replaceAll("'", '"') });
    throw err;
  }
  const sample = '<html lang="en"><head><title>Log in</title></head><body><main>sample</main></body></html>';
  const vars = { application: { name: "Sample Application" }, prompt: { name: "login", screen: { name: "login" } }, tenant: { name: "sample" } };
  const rendered = renderInTemplate(template, sample, vars);
  if (rendered === null) throw problem("login_template_invalid", { detail: "the template does not render within the limits (nodes, memory, output size) or drops a required tag" });
}

export const brandingThemeRoutes = [
  defineRoute({
    method: "post",
    path: "/branding/themes",
    scope: "create:branding",
    summary: "Create the tenant's universal-login theme (borders, colors, fonts, page_background, widget); 409 when one exists",
    body: themeBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body }) {
      const theme = unwrap(await targetTenant(c).branding(auditContext(c)).createTheme(randomId("", 25).toLowerCase(), body));
      return c.json(theme, 200);
    },
  }),
  defineRoute({
    method: "get",
    path: "/branding/themes/default",
    scope: "read:branding",
    summary: "The tenant's theme; 404 while none was created",
    status: 200,
    async handler(c) {
      const theme = await targetTenant(c).branding().theme();
      if (!theme) throw problem("inexistent_default_theme");
      return c.json(theme);
    },
  }),
  defineRoute({
    method: "get",
    path: "/branding/themes/{themeId}",
    scope: "read:branding",
    summary: "A theme by id",
    status: 200,
    async handler(c, { params }) {
      const theme = await targetTenant(c).branding().theme();
      if (!theme || theme.themeId !== checkId(params.themeId)) throw problem("inexistent_theme");
      return c.json(theme);
    },
  }),
  defineRoute({
    method: "patch",
    path: "/branding/themes/{themeId}",
    scope: "update:branding",
    summary: "Update the theme (the whole theme, as on create)",
    body: themeBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body, params }) {
      return c.json(unwrap(await targetTenant(c).branding(auditContext(c)).updateTheme(checkId(params.themeId), body)));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/branding/themes/{themeId}",
    scope: "delete:branding",
    summary: "Delete the theme (the login pages go back to the branding settings)",
    status: 204,
    invalidatesConfig: true,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).branding(auditContext(c)).deleteTheme(checkId(params.themeId)));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/branding/templates/universal-login",
    scope: "read:branding",
    summary: "The universal-login page template (`{body}`); 404 while none is set",
    status: 200,
    async handler(c) {
      const body = await targetTenant(c).branding().loginTemplate();
      if (body === null) throw problem("inexistent_branding_template");
      return c.json({ body });
    },
  }),
  defineRoute({
    method: "put",
    path: "/branding/templates/universal-login",
    scope: "update:branding",
    summary: "Set the universal-login page template (Liquid with one auth0:head and at least one auth0:widget tag): 201 created, 200 replaced",
    status: 201,
    invalidatesConfig: true,
    async handler(c) {
      const template = await templateOf(c);
      await checkTemplate(template);
      const { created } = await targetTenant(c).branding(auditContext(c)).putLoginTemplate(template);
      return c.body(null, created ? 201 : 200);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/branding/templates/universal-login",
    scope: "delete:branding",
    summary: "Delete the universal-login page template (the plain pages again)",
    status: 204,
    invalidatesConfig: true,
    async handler(c) {
      await targetTenant(c).branding(auditContext(c)).deleteLoginTemplate();
      return c.body(null, 204);
    },
  }),
];
