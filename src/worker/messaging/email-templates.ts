/**
 * Every email Gatehouse composes goes through here (issue 29 point 4): the tenant's template of that name,
 * when it has one that is enabled and has a body, rendered with the reference platform's variables
 * (`user` with its `user_metadata`, `application`, `connection`, `organization`, `tenant`, `friendly_name`,
 * `support_email`, `support_url`, `url`, `code`, `request_language`); otherwise the built-in text in the email's
 * language (src/shared/i18n/email-texts.ts). A template that fails to render when the
 * email is sent (it passed the trial render when written, so data made it fail) is logged and the built-in
 * email goes instead: an email is never lost to a template, and never a 5xx.
 */
import type { EmailTemplateName, EmailTemplateRecord } from "../../shared/messaging/email-templates";
import type { MailMessage } from "../../shared/messaging/mail-route";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { UserRecord } from "../../shared/schemas/users";
import type { TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";
import { tenantObject } from "../tenant/stubs";
import { htmlToText, renderLiquid, TemplateError } from "./liquid";
import { sendEmail } from "./senders";

/** What a template can refer to; every field optional (each email fills what it has). */
export interface TemplateFacts {
  config: TenantConfig;
  user?: Partial<Pick<UserRecord, "user_id" | "email" | "email_verified" | "name" | "given_name" | "family_name" | "nickname" | "picture" | "app_metadata" | "user_metadata">> | null;
  client?: Pick<ClientRecord, "client_id" | "name"> & { client_metadata?: Record<string, unknown> | null } | null;
  connection?: string | null;
  organization?: { id: string; name: string; display_name?: string | null; metadata?: Record<string, unknown> | null } | null;
  url?: string;
  code?: string;
  /** The email's language (issue 29 point 2, `emailLanguage`): the template's `request_language`. */
  language?: string;
  /** Extra variables of one email (the invitation's `inviter`, ...). */
  extra?: Record<string, unknown>;
}

/** The built-in email: what goes when the tenant has no usable template. */
export type BuiltInEmail = Omit<MailMessage, "to">;

/** The email to send, and the template it came from (its link settings apply), if any. */
export interface ComposedEmail {
  message: BuiltInEmail & { from?: string };
  template: EmailTemplateRecord | null;
}

const setting = (config: TenantConfig, key: string): string | null => {
  const value = config.settings[key];
  return typeof value === "string" && value !== "" ? value : null;
};

/** The reference platform's template variables. */
export function templateVariables(tenantId: string, facts: TemplateFacts): Record<string, unknown> {
  const { config, user, client, organization } = facts;
  const friendly = setting(config, "friendly_name") ?? tenantId;
  return {
    tenant: tenantId,
    friendly_name: friendly,
    support_email: setting(config, "support_email"),
    support_url: setting(config, "support_url"),
    application: client ? { name: client.name, clientID: client.client_id, metadata: client.client_metadata ?? {} } : { name: friendly },
    ...(facts.connection ? { connection: { name: facts.connection } } : {}),
    user: user
      ? {
          user_id: user.user_id,
          email: user.email,
          email_verified: user.email_verified,
          name: user.name,
          given_name: user.given_name,
          family_name: user.family_name,
          nickname: user.nickname,
          picture: user.picture,
          app_metadata: user.app_metadata ?? {},
          user_metadata: user.user_metadata ?? {},
        }
      : {},
    ...(organization
      ? { organization: { id: organization.id, name: organization.name, display_name: organization.display_name ?? organization.name, metadata: organization.metadata ?? {} } }
      : {}),
    ...(facts.url !== undefined ? { url: facts.url } : {}),
    ...(facts.code !== undefined ? { code: facts.code } : {}),
    ...(facts.language !== undefined ? { request_language: facts.language } : {}),
    ...facts.extra,
  };
}

/** A rendered `from` is used only when it is an address, bare or as `Name <address>`. */
const ADDRESS = /^(?:[^<>\r\n]{0,200}<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

/** Renders a template (subject, body and from) with `vars`; throws TemplateError. */
export async function renderTemplate(template: EmailTemplateRecord, vars: Record<string, unknown>): Promise<BuiltInEmail & { from?: string }> {
  const html = await renderLiquid(template.body ?? "", vars, "html");
  const subject = (await renderLiquid(template.subject ?? "", vars, "plain")).replace(/[\r\n]+/g, " ").trim();
  const from = template.from ? (await renderLiquid(template.from, vars, "plain")).trim() : "";
  return { subject, html, text: htmlToText(html), ...(ADDRESS.test(from) ? { from } : {}) };
}

/** The tenant's template of this name, when it would be used (created, enabled, with a body). */
export async function usableTemplate(c: AppContext, name: EmailTemplateName): Promise<EmailTemplateRecord | null> {
  const template = await tenantObject(c.env, c.var.tenant.id).emailTemplates().get(name);
  return template && template.enabled !== false && template.body ? template : null;
}

/**
 * The email of `name` for these facts: the tenant's enabled template rendered, else `builtIn`. The subject
 * falls back to the built-in one when the template has none.
 */
export async function composeEmail(c: AppContext, name: EmailTemplateName, facts: TemplateFacts, builtIn: BuiltInEmail): Promise<ComposedEmail> {
  const template = await usableTemplate(c, name);
  if (!template) return { message: builtIn, template: null };
  try {
    const rendered = await renderTemplate(template, templateVariables(c.var.tenant.id, facts));
    return { message: { ...rendered, subject: rendered.subject || builtIn.subject }, template };
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    console.warn(`[email-templates] tenant ${c.var.tenant.id} template ${name} failed to render, the built-in email goes: ${err.message}`);
    return { message: builtIn, template };
  }
}

/**
 * The welcome email after a self-service sign-up (the reference platform's `welcome_email`, sent at sign-up
 * when no verification email is): only when the tenant has the template and it is enabled (there is no
 * built-in welcome, so a disabled or absent template sends nothing). A failure is logged, never the sign-up's.
 */
export async function sendWelcomeEmail(c: AppContext, to: string, facts: TemplateFacts): Promise<void> {
  try {
    const template = await usableTemplate(c, "welcome_email");
    if (!template) return;
    const rendered = await renderTemplate(template, templateVariables(c.var.tenant.id, facts));
    await sendEmail(c, { to, ...rendered, subject: rendered.subject || "Welcome" });
  } catch (err) {
    console.warn(`[email-templates] tenant ${c.var.tenant.id}: the welcome email to ${to} was not sent: ${(err as Error).message}`);
  }
}
