/**
 * The tenant's universal-login prompts (issue 29 point 3): settings, custom text per prompt and language, and
 * partials, in one `_settings` record (`prompts`) read with the configuration snapshot, so the login pages
 * merge custom text once per configuration version. The worker validates prompt, screen, language and text
 * ids against the catalogue before a write reaches the object.
 */
import type { PromptsRecord, PromptsSettingsPatch } from "../../../shared/schemas/prompts";
import type { Sql } from "../../sql";
import { audited } from "../core/events";
import { ok } from "../../../shared/errors";
import { getSetting, putSetting } from "../core/settings";
import { TenantRpc } from "../core/rpc";

const KEY = "prompts";

export function getPrompts(sql: Sql): PromptsRecord {
  return getSetting<PromptsRecord>(sql, KEY, {});
}

export class Prompts extends TenantRpc {
  get(): PromptsRecord {
    return this.read((sql) => getPrompts(sql));
  }

  /** PATCH /prompts: the given settings replaced; null removes one (its default applies). */
  updateSettings(patch: PromptsSettingsPatch): PromptsRecord {
    return this.write("settings", "prompts", (record) => {
      const settings: Record<string, unknown> = { ...record.settings };
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete settings[k];
        else if (v !== undefined) settings[k] = v;
      }
      return { ...record, settings };
    });
  }

  /** PUT /prompts/{prompt}/custom-text/{language}: that language's texts of the prompt replaced whole ({} clears them). */
  setCustomText(prompt: string, language: string, texts: Record<string, Record<string, string>>): PromptsRecord {
    return this.write("custom_text", `${prompt}/${language}`, (record) => {
      const custom = { ...record.custom_text };
      const languages = { ...custom[prompt] };
      if (Object.keys(texts).length) languages[language] = texts;
      else delete languages[language];
      if (Object.keys(languages).length) custom[prompt] = languages;
      else delete custom[prompt];
      return { ...record, custom_text: custom };
    });
  }

  /** PUT /prompts/{prompt}/partials: the prompt's partials replaced whole. */
  setPartials(prompt: string, partials: Record<string, Record<string, string>>): PromptsRecord {
    return this.write("partials", prompt, (record) => {
      const all = { ...record.partials };
      if (Object.keys(partials).length) all[prompt] = partials;
      else delete all[prompt];
      return { ...record, partials: all };
    });
  }

  private write(part: string, id: string, change: (record: PromptsRecord) => PromptsRecord): PromptsRecord {
    return this.commit(
      (tx) => {
        const before = getPrompts(tx.sql);
        const after = change(before);
        putSetting(tx.sql, KEY, after);
        audited(tx, this.audit, ok(after), { entity: `prompts_${part}`, action: "updated", id, before, after: (r) => r });
        return after;
      },
      { config: true },
    );
  }
}
