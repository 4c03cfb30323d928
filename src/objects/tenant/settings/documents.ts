import { ok } from "../../../shared/errors";
import { settingsDocument } from "../../../shared/schemas/settings/documents";
import { deepMerge, withoutPaths } from "../../../shared/schemas/settings/merge";
import type { Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { audited, emitAudit } from "../core/events";
import { TenantRpc } from "../core/rpc";
import { getSetting, putSetting } from "../core/settings";

/**
 * Settings documents (src/shared/schemas/settings/documents.ts): one JSON value per document in `_settings`
 * under `doc:<key>`, its defaults merged in on read. Secret fields arrive sealed by the worker; the audit
 * event records that they are set, never their ciphertext.
 */

type Doc = Record<string, unknown>;

const storageKey = (key: string) => `doc:${key}`;

export function getDocument(sql: Sql, key: string): Doc {
  return deepMerge(settingsDocument(key).defaults, getSetting<Doc>(sql, storageKey(key), {}));
}

/** The settings documents facade (`stub.settingsDocuments(audit)`). */
export class SettingsDocuments extends TenantRpc {
  get(key: string): Doc {
    return this.read((sql) => getDocument(sql, key));
  }

  /** Merges `patch` over the stored document (configuration: the login flows read some of these). */
  update(key: string, patch: Doc): Doc {
    const secrets = settingsDocument(key).secrets ?? [];
    return this.commit(
      (tx) => {
        const stored = getSetting<Doc>(tx.sql, storageKey(key), {});
        const before = getDocument(tx.sql, key);
        putSetting(tx.sql, storageKey(key), deepMerge(stored, patch));
        const after = getDocument(tx.sql, key);
        audited(tx, this.audit, ok(after), {
          entity: "settings",
          action: "updated",
          id: key,
          before: withoutPaths(before, secrets),
          after: (v) => withoutPaths(v, secrets),
        });
        return after;
      },
      { config: true },
    );
  }

  /** Records a breached password met at sign-up, a password change or a login (`signup_pwd_leak`, ...). */
  recordBreachedPassword(input: { stage: BreachedStage; blocked: boolean; client_id: string | null; user_id: string | null; connection: string; email: string }): void {
    const { log_type, event_type, verb } = BREACHED_EVENTS[input.stage];
    this.core.commit((tx) =>
      emitAudit(tx, this.audit, {
        event_type,
        log_type,
        category: "user_action",
        description: `${input.blocked ? "Blocked" : "Allowed"} ${verb} with a breached password (${input.email}, connection ${input.connection})`,
        client_id: input.client_id,
        user_id: input.user_id,
      }),
    );
  }
}

export type BreachedStage = "pre-user-registration" | "pre-change-password" | "login";
const BREACHED_EVENTS: Record<BreachedStage, { log_type: string; event_type: string; verb: string }> = {
  "pre-user-registration": { log_type: LOG_TYPES.signupBreachedPassword, event_type: "user.signup_breached_password", verb: "sign-up" },
  "pre-change-password": { log_type: LOG_TYPES.resetBreachedPassword, event_type: "user.password_change_breached_password", verb: "password change" },
  login: { log_type: LOG_TYPES.loginBreachedPassword, event_type: "user.login_breached_password", verb: "login" },
};
