/**
 * Email templates (`/api/v2/email-templates`, issue 29 point 4), the reference platform's routes and shapes:
 * POST creates a template (409 when it exists), GET reads it (404 when it was never created), PUT replaces it
 * whole (creating it), PATCH changes the given fields. Before anything is stored, `body`, `subject` and
 * `from` are parsed and trial-rendered with sample values in the sandbox (src/worker/messaging/liquid.ts):
 * a syntax error, a file tag, an unknown filter or a render over the bounds is a 400 naming the property.
 */
import { problem, unwrap } from "../../../shared/errors";
import {
  createEmailTemplateBody,
  type EmailTemplateName,
  type EmailTemplateRecord,
  isEmailTemplateName,
  patchEmailTemplateBody,
} from "../../../shared/messaging/email-templates";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { renderLiquid, TemplateError } from "../../messaging/liquid";
import { configOf } from "../../login/connection";
import { templateVariables } from "../../messaging/email-templates";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/** The path's template name, or 400 for a name the reference platform does not have. */
function nameOf(templateName: string): EmailTemplateName {
  if (!isEmailTemplateName(templateName)) throw problem("unknown_email_template", { template: templateName.slice(0, 64) });
  return templateName;
}

/** Parses and trial-renders each Liquid field with sample values; a failure is a 400 on that property. */
async function checkLiquid(c: AppContext, template: Partial<EmailTemplateRecord>): Promise<void> {
  const vars = templateVariables(c.var.tenant.id, {
    config: await configOf(c),
    user: { user_id: "auth0|sample", email: "someone@example.com", email_verified: false, name: "Sample User", nickname: "sample", app_metadata: {}, user_metadata: {} },
    client: { client_id: "sample_client_id", name: "Sample Application", client_metadata: {} },
    connection: "Username-Password-Authentication",
    organization: { id: "org_sample", name: "sample-org", display_name: "Sample Organization", metadata: {} },
    url: "https://example.com/link?ticket=sample",
    code: "123456",
  });
  for (const property of ["body", "subject", "from"] as const) {
    const source = template[property];
    if (typeof source !== "string") continue;
    try {
      await renderLiquid(source, vars, property === "body" ? "html" : "plain");
    } catch (err) {
      if (err instanceof TemplateError) throw problem("email_template_invalid", { detail: err.message.replaceAll("'", '"'), property });
      throw err;
    }
  }
}

/** `syntax` is always Liquid: stored as such when a body is given without it. */
const withSyntax = <T extends Partial<EmailTemplateRecord>>(t: T): T => (t.body != null && t.syntax == null ? { ...t, syntax: "liquid" } : t);

export const emailTemplateRoutes = [
  defineRoute({
    method: "post",
    path: "/email-templates",
    scope: "create:email_templates",
    summary: "Create an email template (Liquid body, subject and from; resultUrl, urlLifetimeInSeconds, enabled); 409 when it exists",
    body: createEmailTemplateBody,
    status: 200,
    async handler(c, { body }) {
      await checkLiquid(c, body);
      const created = unwrap(await targetTenant(c).emailTemplates(auditContext(c)).create(withSyntax(body)));
      return c.json(created, 200);
    },
  }),
  defineRoute({
    method: "get",
    path: "/email-templates/{templateName}",
    scope: "read:email_templates",
    summary: "An email template by name; 404 when it was never created",
    status: 200,
    async handler(c, { params }) {
      const name = nameOf(params.templateName);
      const template = await targetTenant(c).emailTemplates().get(name);
      if (!template) throw problem("inexistent_email_template", { template: name });
      return c.json(template);
    },
  }),
  defineRoute({
    method: "put",
    path: "/email-templates/{templateName}",
    scope: "update:email_templates",
    summary: "Replace an email template whole (created when absent); `template` must match the path",
    body: createEmailTemplateBody,
    status: 200,
    async handler(c, { body, params }) {
      const name = nameOf(params.templateName);
      if (body.template !== name) throw problem("email_template_name_mismatch", { template: name });
      await checkLiquid(c, body);
      return c.json(await targetTenant(c).emailTemplates(auditContext(c)).replace(withSyntax(body)));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/email-templates/{templateName}",
    scope: "update:email_templates",
    summary: "Change the given fields of an email template; 404 when it was never created",
    body: patchEmailTemplateBody,
    status: 200,
    async handler(c, { body, params }) {
      const name = nameOf(params.templateName);
      if (body.template !== undefined && body.template !== name) throw problem("email_template_name_mismatch", { template: name });
      await checkLiquid(c, body);
      const { template: _name, ...patch } = body;
      return c.json(unwrap(await targetTenant(c).emailTemplates(auditContext(c)).update(name, withSyntax(patch))));
    },
  }),
];
