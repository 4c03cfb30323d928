import type { BrandingPatch } from "../../../shared/types";
import type { Branding } from "../../../shared/schemas/branding";
import type { Sql } from "../../sql";
import { getSetting, putSetting } from "../core/settings";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";
import type { Result } from "../../../shared/errors";
import type { BrandingTheme, ThemeInput } from "../../../shared/schemas/branding";
import { createTheme, deleteLoginTemplate, deleteTheme, getLoginTemplate, getTheme, putLoginTemplate, updateTheme } from "./branding-theme";

/** Settings key of the branding object (configuration: read by the login pages from the snapshot). */
const KEY = "branding";

export function getBranding(sql: Sql): Branding {
  return getSetting<Branding>(sql, KEY, {});
}

/** Applies one level of a patch: a null value removes its key, undefined leaves it. */
function apply<T extends object>(current: T, patch: Record<string, unknown>): T {
  const next = { ...current } as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next as T;
}

/** Fields replaced; `colors` and `font` merged key by key (an emptied group disappears). */
export function updateBranding(sql: Sql, patch: BrandingPatch): Branding {
  const current = getBranding(sql);
  const { colors, font, ...urls } = patch;
  const next = apply(current, urls);
  for (const [key, group] of [["colors", colors], ["font", font]] as const) {
    if (group === undefined) continue;
    const merged = group === null ? {} : apply(current[key] ?? {}, group);
    if (Object.keys(merged).length) next[key] = merged;
    else delete next[key];
  }
  putSetting(sql, KEY, next);
  return next;
}

/** The branding facade (`stub.branding()`): configuration, read by the login pages from the snapshot. */
export class BrandingRpc extends TenantRpc {
  get(): Branding {
    return this.read((sql) => getBranding(sql));
  }

  update(patch: BrandingPatch): Branding {
    return this.commit((tx) => {
      const before = getBranding(tx.sql);
      const after = updateBranding(tx.sql, patch);
      audited(tx, this.audit, { ok: true, value: after }, { entity: "branding", action: "updated", id: "branding", before, after: (b) => b });
      return after;
    }, { config: true });
  }

  /** The tenant's one theme (GET /branding/themes/default and /{themeId}), null when none was created. */
  theme(): BrandingTheme | null {
    return this.read((sql) => getTheme(sql));
  }

  createTheme(themeId: string, input: ThemeInput): Result<BrandingTheme> {
    return this.commit((tx) => createTheme(tx, this.audit, themeId, input), { config: true });
  }

  updateTheme(themeId: string, input: ThemeInput): Result<BrandingTheme> {
    return this.commit((tx) => updateTheme(tx, this.audit, themeId, input), { config: true });
  }

  deleteTheme(themeId: string): Result<null> {
    return this.commit((tx) => deleteTheme(tx, this.audit, themeId), { config: true });
  }

  /** The universal-login page template (GET|PUT|DELETE /branding/templates/universal-login). */
  loginTemplate(): string | null {
    return this.read((sql) => getLoginTemplate(sql));
  }

  putLoginTemplate(template: string): { created: boolean } {
    return this.commit((tx) => putLoginTemplate(tx, this.audit, template), { config: true });
  }

  deleteLoginTemplate(): void {
    this.commit((tx) => deleteLoginTemplate(tx, this.audit), { config: true });
  }
}
