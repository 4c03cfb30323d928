import { z } from "zod";

/**
 * Email templates (`/api/v2/email-templates`, issue 29 point 4), in the reference platform's shapes: one
 * template per name, its `body`, `subject` and `from` in Liquid, the link's `resultUrl` and lifetime, and
 * `enabled`. Gatehouse renders a tenant's template, when it has one and it is enabled, for the emails it
 * sends (src/worker/messaging/email-templates.ts); otherwise the built-in text goes.
 */
export const EMAIL_TEMPLATE_NAMES = [
  "verify_email",
  "verify_email_by_code",
  "auth_email_by_code",
  "reset_email",
  "reset_email_by_code",
  "welcome_email",
  "blocked_account",
  "stolen_credentials",
  "enrollment_email",
  "mfa_oob_code",
  "user_invitation",
  "change_password",
  "password_reset",
  "async_approval",
] as const;

export type EmailTemplateName = (typeof EMAIL_TEMPLATE_NAMES)[number];

export const isEmailTemplateName = (name: string): name is EmailTemplateName => (EMAIL_TEMPLATE_NAMES as readonly string[]).includes(name);

/** Longest template body accepted. @default 100,000 characters */
export const MAX_TEMPLATE_BODY = 100_000;

const httpUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === "https:" || u.protocol === "http:";
    } catch {
      return false;
    }
  }, "must be an absolute http(s) URL");

/** The writable fields; `template` names the template (the path's name on PUT and PATCH). */
const fields = {
  template: z.enum(EMAIL_TEMPLATE_NAMES),
  body: z.string().max(MAX_TEMPLATE_BODY).nullable(),
  // Liquid is allowed in `from` (the reference's `{{ friendly_name }} <support@...>`), so no address check.
  from: z.string().max(1024).nullable(),
  subject: z.string().max(1024).nullable(),
  syntax: z.literal("liquid").nullable(),
  resultUrl: httpUrl.nullable(),
  urlLifetimeInSeconds: z.number().int().min(0).max(31_536_000).nullable(),
  includeEmailInRedirect: z.boolean(),
  enabled: z.boolean().nullable(),
};

/** POST /email-templates (and PUT, which replaces the whole template): `template` required. */
export const createEmailTemplateBody = z.strictObject({
  ...fields,
  body: fields.body.optional(),
  from: fields.from.optional(),
  subject: fields.subject.optional(),
  syntax: fields.syntax.optional(),
  resultUrl: fields.resultUrl.optional(),
  urlLifetimeInSeconds: fields.urlLifetimeInSeconds.optional(),
  includeEmailInRedirect: fields.includeEmailInRedirect.optional(),
  enabled: fields.enabled.optional(),
});
export type CreateEmailTemplateInput = z.infer<typeof createEmailTemplateBody>;

/** PATCH /email-templates/{templateName}: any field; `template`, when given, must be the path's. */
export const patchEmailTemplateBody = createEmailTemplateBody.partial();
export type PatchEmailTemplateInput = z.infer<typeof patchEmailTemplateBody>;

/** A stored template, as the routes answer it (absent fields are omitted). */
export interface EmailTemplateRecord {
  template: EmailTemplateName;
  body?: string | null;
  from?: string | null;
  subject?: string | null;
  syntax?: "liquid" | null;
  resultUrl?: string | null;
  urlLifetimeInSeconds?: number | null;
  includeEmailInRedirect?: boolean;
  enabled?: boolean | null;
}
