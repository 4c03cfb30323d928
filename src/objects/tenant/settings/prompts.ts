/**
 * The tenant's universal-login prompts (issue 29 point 3): settings, custom text per prompt and language, and
 * partials, in one `_settings` record (`prompts`) read with the configuration snapshot, so the login pages
 * merge custom text once per configuration version. The worker validates prompt, screen, language and text
 * ids against the catalogue before a write reaches the object.
 */
import type { PromptsRecord, PromptsSettingsPatch } from "../../../shared/i18n/prompts-schema";
import type { Sql } from "../../sql";
import { audited } from "../core/events";
import { ok } from "../../../shared/errors";
import { getSetting, putSetting } from "../core/settings";
import type { AuditContext } from "../../../shared/types";
import type { WriteTx } from "../core/rpc";

const KEY = "prompts";

export function getPrompts(sql: Sql): PromptsRecord {
  return getSetting<PromptsRecord>(sql, KEY, {});
}

type Change = (record: PromptsRecord) => PromptsRecord;

/** One write of the record, audited as `prompts_<part>` (the caller commits it as configuration). */
export function writePrompts(tx: WriteTx, audit: AuditContext, part: string, id: string, change: Change): PromptsRecord {
  const before = getPrompts(tx.sql);
  const after = change(before);
  putSetting(tx.sql, KEY, after);
  audited(tx, audit, ok(after), { entity: `prompts_${part}`, action: "updated", id, before, after: (r) => r });
  return after;
}

/** PATCH /prompts: the given settings replaced; null removes one (its default applies). */
export const settingsChange =
  (patch: PromptsSettingsPatch): Change =>
  (record) => {
    const settings: Record<string, unknown> = { ...record.settings };
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete settings[k];
      else if (v !== undefined) settings[k] = v;
    }
    return { ...record, settings };
  };

/** PUT /prompts/{prompt}/custom-text/{language}: that language's texts of the prompt replaced whole ({} clears them). */
export const customTextChange =
  (prompt: string, language: string, texts: Record<string, Record<string, string>>): Change =>
  (record) => {
    const custom = { ...record.custom_text };
    const languages = { ...custom[prompt] };
    if (Object.keys(texts).length) languages[language] = texts;
    else delete languages[language];
    if (Object.keys(languages).length) custom[prompt] = languages;
    else delete custom[prompt];
    return { ...record, custom_text: custom };
  };

/** PUT /prompts/{prompt}/partials: the prompt's partials replaced whole. */
export const partialsChange =
  (prompt: string, partials: Record<string, Record<string, string>>): Change =>
  (record) => {
    const all = { ...record.partials };
    if (Object.keys(partials).length) all[prompt] = partials;
    else delete all[prompt];
    return { ...record, partials: all };
  };
