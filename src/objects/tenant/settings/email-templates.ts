/**
 * The tenant's email templates (`/api/v2/email-templates`, issue 29 point 4): one `_settings` record per
 * template name (`email_template:<name>`), so a template is written whole in one commit and read by the
 * worker when it composes an email. The worker validates the Liquid before the write reaches the object.
 */
import { fail, ok, type Result } from "../../../shared/errors";
import type { EmailTemplateName, EmailTemplateRecord } from "../../../shared/messaging/email-templates";
import type { Sql } from "../../sql";
import { audited } from "../core/events";
import { getSetting, putSetting } from "../core/settings";
import { TenantRpc } from "../core/rpc";

const key = (name: EmailTemplateName) => `email_template:${name}`;

export function getEmailTemplate(sql: Sql, name: EmailTemplateName): EmailTemplateRecord | null {
  return getSetting<EmailTemplateRecord | null>(sql, key(name), null);
}

/** Drops undefined fields: what is stored is what the routes answer. */
const compact = (record: EmailTemplateRecord): EmailTemplateRecord =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as EmailTemplateRecord;

export class EmailTemplates extends TenantRpc {
  get(name: EmailTemplateName): EmailTemplateRecord | null {
    return this.read((sql) => getEmailTemplate(sql, name));
  }

  /** POST: 409 when the template exists. */
  create(record: EmailTemplateRecord): Result<EmailTemplateRecord> {
    return this.commit((tx) => {
      const result = getEmailTemplate(tx.sql, record.template) ? fail("email_template_exists", { template: record.template }) : ok(compact(record));
      if (result.ok) putSetting(tx.sql, key(record.template), result.value);
      return audited(tx, this.audit, result, { entity: "email_template", action: "created", id: record.template, after: (t) => t });
    });
  }

  /** PUT: the whole template replaced (created when absent). */
  replace(record: EmailTemplateRecord): EmailTemplateRecord {
    return this.commit((tx) => {
      const before = getEmailTemplate(tx.sql, record.template) ?? undefined;
      const after = compact(record);
      putSetting(tx.sql, key(record.template), after);
      audited(tx, this.audit, ok(after), { entity: "email_template", action: "updated", id: record.template, before, after: (t) => t });
      return after;
    });
  }

  /** PATCH: the given fields replaced; 404 when the template was never created. */
  update(name: EmailTemplateName, patch: Partial<EmailTemplateRecord>): Result<EmailTemplateRecord> {
    return this.commit((tx) => {
      const before = getEmailTemplate(tx.sql, name);
      const result = before ? ok(compact({ ...before, ...patch, template: name })) : fail("inexistent_email_template", { template: name });
      if (result.ok) putSetting(tx.sql, key(name), result.value);
      return audited(tx, this.audit, result, { entity: "email_template", action: "updated", id: name, before: before ?? undefined, after: (t) => t });
    });
  }
}
