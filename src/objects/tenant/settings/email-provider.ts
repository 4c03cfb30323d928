/**
 * The tenant's email provider (`/api/v2/emails/provider`), one record in `_settings`. The worker seals the
 * API key before it reaches the object; audit events never hold it.
 */
import { fail, ok, type Result } from "../../../shared/errors";
import type { EmailProviderRecord } from "../../../shared/schemas/email-provider";
import type { Sql } from "../../sql";
import { getSetting, putSetting } from "../core/settings";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";

const KEY = "email_provider";

export function getEmailProvider(sql: Sql): EmailProviderRecord | null {
  return getSetting<EmailProviderRecord | null>(sql, KEY, null);
}

/** What an audit event may show: everything but the sealed key. */
const view = ({ api_key_enc: _key, ...rest }: EmailProviderRecord) => rest;

/** The fields a write sets; the object stamps the times. */
export type EmailProviderWrite = Omit<EmailProviderRecord, "created_at" | "updated_at">;

export class EmailProviders extends TenantRpc {
  get(): EmailProviderRecord | null {
    return this.read((sql) => getEmailProvider(sql));
  }

  /** Creates the provider (409 when one is configured). */
  create(record: EmailProviderWrite): Result<EmailProviderRecord> {
    return this.commit((tx) => {
      const result: Result<EmailProviderRecord> = getEmailProvider(tx.sql)
        ? fail("email_provider_conflict")
        : ok({ ...record, created_at: new Date(tx.now).toISOString(), updated_at: new Date(tx.now).toISOString() });
      if (result.ok) putSetting(tx.sql, KEY, result.value);
      return audited(tx, this.audit, result, { entity: "email_provider", action: "created", id: "email_provider", after: view });
    });
  }

  /** Changes the given fields of the configured provider (404 when none). */
  update(patch: Partial<EmailProviderWrite>): Result<EmailProviderRecord> {
    return this.commit((tx) => {
      const before = getEmailProvider(tx.sql);
      const result: Result<EmailProviderRecord> = before
        ? ok({ ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)), updated_at: new Date(tx.now).toISOString() })
        : fail("inexistent_email_provider");
      if (result.ok) putSetting(tx.sql, KEY, result.value);
      return audited(tx, this.audit, result, { entity: "email_provider", action: "updated", id: "email_provider", ...(before ? { before: view(before) } : {}), after: view });
    });
  }

  delete(): Result<true> {
    return this.commit((tx) => {
      const before = getEmailProvider(tx.sql);
      if (before) tx.sql.run`DELETE FROM _settings WHERE key = ${KEY}`;
      const result: Result<true> = before ? ok(true) : fail("inexistent_email_provider");
      return audited(tx, this.audit, result, { entity: "email_provider", action: "deleted", id: "email_provider", ...(before ? { before: view(before) } : {}) });
    });
  }
}
