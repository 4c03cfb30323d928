import type { BrandingPatch } from "../../../shared/types";
import type { Branding } from "../../../shared/schemas/branding";
import type { Sql } from "../../sql";
import { getSetting, putSetting } from "../core/settings";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";

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
}
