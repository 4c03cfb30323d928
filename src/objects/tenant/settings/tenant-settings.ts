import type { TenantSettingsPatch } from "../../../shared/schemas/tenant-settings";
import type { Sql } from "../../sql";
import { getSetting, putSetting } from "../core/settings";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";
import type { PromptsRecord, PromptsSettingsPatch } from "../../../shared/i18n/prompts-schema";
import { customTextChange, getPrompts, partialsChange, settingsChange, writePrompts } from "./prompts";

/** Settings key of the tenant settings object (configuration: every token request reads it from the snapshot). */
const KEY = "tenant";

export function getTenantSettings(sql: Sql): Record<string, unknown> {
  return getSetting<Record<string, unknown>>(sql, KEY, {});
}

/** Replaces the given fields; a null value removes its field. */
export function updateTenantSettings(sql: Sql, patch: TenantSettingsPatch): Record<string, unknown> {
  const next = { ...getTenantSettings(sql) };
  for (const [key, value] of Object.entries(patch)) {
    // Flags merge (the reference platform's PATCH keeps flags it was not sent).
    if (key === "flags" && value && typeof value === "object") next.flags = { ...(next.flags as object | undefined), ...value };
    else if (value === null || value === "") delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  putSetting(sql, KEY, next);
  return next;
}

/** The tenant settings facade (`stub.tenantSettings()`): configuration. */
export class TenantSettingsRpc extends TenantRpc {
  get(): Record<string, unknown> {
    return this.read((sql) => getTenantSettings(sql));
  }

  update(patch: TenantSettingsPatch): Record<string, unknown> {
    return this.commit((tx) => {
      const before = getTenantSettings(tx.sql);
      const after = updateTenantSettings(tx.sql, patch);
      audited(tx, this.audit, { ok: true, value: after }, { entity: "tenant_settings", action: "updated", id: "settings", before, after: (s) => s });
      return after;
    }, { config: true });
  }

  /** Universal-login prompts (`/api/v2/prompts`, issue 29 point 3): settings, custom text and partials, one record. */
  prompts(): PromptsRecord {
    return this.read((sql) => getPrompts(sql));
  }

  updatePrompts(patch: PromptsSettingsPatch): PromptsRecord {
    return this.commit((tx) => writePrompts(tx, this.audit, "settings", "prompts", settingsChange(patch)), { config: true });
  }

  setCustomText(prompt: string, language: string, texts: Record<string, Record<string, string>>): PromptsRecord {
    return this.commit((tx) => writePrompts(tx, this.audit, "custom_text", `${prompt}/${language}`, customTextChange(prompt, language, texts)), { config: true });
  }

  setPartials(prompt: string, partials: Record<string, Record<string, string>>): PromptsRecord {
    return this.commit((tx) => writePrompts(tx, this.audit, "partials", prompt, partialsChange(prompt, partials)), { config: true });
  }
}
